"""Bots: players the service (and simulations) can seat. They act only through ``legal_commands``."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec

from .free_parking import BOTS as FREE_PARKING_BOTS
from .solitaire import BOTS as SOLITAIRE_BOTS


class Bot(Protocol):
    name: str

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        """A command from ``legal``, or ``None`` to let the moment pass (only when not obliged to act)."""


BOTS: dict[str, dict[str, type]] = {"free-parking": FREE_PARKING_BOTS, "solitaire": SOLITAIRE_BOTS}


def bot(kind: str, name: str) -> Bot:
    return BOTS[kind][name]()


def next_move(
    rules: Any, s: Any, bots: list[Bot], rnd: random.Random, seats: set[int] | None = None
) -> tuple[int, msgspec.Struct] | None:
    """Who acts next and with what: the awaited seat; else any seat that interrupts; else the seat whose turn
    it is. Only ``seats`` (default: all) are played; ``None`` when none of them acts now."""
    if s.pending is not None:
        order = [s.pending.seat]
    else:
        order = [*s.opponents(s.turn_seat), s.turn_seat]
    for seat in order:
        if seats is not None and seat not in seats:
            continue
        legal = rules.legal_commands(s, seat)
        command = bots[seat].choose(s, seat, legal, rnd) if legal else None
        if command is not None:
            return seat, command
    return None
