"""The turn clock (option ``turn_seconds``): a server action like every other deadline.

A turn's deadline is set when it begins (``TurnBegan.deadline_at``). Once it has passed and no answer is awaited, the
server's ``Timeout`` plays the turn for its seat: in the main play it discards the seat's lowest card (by value, the
specials counting 0, ties by the unshuffled deck order), then the turn ends (no Second Chance is drawn). Each such turn
is a missed turn for the player; playing a turn themselves resets the count. After ``forfeit_after`` missed turns in a
row the seat forfeits instead of having its turn played: it is out, and with one player left the game is over.

From rules version 3 the clock stops while the game waits on a seat other than the one on turn — the target of an
Officer Jones or a Time Expires answering, a seat choosing — and restarts with the time it had left once the wait is
over (``hold``): a wait the seat on turn cannot end costs it none of its turn. A wait on the seat on turn itself (an
answer or a choice of its own) is its own time: the clock runs on, as in every version.
"""

from __future__ import annotations

from service.events import free_parking as ev

from .. import clock
from ..batch import Batch
from ..errors import RuleViolation
from . import cards
from .state import State


def turn_deadline(s: State) -> int | None:
    """When the server may play the turn in progress for its seat: its deadline, if it has one and nothing is awaited."""
    if s.phase not in ("main", "after_main") or s.pending is not None or s.timed_out:
        return None
    return s.turn_deadline_at


def hold(b: Batch[State]) -> None:
    """At the end of a decision (rules version 3): stop the turn clock while the game waits on another seat than the
    one on turn, restart it once it no longer does (``rules.clock.hold``)."""
    s = b.state
    if s.rules_version < clock.CLOCK_HOLDS:
        return
    in_turn = s.phase in ("main", "after_main") and not s.timed_out
    clock.hold(b, in_turn, s.pending is not None and s.pending.seat != s.turn_seat)


def next_seat(s: State, seat: int) -> int:
    """The seat after ``seat`` still in the game (a forfeited seat's turns are skipped)."""
    return next((seat + k) % s.n for k in range(1, s.n + 1) if not s.seats[(seat + k) % s.n].forfeited)


def time_out_turn(b: Batch[State]) -> int | None:
    """The server plays the turn whose clock ran out: the seat's default, a missed turn counted, or — the
    ``forfeit_after``-th in a row — the seat's forfeit. The seat if it forfeited."""
    s = b.state
    due = turn_deadline(s)
    if due is None:
        raise RuleViolation("nothing_pending", "No one is being waited for")
    if b.at < due:
        raise RuleViolation("deadline_not_reached", "The turn's time has not run out yet", deadline_at=due)
    seat = s.turn_seat
    missed = s.seats[seat].missed + 1
    if missed >= s.config.forfeit_after:
        b.emit(ev.TurnTimedOut(seat=seat, missed=missed))
        player = s.seats[seat].player
        assert player is not None
        b.emit(ev.SeatForfeited(seat=seat, player=player, missed=missed))
        return seat
    hand = s.seats[seat].hand
    card = cards.lowest_first(hand)[0] if s.phase == "main" and hand else None
    b.emit(ev.TurnTimedOut(seat=seat, missed=missed, card=card))
    return None
