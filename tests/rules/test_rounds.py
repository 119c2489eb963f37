"""Tournaments over rounds (RULES.md §4), ruling by ruling: the draw of each round's tables, the places' points, the
matchpoints of a duplicate round, the standings, and the seeds nobody chooses — pure, from ``service.rules.rounds``."""

from __future__ import annotations

import random

import pytest

from service.rules import rounds
from service.rules.rounds.standings import SeatResult, TableResult
from service.sim.tournament import simulate_tournament

SEED = bytes(range(32))


def _repeats(draws: list[rounds.Draw]) -> int:
    met = rounds.met_of(draws[:-1])
    return sum(len(met.get(p, frozenset()) & set(t.players)) for t in draws[-1].tables for p in t.players)


def test_as_few_tables_as_seat_everyone_with_the_entrants_spread_evenly():
    assert rounds.table_sizes(24, 4) == [4] * 6
    assert rounds.table_sizes(22, 4) == [4, 4, 4, 4, 3, 3]
    assert rounds.table_sizes(5, 4) == [3, 2]
    with pytest.raises(ValueError):
        rounds.table_sizes(0, 4)


def test_round_one_is_drawn_at_random_from_the_seed_and_seats_everyone_once_a_short_table_filled_with_bots():
    entrants = [f"p{i:02d}" for i in range(22)]
    draw = rounds.draw_round(SEED, 1, entrants, 4)
    assert draw == rounds.draw_round(SEED, 1, list(reversed(entrants)), 4)  # the order of entry changes nothing
    assert draw != rounds.draw_round(bytes(32), 1, entrants, 4)  # another seed, another draw
    seated = [p for t in draw.tables for p in t.players]
    assert sorted(seated) == entrants and all(len(t.seats) == 4 for t in draw.tables)
    assert sorted(t.seats.count(None) for t in draw.tables) == [0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("trial", range(20))
def test_later_rounds_seat_close_standings_together_and_never_repeat_a_table_mate_where_the_numbers_allow(trial):
    """24 entrants at tables of four over four rounds: a draw with no repeated table-mate exists every round, and the
    draw finds it; the table of the leader holds the best placed who fit."""
    rnd = random.Random(trial)
    entrants = [f"p{i:02d}" for i in range(24)]
    draws = [rounds.draw_round(SEED, 1, entrants, 4)]
    for r in range(2, 5):
        ranks = dict(zip(entrants, rnd.sample(range(1, 25), 24)))  # nobody level: the leader is one player
        draws.append(rounds.draw_round(SEED, r, entrants, 4, ranks, rounds.met_of(draws)))
        assert _repeats(draws) == 0
        leader = min(entrants, key=lambda p: ranks[p])
        first = next(t for t in draws[-1].tables if leader in t.players)
        assert first.table == 0


def test_where_a_repeat_cannot_be_avoided_the_draw_takes_the_fewest():
    entrants = [f"p{i}" for i in range(8)]
    draws = [rounds.draw_round(SEED, 1, entrants, 4)]
    draws.append(rounds.draw_round(SEED, 2, entrants, 4, {p: 1 for p in entrants}, rounds.met_of(draws)))
    assert _repeats(draws) == 2 * 4  # two tables of four from two: each table holds two pairs who met, counted twice


def test_a_place_is_worth_the_seats_below_it_and_tied_places_share():
    assert rounds.place_points([1, 2, 3, 4]) == [3, 2, 1, 0]
    assert rounds.place_points([1, 2, 2, 4]) == [3, 1.5, 1.5, 0]
    assert rounds.place_points([2, 1]) == [0, 1]
    assert rounds.place_points([1, 1, 1]) == [1, 1, 1]


def _table(table: int, scores: list[int]) -> TableResult:
    return TableResult(round=1, table=table, game_id=f"g{table}", seats=tuple(
        SeatResult(seat=s, player_id=f"t{table}s{s}", rank=1, score=score, points=0.0) for s, score in enumerate(scores)))


def test_a_duplicate_round_compares_each_player_with_those_dealt_the_same_seat():
    """One matchpoint per player of the same dealt seat beaten on score, half per tie — never against a table-mate."""
    results = [_table(0, [10, 50]), _table(1, [20, 50]), _table(2, [10, 90])]
    mp = rounds.matchpoints(results)
    assert [mp[(t, 0)] for t in range(3)] == [0.5, 2.0, 0.5]
    assert [mp[(t, 1)] for t in range(3)] == [0.5, 0.5, 2.0]


def test_standings_rank_by_points_then_score_and_level_players_share_a_rank():
    results = [_table(0, [10, 50]), _table(1, [10, 50])]
    names = {f"t{t}s{s}": f"n{t}{s}" for t in range(2) for s in range(2)}
    table = rounds.standings(names, [results], duplicate=True)
    assert [(s.rank, s.player_id, s.points) for s in table] == [(1, "t0s1", 0.5), (1, "t1s1", 0.5), (3, "t0s0", 0.5),
                                                               (3, "t1s0", 0.5)]
    assert rounds.standings(names, [], duplicate=False)[0].rank == 1  # before round 1, everyone is level


def test_the_tournament_seed_combines_every_entrants_seed_whatever_the_order_and_rounds_differ():
    seeds = {"p_b": bytes([2]) * 32, "p_a": bytes([1]) * 32}
    one = rounds.tournament_seed(SEED, seeds)
    assert one == rounds.tournament_seed(SEED, dict(reversed(list(seeds.items()))))
    assert one != rounds.tournament_seed(SEED, {**seeds, "p_a": bytes([3]) * 32})  # any entrant changes it
    assert rounds.round_seed(one, 1) != rounds.round_seed(one, 2)
    assert rounds.entrant_seed(SEED, "p_a") != rounds.entrant_seed(SEED, "p_b")


def test_a_duplicate_round_deals_every_table_the_same_cards_and_no_table_reveals_the_seed():
    """Every table of a duplicate round is dealt from the round's seed: the first hands dealt are equal seat by seat,
    and no game ends with ``seed_revealed`` (its tournament reveals it once the round is over)."""
    entrants = {f"p{i}": "greedy" for i in range(8)}
    played = simulate_tournament("free-parking", entrants, 1, 4, SEED, duplicate=True, options={"mode": "tournament"})
    assert len(played.results[0]) == 2
    assert all(s.matchpoints is not None for st in played.standings for s in st.rounds)
    assert sum(s.points for s in played.standings) == 8 * 1 / 2  # each pair of a dealt seat shares one point
    plain = simulate_tournament("free-parking", entrants, 1, 4, SEED, options={"mode": "tournament"})
    assert sum(s.points for s in plain.standings) == 2 * (3 + 2 + 1 + 0)


@pytest.mark.parametrize("kind,options", [("free-parking", None), ("monopoly", {"max_rounds": 10})])
def test_a_duplicate_rounds_table_ends_without_revealing_its_seed_and_any_other_reveals_it(kind, options):
    from service.sim.games import new_game, play

    for seeding, revealed in (("duplicate", False), ("fixed", True)):
        bots = ["greedy", "greedy"] if kind == "free-parking" else ["strategic", "strategic"]
        sim = new_game(kind, 2, SEED, f"g_{seeding}", bots, options=options, seeding=seeding)
        list(play(sim, bots, random.Random(0)))
        assert sim.game.rules.status_of(sim.game.state) == "finished"
        assert any(e.type == "seed_revealed" for e in sim.envelopes) is revealed, seeding
