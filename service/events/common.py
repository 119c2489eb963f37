"""Events and commands every game shares: creation, seating, the seed's reveal, the server's timeout."""

from __future__ import annotations

from typing import Annotated

import msgspec

from .base import Command, Event, Player

Seat = Annotated[int, msgspec.Meta(ge=0, le=7)]
Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
CardId = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class GameCreatedBase(Event, kw_only=True):
    """The first event of every game; each kind subclasses it to give ``config`` its own schema."""

    kind: str
    seed_commitment: Hex64
    rules_version: int
    rng: str


class SeatTaken(Event, tag="seat_taken"):
    seat: int
    player: Player


class SeedRevealed(Event, tag="seed_revealed"):
    """Published when the game ends: anyone may now re-check every shuffle against the commitment."""

    seed: Hex64


class Create(Command, tag="create"):
    """Server only: records the game's creation as its first event."""


class TakeSeat(Command, tag="take_seat"):
    """Server only: the API seats a player (or bot) after checking who asks."""

    player: Player


class Timeout(Command, tag="timeout"):
    """Server only: a wait's deadline passed; the server answers on the waiting seat's behalf."""
