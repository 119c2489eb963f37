"""Resigning (RULES.md §1 "Resigning", docs/rules-free-parking.md): at any moment the seat is still in, on turn or
not, even while an answer is awaited from it (that wait closes as if it had accepted); out exactly as a forfeited
seat; its hand face down out of play and its Point cards down; one seat left wins at once; in tournament mode it
keeps its cumulative total and cannot win; never undone."""

from __future__ import annotations

import msgspec

from service.events import free_parking as ev
from service.events.common import SeedRevealed
from service.rules.free_parking import Log, legal_commands, view

replace = msgspec.structs.replace


def test_a_player_may_resign_on_their_turn_and_the_turn_passes(table):
    t = table(hands={1: ["M20-1", "P10-1"]}, points={1: ["P30-1"]})
    assert t.legal(1)[-1] == ev.Resign()
    t.play(ev.Resign(), 1)
    assert t.types() == [ev.SeatResigned, ev.TurnEnded, ev.TurnBegan, ev.CardsDrawn]
    assert t.events[0] == ev.SeatResigned(seat=1, player=t.seat(1).player)
    assert t.state.turn_seat == 2
    me = t.seat(1)
    assert me.forfeited and me.resigned  # out exactly as a forfeited seat
    assert me.hand == ("M20-1", "P10-1") and me.points == ("P30-1",)  # face down out of play; Point cards stay down
    assert view(t.state, 1).players[1].resigned and view(t.state, 0).players[1].hand is None
    assert t.legal(1) == [] and view(t.state, 1).legal == []


