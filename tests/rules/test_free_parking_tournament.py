"""Tournament mode (RULES.md §1, last paragraph): rounds to 150, a 25-point bonus, the tournament to 300."""

from __future__ import annotations

import msgspec

from service.events import free_parking as ev
from service.events.common import SeedRevealed
from service.rules.free_parking import cards

ONE_FORTY = ["P60-1", "P60-2", "P20-1"]


def totals(t, *values: int):
    """Give the seats' players these cumulative totals (the scores of earlier rounds)."""
    seats = tuple(msgspec.structs.replace(st, total=v) for st, v in zip(t.state.seats, values, strict=True))
    t.state = msgspec.structs.replace(t.state, seats=seats)


def test_a_round_ends_the_moment_a_seat_reaches_150_and_the_next_seat_deals(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_FORTY, 2: ["P30-1"]}, mode="tournament")
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.none(ev.GameWon)
    ended = t.one(ev.RoundEnded)
    assert (ended.round, ended.seat) == (1, 1)
    dealt = t.one(ev.RoundDealt)
    assert (dealt.round, dealt.dealer) == (2, 1)
    assert t.one(ev.TurnBegan).seat == 2  # the seat left of the new dealer plays first


def test_the_round_winner_scores_the_round_total_plus_25_and_the_others_their_totals(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_FORTY, 2: ["P30-1"]}, mode="tournament")
    t.play(ev.RunErrand(card="P10-1"), 1)
    ended = t.one(ev.RoundEnded)
    assert ended.scores == (0, 150 + cards.ROUND_BONUS, 30)
    assert ended.totals == (0, 175, 30)
    assert [st.total for st in t.state.seats] == [0, 175, 30]


def test_a_new_round_reshuffles_both_decks_deals_five_and_resets_every_meter(table):
    t = table(hands={1: ["P10-1"]}, meters={0: 40, 1: 10, 2: 60}, points={1: ONE_FORTY}, mode="tournament")
    t.play(ev.RunErrand(card="P10-1"), 1)
    s = t.state
    assert [st.meter for st in s.seats] == [0, 0, 0]
    assert [st.points for st in s.seats] == [(), (), ()]
    assert [len(st.hand) for st in s.seats] == [5, 5, 6]  # seat 2 has drawn up to six for its turn
    assert s.discard == () and s.second_chance_discard == ()
    assert len(s.deck) + sum(len(st.hand) for st in s.seats) == 64
    assert len(s.second_chance) == 32


def test_the_tournament_is_won_after_a_round_in_which_a_total_reaches_300(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_FORTY, 2: ["P30-1"]}, mode="tournament")
    totals(t, 100, 140, 250)
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.one(ev.RoundEnded).totals == (100, 315, 280)
    won = t.one(ev.GameWon)
    assert (won.seat, won.points) == (1, 315)
    assert t.types()[-2:] == [ev.GameWon, SeedRevealed]
    assert t.state.phase == "finished"


def test_the_highest_total_wins_even_if_another_player_ended_the_round(table):
    """"If two or more players surpass 300 points, the player with the most points wins.\""""
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_FORTY, 2: ["P60-3"]}, mode="tournament")
    totals(t, 0, 140, 290)
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.one(ev.RoundEnded).totals == (0, 315, 350)
    assert t.one(ev.GameWon).seat == 2


def test_a_tie_at_the_top_plays_another_round(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_FORTY, 2: ["P50-1"]}, mode="tournament")
    totals(t, 0, 140, 265)
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.one(ev.RoundEnded).totals == (0, 315, 315)
    assert t.none(ev.GameWon)
    assert t.one(ev.RoundDealt).round == 2


def test_200_points_do_not_end_a_tournament_game_150_do(table):
    """The round ends at 150, before a standard game's 200 could ever be reached."""
    t = table(hands={1: ["P60-3"]}, meters={1: 60}, points={1: ["P60-1", "P30-1"]}, mode="tournament")
    t.play(ev.RunErrand(card="P60-3"), 1)
    assert t.one(ev.RoundEnded).scores[1] == 150 + cards.ROUND_BONUS and t.none(ev.GameWon)


def test_a_round_can_end_out_of_turn_through_a_point_card_given(table):
    t = table(phase="after_main", second_chance=["SC-give_point-1"], points={1: ["P10-1"], 2: ONE_FORTY}, mode="tournament")
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Accept(), 1)
    t.play(ev.Choose(target=2), 1)
    ended = t.one(ev.RoundEnded)
    assert ended.seat == 2 and ended.scores == (0, 0, 175)


def test_totals_follow_the_player_when_places_are_traded(table):
    t = table(phase="after_main", second_chance=["SC-trade_places-1"], seats=4, mode="tournament")
    totals(t, 10, 20, 30, 40)
    drawer, other = t.state.seats[1].player, t.state.seats[3].player
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Choose(target=3), 1)
    t.play(ev.Accept(), 3)
    t.play(ev.Accept(), 1)  # the drawer's own answer: the trade takes their place too
    assert t.state.seats[3].player == drawer and t.state.seats[3].total == 20
    assert t.state.seats[1].player == other and t.state.seats[1].total == 40


def test_standings_credit_every_round_to_the_player_and_name_the_winner():
    """The standings function reads a table's events alone; totals equal the table's, scores follow players."""
    import random

    from service.rules.free_parking.standings import table_standing
    from service.sim.games import new_game, play

    sim = new_game("free-parking", 3, bytes(32), "T", ["greedy", "random", "greedy"], {"mode": "tournament"})
    for _ in play(sim, ["greedy", "random", "greedy"], random.Random(3)):
        pass
    events = [sim.game.codec.join(e.public) for e in sim.envelopes]  # public parts only
    table = table_standing("T", sim.game.state.config, events)
    ended = [e for e in events if isinstance(e, ev.RoundEnded)]
    assert table.finished and table.rounds == len(ended)
    by_name = {p.name: p for p in table.players}
    for st in sim.game.state.seats:
        assert by_name[st.player.name].total == st.total
    assert by_name[sim.game.state.seats[sim.game.state.winner].player.name].winner
    assert sum(p.winner for p in table.players) == 1
    for p in table.players:
        assert [r.round for r in p.rounds] == list(range(1, len(ended) + 1))
        assert p.rounds[-1].total == p.total == sum(r.score for r in p.rounds)
