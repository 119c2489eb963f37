"""The turn clock stops while the game waits on someone else (rules version 3 of the card game and of Monopoly,
docs/rules-free-parking.md and docs/rules-monopoly.md, "Turn clock"): the time left is recorded when the wait opens
(``turn_clock_stopped``) and counted again from the moment it ends (``turn_clock_restarted``), so a wait the seat on
turn cannot end costs it none of its turn. Version 2 games decide as they were played: the clock ran on, and a seat
whose time went by in someone else's wait was timed out — with ``forfeit_after`` 1, put out — the moment it ended."""

from __future__ import annotations

import msgspec
import pytest

from service.events import free_parking as ev
from service.events import monopoly as mev
from service.events.common import Timeout, TurnClockRestarted, TurnClockStopped
from service.rules import free_parking, monopoly

from .conftest import AT
from .monopoly_table import table as monopoly_table

replace = msgspec.structs.replace
TURN = 60_000  # the turn clock: 60 s
WAIT = 120_000  # every answer: 120 s, longer than a turn


def card_table(table, rules_version: int | None = None, **layout):
    """Seat 1's turn began at ``AT`` under a 60 s clock, one missed turn forfeiting; answers get 120 s. Seats 0 and 2
    collude: seat 0 holds Officer Jones, seat 2 is in violation (meter 0) with a Point card down."""
    hands = {0: ["OJ-1", "M20-2"], 1: ["M20-1", "P10-2"], 2: ["M30-1"]}
    laid = {"hands": hands, "points": {2: ["P10-1"]}, "meters": {2: 0}}
    t = table(3, turn_seconds=60, forfeit_after=1, response_seconds=120, rules_version=rules_version, **(laid | layout))
    t.state = replace(t.state, turn_deadline_at=AT + TURN, timed_out=False)
    return t


def test_officer_jones_between_two_other_seats_stops_the_clock_of_the_seat_on_turn(table):
    t = card_table(table)
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0, at=AT + 1000)  # at the start of seat 1's turn
    assert t.events[-1] == TurnClockStopped(seat=1, left_ms=TURN - 1000)
    assert free_parking.turn_deadline(t.state) is None and free_parking.view(t.state, 1).turn_deadline_at is None
    t.play(Timeout(), None, at=AT + 1000 + WAIT)  # seat 2 never answers: the server accepts for it
    assert t.types()[0] is ev.Accepted and t.events[-1] == TurnClockRestarted(seat=1, deadline_at=AT + WAIT + TURN)
    assert free_parking.view(t.state, 1).turn_deadline_at == AT + WAIT + TURN  # the 59 s it had, from the wait's end
    assert t.refused(Timeout(), None, at=AT + WAIT + TURN - 1) == "deadline_not_reached"
    t.play(ev.FeedMeter(card="M20-1"), 1, at=AT + WAIT + 2000)  # the seat on turn plays on, not forfeited
    assert not t.seat(1).forfeited and t.seat(1).missed == 0


def test_under_version_2_the_same_collusion_forfeits_the_seat_on_turn_the_moment_the_wait_ends(table):
    t = card_table(table, rules_version=2)
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0, at=AT + 1000)
    assert t.none(TurnClockStopped)
    t.play(Timeout(), None, at=AT + 1000 + WAIT)
    assert t.none(TurnClockRestarted) and t.state.turn_deadline_at == AT + TURN  # long gone
    t.play(Timeout(), None, at=AT + 1000 + WAIT)  # the very same instant
    assert t.types()[:2] == [ev.TurnTimedOut, ev.SeatForfeited] and t.seat(1).forfeited


