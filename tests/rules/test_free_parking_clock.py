"""The turn clock (option ``turn_seconds``, docs/rules-free-parking.md): a turn's deadline is set when it begins; at it
the server's ``Timeout`` plays the seat's default (discard its lowest card, then end the turn), counts a missed turn
(reset when the player plays themselves), and after ``forfeit_after`` in a row the seat forfeits: its turns are
skipped, it is no one's target, and with one player left the game is over."""

from __future__ import annotations

import msgspec

from service.events import free_parking as ev
from service.events.common import Timeout
from service.rules.free_parking import Log, turn_deadline, view

from .conftest import AT

replace = msgspec.structs.replace
MINUTE = 60_000


def clocked(table, seats: int = 3, turn_seconds: int = 60, **layout):
    """A table whose turn (seat 1's) began at ``AT`` under a ``turn_seconds`` clock."""
    t = table(seats, turn_seconds=turn_seconds, **layout)
    t.state = replace(t.state, turn_deadline_at=AT + turn_seconds * 1000, timed_out=False)
    return t


def time_out(t, after_ms: int = MINUTE):
    """The server's timeout once the turn in play has run out; the table moves on."""
    due = turn_deadline(t.state)
    assert due is not None
    return t.play(Timeout(), None, at=due + after_ms - MINUTE)


