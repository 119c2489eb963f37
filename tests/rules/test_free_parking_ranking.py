"""The ranking across a tournament's tables: table winners first, then points; level players share a rank and the
next one skips (1, 2, 2, 4); inside a tie, by table then name; rounds won are the rounds whose bonus a player took."""

from __future__ import annotations

from service.rules.free_parking.ranking import ranking
from service.rules.free_parking.standings import PlayerStanding, RoundScore, TableStanding


def _player(name: str, *bonuses_and_scores: tuple[int, int], winner: bool = False) -> PlayerStanding:
    rounds, total = [], 0
    for n, (score, bonus) in enumerate(bonuses_and_scores, start=1):
        total += score
        rounds.append(RoundScore(round=n, seat=0, score=score, bonus=bonus, total=total))
    return PlayerStanding(player_id=f"p_{name.lower()}", name=name, rounds=rounds, total=total, winner=winner)


def test_winners_first_then_points_ties_share_a_rank_and_the_next_skips():
    tables = [
        (0, TableStanding(game_id="g-0", players=[_player("Di", (120, 0)), _player("Ann", (150, 25), (60, 25), winner=True)])),
        (1, TableStanding(game_id="g-1", players=[_player("Cy", (95, 25), (25, 0)), _player("Bo", (300, 25), winner=True),
                                                  _player("Ed", (-10, 0))])),
    ]
    ranked = ranking(tables)
    assert [(r.rank, r.name, r.table, r.total) for r in ranked] == [
        (1, "Bo", 1, 300), (2, "Ann", 0, 210), (3, "Di", 0, 120), (3, "Cy", 1, 120), (5, "Ed", 1, -10),
    ]  # fmt: skip
    assert [r.rounds_won for r in ranked] == [1, 2, 0, 1, 0]
    assert [r.rounds for r in ranked] == [1, 2, 1, 2, 1]
    assert ranked[0].player_id == "p_bo" and [r.winner for r in ranked] == [True, True, False, False, False]


def test_a_tie_is_listed_by_table_then_name_whatever_order_the_tables_come_in():
    a = TableStanding(game_id="g-0", players=[_player("Zoë", (50, 0)), _player("Ann", (50, 0))])
    b = TableStanding(game_id="g-1", players=[_player("Al", (50, 0))])
    assert [(r.rank, r.table, r.name) for r in ranking([(1, b), (0, a)])] == [(1, 0, "Ann"), (1, 0, "Zoë"), (1, 1, "Al")]


def test_a_winner_and_a_player_level_on_points_do_not_tie():
    t = TableStanding(game_id="g-0", players=[_player("Ann", (100, 25), winner=True)])
    u = TableStanding(game_id="g-1", players=[_player("Bo", (100, 0))])
    assert [(r.rank, r.name) for r in ranking([(0, t), (1, u)])] == [(1, "Ann"), (2, "Bo")]
    assert ranking([]) == []