def test_a_player_may_resign_off_turn_and_is_skipped_and_no_ones_target(table):
    t = table(hands={1: ["TE-1", "M20-1"]}, meters={2: 40})
    assert ev.Resign() in t.legal(2) and t.state.turn_seat == 1
    t.play(ev.Resign(), 2)
    assert t.types() == [ev.SeatResigned]  # the turn in play goes on
    assert t.state.turn_seat == 1
    assert ev.TimeExpires(card="TE-1", target=2) not in t.legal(1)
    assert t.refused(ev.TimeExpires(card="TE-1", target=2), 1) == "invalid_target"
    t.play(ev.Discard(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.one(ev.TurnBegan).seat == 0  # seat 2 is skipped


def test_a_resignation_is_never_undone(table):
    t = table(seats=4)
    t.play(ev.Resign(), 2)
    assert t.refused(ev.Resign(), 2) == "forfeited"
    assert t.legal(2) == []


def test_resigning_while_an_answer_is_awaited_closes_the_wait_as_if_accepted(table):
    t = table(4, hands={1: ["TE-1", "M20-1"], 2: ["TW-1"]}, meters={2: 40, 1: 0})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert t.pending.seat == 2 and t.legal(2) == [ev.Accept(), ev.TalkOut(card="TW-1"), ev.Resign()]
    t.play(ev.Resign(), 2)
    assert t.types() == [ev.SeatResigned, ev.Accepted, ev.MeterSet, ev.ActionResolved]
    assert t.one(ev.Accepted) == ev.Accepted(seat=2)
    assert t.seat(2).meter == 0 and t.seat(2).hand == ("TW-1",)  # accepted: the talk card stays in the hand
    assert t.pending is None and t.state.turn_seat == 1 and t.state.phase == "after_main"  # play resumes


def test_resigning_while_a_choice_is_owed_closes_it_with_the_servers_default(table):
    t = table(4, hands={0: ["OJ-1"]}, meters={2: 0}, points={2: ["P30-1", "P10-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    t.play(ev.Accept(), 2)
    assert t.pending.kind == "card" and t.pending.seat == 2
    t.play(ev.Resign(), 2)
    assert t.one(ev.Chosen) == ev.Chosen(seat=2, choice="card", value="P10-1", how="resigned")  # the lowest
    assert t.seat(2).points == ("P30-1",) and t.pending is None and t.action is None


def test_resigning_on_turn_while_another_seat_answers_ends_the_turn_once_the_action_resolves(table):
    t = table(4, hands={1: ["TE-1", "M20-1"]}, meters={2: 40})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    t.play(ev.Resign(), 1)
    assert t.types() == [ev.SeatResigned] and t.pending.seat == 2  # the answer is still seat 2's to give
    t.play(ev.Accept(), 2)
    assert ev.ActionResolved in t.types() and t.one(ev.TurnEnded).seat == 1
    assert t.state.turn_seat == 2


def test_a_trade_of_places_with_a_resigned_seat_is_void(table):
    t = table(4, phase="after_main", second_chance=["SC-trade_places-1"])
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Choose(target=3), 1)
    assert t.pending.seat == 3
    t.play(ev.Resign(), 3)
    assert t.none(ev.PlacesTraded)
    assert t.one(ev.ActionResolved).cancelled and t.one(ev.TurnEnded).seat == 1
    assert t.seat(3).resigned and t.state.turn_seat == 2


def test_a_resigned_seat_can_no_longer_be_named_a_target(table):
    t = table(4, phase="after_main", second_chance=["SC-take_point-1"], points={2: ["P10-1"], 3: ["P20-1"]})
    t.play(ev.DrawSecondChance(), 1)
    assert t.pending.kind == "target" and t.pending.options == (2, 3)
    t.play(ev.Resign(), 3)
    assert t.one(ev.Chosen) == ev.Chosen(seat=1, choice="target", value=2, how="only_option")
    assert t.pending.kind == "respond" and t.pending.seat == 2


def test_when_one_seat_is_left_that_player_wins_at_once(table):
    t = table(3, points={0: ["P30-1"], 2: ["P60-1"]})
    t.play(ev.Resign(), 2)
    t.play(ev.Resign(), 1)  # on turn
    assert t.types() == [ev.SeatResigned, ev.GameWon, SeedRevealed]
    assert t.one(ev.GameWon) == ev.GameWon(seat=0, player=t.seat(0).player, points=30)
    assert t.state.phase == "finished" and t.state.winner == 0
    assert all(legal_commands(t.state, seat) == [] for seat in range(3))  # a finished game lists nothing


def test_the_last_seat_left_wins_even_while_an_answer_is_awaited(table):
    t = table(2, hands={1: ["TE-1"]}, meters={0: 40})
    t.play(ev.TimeExpires(card="TE-1", target=0), 1)
    t.play(ev.Resign(), 0)
    assert t.types() == [ev.SeatResigned, ev.GameWon, SeedRevealed] and t.state.winner == 1


def test_in_tournament_mode_a_resigned_seat_keeps_its_total_and_cannot_win(table):
    one_forty = ["P60-1", "P60-2", "P20-1"]
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: one_forty, 2: ["P30-1"]}, mode="tournament")
    t.state = replace(t.state, seats=tuple(replace(st, total=400 if i == 2 else 0) for i, st in enumerate(t.state.seats)))
    t.play(ev.Resign(), 2)
    t.play(ev.RunErrand(card="P10-1"), 1)  # 150: the round ends
    ended = t.one(ev.RoundEnded)
    assert ended.totals[2] == 430  # its round score still counts to its cumulative total
    assert t.none(ev.GameWon) and ev.RoundDealt in t.types()  # 430 ≥ 300, but a resigned seat wins nothing
    assert t.seat(2).total == 430 and t.seat(2).hand == ()  # dealt no cards
    t.play(ev.Resign(), 0)
    assert t.one(ev.GameWon) == ev.GameWon(seat=1, player=t.seat(1).player, points=175)  # the one left, its total


def test_the_move_log_says_it_in_words(table):
    t = table(seats=4)
    t.play(ev.Resign(), 2)
    log = Log()
    assert [log.line(e, []) for e in t.log] == ["seat 2 resigns"]