def test_a_wait_on_the_seat_on_turn_itself_is_its_own_time_the_clock_runs_on(table):
    t = card_table(table, meters={1: 0, 2: 0}, points={1: ["P20-1"], 2: ["P10-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=1), 0, at=AT + 1000)  # on the seat on turn: its answer is awaited
    assert t.none(TurnClockStopped) and t.pending.seat == 1
    t.play(ev.Accept(), 1, at=AT + 30_000)
    assert t.none(TurnClockRestarted) and t.state.turn_deadline_at == AT + TURN


def test_a_wait_opened_by_the_seat_on_turn_on_another_seat_stops_its_clock_too(table):
    t = card_table(table, hands={0: ["OJ-1"], 1: ["TE-1", "M20-1"], 2: ["M30-1"]}, meters={2: 40})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1, at=AT + 10_000)  # its main play: seat 2 is to answer
    assert t.events[-1] == TurnClockStopped(seat=1, left_ms=TURN - 10_000)
    t.play(ev.Accept(), 2, at=AT + 40_000)
    assert t.events[-1] == TurnClockRestarted(seat=1, deadline_at=AT + 40_000 + TURN - 10_000)


def test_a_clock_already_run_out_stops_with_nothing_left_and_restarts_at_once(table):
    t = card_table(table)
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0, at=AT + TURN + 5000)  # before the server timed the turn out
    assert t.events[-1] == TurnClockStopped(seat=1, left_ms=0)
    t.play(ev.Accept(), 2, at=AT + TURN + 9000)
    assert t.events[-1] == TurnClockRestarted(seat=1, deadline_at=AT + TURN + 9000)
    t.play(Timeout(), None, at=AT + TURN + 9000)  # no time gained: the turn times out now
    assert t.types()[0] is ev.TurnTimedOut


def test_without_a_turn_clock_nothing_stops(table):
    t = table(3, hands={0: ["OJ-1"], 1: ["M20-1"], 2: ["M30-1"]}, points={2: ["P10-1"]}, meters={2: 0})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    t.play(ev.Accept(), 2)
    assert t.none(TurnClockRestarted) and TurnClockStopped not in t.types(t.log)


def test_the_log_says_when_the_clock_stops_and_runs_again(table):
    t = card_table(table)
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0, at=AT + 1000)
    t.play(Timeout(), None, at=AT + 1000 + WAIT)
    summaries = [free_parking.summary(e) for e in t.log]
    assert "seat 1's turn clock stops while the game waits on another player (59 s left)" in summaries
    assert "seat 1's turn clock runs again: the wait cost none of the turn" in summaries


# --- Monopoly: a wait that holds up the roll --------------------------------------------------------------------

LIGHT_BLUE, ORANGE = (6, 8, 9), (16, 18, 19)


def shortage_on_the_roll(rules_version: int = monopoly.RULES_VERSION):
    """Seat 0 is to roll under a 60 s clock (one missed turn forfeits); seat 1 builds three houses with two in the
    bank, which opens a window for seat 2's claim — seat 2 never answers, and the roll waits on the window."""
    t = monopoly_table(3, own={1: LIGHT_BLUE, 2: ORANGE}, houses=2, response_seconds=120, rules_version=rules_version)
    config = replace(t.state.config, turn_seconds=60, forfeit_after=1)
    t.state = replace(t.state, config=config, turn_deadline_at=AT + TURN)
    return t.play(mev.Build(sites=LIGHT_BLUE), 1, at=AT + 1000)


def test_a_shortage_window_opened_by_others_stops_the_roll_clock_until_it_closes():
    t = shortage_on_the_roll()
    assert t.events[-1] == TurnClockStopped(seat=0, left_ms=TURN - 1000) and monopoly.turn_deadline(t.state) is None
    t.timeout()  # the window closes with the claims it has, at its deadline
    assert t.events[-1] == TurnClockRestarted(seat=0, deadline_at=AT + 1000 + WAIT + TURN - 1000)
    t.refused(Timeout(), None, "deadline_not_reached")
    assert not t.seat(0).forfeited


def test_under_version_2_the_shortage_window_forfeits_the_player_who_was_to_roll():
    t = shortage_on_the_roll(rules_version=2)
    assert not t.of(TurnClockStopped)
    t.timeout()
    t.play(Timeout(), None, at=AT + 1000 + WAIT)  # the roll's deadline went by in the window
    assert t.tags()[:2] == ["turn_timed_out", "seat_forfeited"]


def test_a_trade_offer_holds_nothing_up_and_the_roll_clock_runs_on():
    t = monopoly_table(2, response_seconds=120)
    t.state = replace(t.state, config=replace(t.state.config, turn_seconds=60), turn_deadline_at=AT + TURN)
    t.play(mev.OfferTrade(to=0, give=mev.Holdings(cash=10)), 1, at=AT + 1000)
    assert not t.of(TurnClockStopped) and monopoly.turn_deadline(t.state) == AT + TURN  # seat 0 may still roll
    t.play(Timeout(), None, at=AT + TURN)
    assert t.tags()[0] == "turn_timed_out"


@pytest.mark.parametrize("rules_version", [1, 2])
def test_older_monopoly_versions_never_stop_the_clock(rules_version):
    t = shortage_on_the_roll(rules_version)
    t.timeout()
    assert not t.of(TurnClockStopped) and not t.of(TurnClockRestarted)