def test_a_turn_records_its_deadline_when_it_begins(table):
    t = clocked(table, hands={1: ["M20-1"]})
    t.play(ev.FeedMeter(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1, at=AT + 5000)
    began = t.one(ev.TurnBegan)
    assert began.seat == 2 and began.deadline_at == AT + 5000 + 60_000
    assert view(t.state, 0).turn_deadline_at == began.deadline_at and view(t.state, 0).forfeit_after == 3


def test_without_the_option_there_is_no_turn_clock(table):
    t = table(hands={1: ["M20-1"]})
    t.play(ev.FeedMeter(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.one(ev.TurnBegan).deadline_at is None
    assert "deadline_at" not in msgspec.json.decode(msgspec.json.encode(t.one(ev.TurnBegan)))
    assert turn_deadline(t.state) is None and view(t.state, 0).forfeit_after is None
    assert t.refused(Timeout(), None, at=AT + 10**9) == "nothing_pending"


def test_the_timeout_is_refused_before_the_deadline_and_only_from_the_server(table):
    t = clocked(table, hands={1: ["M20-1"]})
    assert t.refused(Timeout(), None, at=AT + 59_999) == "deadline_not_reached"
    assert t.refused(Timeout(), 1, at=AT + MINUTE) == "server_only"


def test_the_default_discards_the_lowest_card_and_ends_the_turn(table):
    t = clocked(table, hands={1: ["M40-1", "P30-1", "M20-2", "P20-1"]})
    time_out(t)
    assert t.types()[:3] == [ev.TurnTimedOut, ev.TurnEnded, ev.TurnBegan]
    assert t.one(ev.TurnTimedOut) == ev.TurnTimedOut(seat=1, missed=1, card="M20-2")  # 20 minutes, before P20-1 in deck order
    assert "M20-2" in t.state.discard and t.none(ev.SecondChanceDrawn)
    assert t.state.turn_seat == 2 and t.seat(1).missed == 1


def test_a_special_counts_0_and_ties_go_by_the_unshuffled_deck(table):
    t = clocked(table, hands={1: ["M20-1", "TE-1", "OJ-2"]})
    time_out(t)
    assert t.one(ev.TurnTimedOut).card == "OJ-2"  # Officer Jones comes before Time Expires in the unshuffled deck


def test_after_the_main_play_the_default_only_ends_the_turn(table):
    t = clocked(table, hands={1: ["M20-1", "P10-1"]})
    t.play(ev.FeedMeter(card="M20-1"), 1)
    assert t.seat(1).missed == 0
    time_out(t)
    assert t.one(ev.TurnTimedOut) == ev.TurnTimedOut(seat=1, missed=1)
    assert t.types()[1] is ev.TurnEnded and "P10-1" in t.seat(1).hand


def test_a_wait_on_an_answer_comes_first_and_before_version_3_the_turn_clock_ran_on_meanwhile(table):
    t = clocked(table, hands={1: ["TE-1", "M20-1"], 2: ["M30-1"]}, meters={2: 40}, rules_version=2)
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert turn_deadline(t.state) is None  # the answer's own deadline decides first
    assert view(t.state, 0).turn_deadline_at is None and view(t.state, 0).pending.deadline_at is not None
    t.play(Timeout(), None, at=AT + MINUTE)
    assert t.types()[0] is ev.Accepted and t.none(ev.TurnTimedOut)
    assert view(t.state, 0).turn_deadline_at == AT + MINUTE  # the wait is over: the turn's deadline shows again
    time_out(t)  # then the turn, whose time is gone: it only ends (its main play was made)
    assert t.one(ev.TurnTimedOut) == ev.TurnTimedOut(seat=1, missed=1)


def test_missed_turns_count_in_a_row_and_reset_when_the_player_plays(table):
    t = clocked(table, 2, hands={0: ["M20-1", "M20-2", "P10-1"], 1: ["M40-1", "M40-2", "M60-1"]})
    time_out(t)  # seat 1 misses
    assert t.seat(1).missed == 1
    t.play(ev.Discard(card=t.seat(0).hand[0]), 0, at=AT + MINUTE)
    t.play(ev.EndTurn(), 0, at=AT + MINUTE)
    time_out(t)  # seat 1 misses again: 2 in a row
    assert t.one(ev.TurnTimedOut).missed == 2 and view(t.state, 0).players[1].missed == 2
    t.play(ev.Discard(card=t.seat(0).hand[0]), 0, at=AT + 3 * MINUTE)
    t.play(ev.EndTurn(), 0, at=AT + 3 * MINUTE)
    t.play(ev.Discard(card=t.seat(1).hand[0]), 1, at=AT + 3 * MINUTE)  # seat 1 plays itself: the count starts again
    assert t.seat(1).missed == 0
    t.play(ev.EndTurn(), 1, at=AT + 3 * MINUTE)
    t.play(ev.Discard(card=t.seat(0).hand[0]), 0, at=AT + 3 * MINUTE)
    t.play(ev.EndTurn(), 0, at=AT + 3 * MINUTE)
    time_out(t)
    assert t.one(ev.TurnTimedOut).missed == 1


def test_the_third_missed_turn_forfeits_and_the_turns_skip_the_seat(table):
    t = clocked(table, 3, forfeit_after=2, hands={1: ["M20-1"], 2: ["M30-1"], 0: ["OJ-1", "TE-1"]}, points={1: ["P20-1"]})
    t.state = replace(t.state, seats=tuple(replace(st, missed=1) if i == 1 else st for i, st in enumerate(t.state.seats)))
    time_out(t)
    assert t.types()[:4] == [ev.TurnTimedOut, ev.SeatForfeited, ev.TurnEnded, ev.TurnBegan]
    forfeit = t.one(ev.SeatForfeited)
    assert forfeit.seat == 1 and forfeit.missed == 2 and t.one(ev.TurnTimedOut).card is None
    assert t.seat(1).forfeited and t.seat(1).points == ("P20-1",) and t.seat(1).hand == ("M20-1",)
    assert t.state.turn_seat == 2 and t.state.playing == (0, 2)
    # out: it plays no more, sends nothing, and is no one's target
    assert t.legal(1) == [] and t.refused(ev.Discard(card="M20-1"), 1) == "forfeited"
    assert all(getattr(c, "target", None) != 1 for c in t.legal(0))
    t.state = replace(t.state, seats=tuple(replace(st, meter=0) for st in t.state.seats))
    assert t.refused(ev.OfficerJones(card="OJ-1", target=1), 0) == "invalid_target"
    t.play(ev.Discard(card=t.seat(2).hand[0]), 2)
    t.play(ev.EndTurn(), 2)
    assert t.state.turn_seat == 0
    t.play(ev.Discard(card=t.seat(0).hand[0]), 0)
    t.play(ev.EndTurn(), 0)
    assert t.state.turn_seat == 2  # seat 1's turn is skipped
    view1 = view(t.state, 1)
    assert view1.players[1].forfeited and view1.legal == []


def test_with_one_player_left_the_game_is_over(table):
    t = clocked(table, 2, forfeit_after=1, hands={1: ["M20-1"], 0: ["M30-1"]}, points={0: ["P30-1"]})
    time_out(t)
    assert t.types() == [ev.TurnTimedOut, ev.SeatForfeited, ev.GameWon, ev.SeedRevealed]
    assert t.one(ev.GameWon).seat == 0 and t.one(ev.GameWon).points == 30
    assert t.state.phase == "finished" and t.state.winner == 0


def test_in_tournament_mode_a_forfeited_seat_keeps_its_total_and_is_dealt_no_more(table):
    t = clocked(table, 3, forfeit_after=1, mode="tournament", hands={1: ["M20-1"], 2: ["P40-1"]},
                meters={2: 60}, points={1: ["P30-1"], 2: ["P60-1", "P50-1"]})
    time_out(t)
    assert t.seat(1).forfeited
    t.play(ev.RunErrand(card="P40-1"), 2)  # 150: the round ends
    ended = t.one(ev.RoundEnded)
    assert ended.scores == (0, 30, 175) and ended.totals == (0, 30, 175)
    dealt = t.one(ev.RoundDealt)
    assert dealt.dealer == 1 and t.seat(1).hand == () and t.seat(1).total == 30
    assert t.state.turn_seat == 2  # the seat after the dealer still in plays first
    assert len(t.seat(0).hand) == 5 and len(t.seat(2).hand) == 6


def test_the_log_names_the_time_out_and_the_forfeit(table):
    t = clocked(table, 2, forfeit_after=2, hands={1: ["M20-1", "P30-1"], 0: ["M30-1", "M40-1"]})
    time_out(t)
    t.play(ev.Discard(card="M30-1"), 0, at=AT + MINUTE)
    t.play(ev.EndTurn(), 0, at=AT + MINUTE)
    time_out(t)
    log = Log()
    lines = [log.line(e, []) for e in t.log]
    assert any("time ran out: seat 1's turn was played for them: discarded Feed the Meter 20 (1 missed turn in a row)" in line
               for line in lines), lines
    assert any(line == "seat 1 forfeits after 2 missed turns" for line in lines), lines
