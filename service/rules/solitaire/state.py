"""The solitaire's board as immutable data: what ``evolve`` folds events into.

Besides the layout, the state keeps the ``history`` that unlimited undo steps back through: one
``Step`` per move or redeal still standing, holding what it changed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.base import Player
from service.events.solitaire import SolitaireConfig

from .. import setup
from ..close import Closed
from .layout import Layout, Played, legal_moves

Phase = Literal["new", "waiting", "playing", "won", "lost"]
REDEALS = 2
"""Two redeals a game (RULES.md §2)."""
STUCK_FROM = 2
"""The rules version from which a board with no move and no redeal left is *stuck*, not lost (RULES.md §2: "a misclick
is never final"); under version 1 the move or redeal that left it so ended the game (``game_lost no_moves``)."""


class Seat(msgspec.Struct, frozen=True):
    """The one seat; ``player`` as the service's seat lists expect it."""

    player: Player | None = None


class Step(msgspec.Struct, frozen=True):
    """A move or redeal that undo can take back: its seq, kind, and the position before it."""

    seq: int
    kind: Literal["card_moved", "redealt"]
    layout: Layout
    redeals_used: int
    last: Played | None


class State(setup.Seeded, frozen=True):
    config: SolitaireConfig
    seed: bytes
    rules_version: int = 1  # which rules decide this game (its GameCreated says; RULES_VERSIONS)
    version: int = 0
    phase: Phase = "new"
    seats: tuple[Seat, ...] = (Seat(),)
    layout: Layout | None = None
    redeals_used: int = 0
    history: tuple[Step, ...] = ()
    last: Played | None = None
    """The last move still standing, with where its card came from: the hint never sends it straight back."""
    lost_reason: str | None = None
    closed: Closed | None = None
    """Set when the server closed the game for nobody playing (``game_closed``): lost, ``lost_reason`` ``idle``."""

    @property
    def n(self) -> int:
        return 1

    @property
    def redeals_left(self) -> int:
        return REDEALS - self.redeals_used

    @property
    def over(self) -> bool:
        return self.phase in ("won", "lost")

    @property
    def stuck(self) -> bool:
        """No move and no redeal left, the game still on: the player may only undo or resign (rules version 2 on;
        a version-1 game never stays on such a board)."""
        return (
            self.rules_version >= STUCK_FROM
            and self.phase == "playing"
            and self.layout is not None
            and self.redeals_left <= 0
            and not legal_moves(self.layout)
        )

    @property
    def winner(self) -> int | None:
        """The one seat once the game is won: what the service's tools read of every game's end."""
        return 0 if self.phase == "won" else None

    @property
    def progress(self) -> int:
        """Every move moves a solitaire on, for its idle close (``rules.close``): with one seat, a player keeping their
        own game open by shuffling cards holds no one else's table, so the close counts from the last event."""
        return self.version

    @property
    def pending(self) -> None:
        """Solitaire never waits on an answer: the service's schedulers read ``pending`` of every game."""
        return None

    @property
    def turn_seat(self) -> int:
        """Always the one seat's turn (the bots' ``next_move`` reads it)."""
        return 0

    def opponents(self, seat: int) -> list[int]:
        return []


RULES_VERSION = 2
"""The version new games are played under; a change of behaviour that would replay a recorded game differently
bumps it, and the older versions stay playable (``RULES_VERSIONS``), branching where they differ.

1. the first rules. 2. a board with nothing left to do but undo is stuck, not lost (``STUCK_FROM``)."""
RULES_VERSIONS = (1, 2)


def initial(config: SolitaireConfig, seed: bytes, rules_version: int = RULES_VERSION) -> State:
    if rules_version not in RULES_VERSIONS:
        raise ValueError(f"rules version {rules_version} is not one these rules play: {RULES_VERSIONS}")
    return State(config=config, seed=seed, rules_version=rules_version)
