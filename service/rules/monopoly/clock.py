"""The turn clock (option ``turn_seconds``): a server action like every other deadline.

Each chance to roll — a turn's start, or doubles' roll again — has a deadline (``TurnBegan``/``RollAgain``
``deadline_at``). Once it has passed and no wait holds up the turn (a trade offer does not), the server's ``Timeout``
rolls for the player (in jail: the try for doubles), and the move is settled as any other: what it then asks (a
purchase, a tax) has its own deadline. Each such roll is a missed turn; rolling (or leaving jail) themselves resets the
count. At ``forfeit_after`` missed turns in a row the player forfeits instead: bankrupt to the bank, which auctions
the properties; with one player left the game is over.

From rules version 3 the roll's clock stops while a wait holds up the turn — an auction, a shortage's claims, a debt:
the player cannot roll then, whoever the wait is on — and restarts with the time it had left once the turn is free
again (``hold``). A trade offer holds nothing up: the player may roll, and the clock runs.
"""

from __future__ import annotations

from service.events import monopoly as ev

from .. import clock
from ..errors import RuleViolation
from .batch import Batch
from .money import go_bankrupt
from .state import State
from .turn import roll


def turn_deadline(s: State) -> int | None:
    """When the server may roll for the player whose turn it is: the roll's deadline, if it has one and no wait holds
    up the turn."""
    if s.phase != "playing" or s.step != "roll" or s.blocked or s.timed_out:
        return None
    return s.turn_deadline_at


def hold(b: Batch) -> None:
    """At the end of a decision (rules version 3): stop the roll's clock while a wait holds up the turn, restart it
    once none does (``rules.clock.hold``)."""
    s = b.state
    if s.rules_version >= clock.CLOCK_HOLDS:
        clock.hold(b, s.phase == "playing" and s.step == "roll" and not s.timed_out, s.blocked)


def time_out_turn(b: Batch) -> None:
    """The roll's time ran out: a missed turn counted and the roll made for the player — or, the ``forfeit_after``-th
    in a row, the player's forfeit."""
    s = b.state
    due = turn_deadline(s)
    if due is None:
        raise RuleViolation("nothing_pending", "The game waits on no one")
    if b.at < due:
        raise RuleViolation("deadline_not_reached", "The turn's time has not run out yet", deadline_at=due)
    seat = s.turn_seat
    missed = s.seats[seat].missed + 1
    b.emit(ev.TurnTimedOut(seat=seat, missed=missed))
    if missed < s.config.forfeit_after:
        roll(b, seat)
        return
    player = s.seats[seat].player
    assert player is not None
    b.emit(ev.SeatForfeited(seat=seat, player=player, missed=missed))
    go_bankrupt(b, seat, None)
