"""The card game's table as immutable data: what ``evolve`` folds events into."""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.base import Player
from service.events.free_parking import FreeParkingConfig

from .. import setup
from ..close import Closed
from . import cards

Phase = Literal["new", "waiting", "main", "after_main", "finished"]


class SeatState(msgspec.Struct, frozen=True):
    """A place at the table. Meter, hand and Point cards belong to the seat; ``player`` sits in it, and
    ``total`` (a tournament's cumulative score) belongs to the player: it moves with them."""

    player: Player | None = None
    meter: int = 0
    hand: tuple[str, ...] = ()
    points: tuple[str, ...] = ()
    total: int = 0
    missed: int = 0
    """Turns in a row the turn clock ran out on (the player's, like ``total``); reset when they play themselves."""
    forfeited: bool = False
    """Out of the game after ``forfeit_after`` missed turns, or resigned: its turns are skipped, it is no one's
    target."""
    resigned: bool = False
    """Out because its player resigned (``forfeited`` is set too: one way out, whichever the cause)."""

    @property
    def score(self) -> int:
        return sum(cards.value_of(c) for c in self.points)


class Action(msgspec.Struct, frozen=True):
    """An action being resolved: an Officer Jones, a Time Expires, or a Second Chance card.

    ``steps`` is what remains of its script (see ``actions.SCRIPTS``); ``target``, ``chosen`` and
    ``fan`` hold what earlier steps settled.
    """

    kind: str
    by: int
    card: str
    steps: tuple[str, ...]
    target: int | None = None
    chosen: str | None = None
    fan: tuple[str, ...] = ()
    cancelled: bool = False


class Pending(msgspec.Struct, frozen=True):
    """A wait on one seat: an answer (``respond``) or a choice of ``target``, ``card`` or ``position``."""

    seat: int
    kind: Literal["respond", "target", "card", "position"]
    deadline_at: int
    options: tuple[int | str, ...] = ()


class State(setup.Seeded, frozen=True):
    config: FreeParkingConfig
    seed: bytes
    rules_version: int = 1  # which rules decide this game (its GameCreated says; RULES_VERSIONS)
    version: int = 0
    phase: Phase = "new"
    seats: tuple[SeatState, ...] = ()
    round: int = 0
    dealer: int = 0
    turn: int = 0
    turn_seat: int = 0
    deck: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    second_chance: tuple[str, ...] = ()
    second_chance_discard: tuple[str, ...] = ()
    reshuffles: int = 0
    second_chance_reshuffles: int = 0
    action: Action | None = None
    pending: Pending | None = None
    turn_deadline_at: int | None = None
    """When the turn clock runs out on the turn in play (``TurnBegan``); none without a clock, or once played."""
    timed_out: bool = False
    """The server played this turn for its seat (``TurnTimedOut``)."""
    turn_left_ms: int | None = None
    """While the turn clock is stopped (``TurnClockStopped``, rules version 3): the time the turn had left."""
    progress: int = 0
    """The version of the game's last event that moved it on (``progress.moves_on``): the idle close counts from it."""
    winner: int | None = None
    closed: Closed | None = None
    """Set when the server closed the game for nobody moving (``game_closed``): finished, with no winner."""

    @property
    def n(self) -> int:
        return self.config.seats

    def opponents(self, seat: int) -> list[int]:
        """Every other seat still in (not forfeited), clockwise from ``seat``'s left."""
        return [o for o in ((seat + k) % self.n for k in range(1, self.n)) if not self.seats[o].forfeited]

    @property
    def playing(self) -> tuple[int, ...]:
        """The seats still in the game (not forfeited), in seat order."""
        return tuple(i for i, st in enumerate(self.seats) if not st.forfeited)


RULES_VERSION = 3
"""The version new games are played under; a change of behaviour that would replay a recorded game differently
bumps it, and the older versions stay playable (``RULES_VERSIONS``), branching where they differ on
``State.rules_version``. Version 2 (RULES.md §1 as revised): a trade of places asks the named player, then the
drawer; swap three draws before its three cards are discarded, and is refused when nothing can be drawn. Version 3
(issue 31): the turn clock stops while the game waits on another seat (``rules.clock.hold``), and the idle close
counts from the last event that moved the game on, not from an interrupt or an answer (``progress``)."""
RULES_VERSIONS = (1, 2, 3)


def initial(config: FreeParkingConfig, seed: bytes, rules_version: int = RULES_VERSION) -> State:
    if rules_version not in RULES_VERSIONS:
        raise ValueError(f"rules version {rules_version} is not one these rules play: {RULES_VERSIONS}")
    return State(config=config, seed=seed, seats=tuple(SeatState() for _ in range(config.seats)), rules_version=rules_version)


def with_seat(state: State, seat: int, **changes: object) -> State:
    seats = list(state.seats)
    seats[seat] = msgspec.structs.replace(seats[seat], **changes)
    return msgspec.structs.replace(state, seats=tuple(seats))


def without(items: tuple[str, ...], *gone: str) -> tuple[str, ...]:
    """``items`` less one copy of each of ``gone``. A card that is not there is skipped: folding a redacted
    log, a hand's hidden cards were never placed (``decide`` checks every card it moves, so a full log always has it)."""
    out = list(items)
    for g in gone:
        if g in out:
            out.remove(g)
    return tuple(out)
