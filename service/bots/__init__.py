"""Bots: players the service (and simulations) can seat. They act only through ``legal_commands``."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec

from .free_parking import BOTS as FREE_PARKING_BOTS


class Bot(Protocol):
    name: str

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        """A command from ``legal``, or ``None`` to let the moment pass (only when not obliged to act)."""


BOTS: dict[str, dict[str, type]] = {"free-parking": FREE_PARKING_BOTS}


def bot(kind: str, name: str) -> Bot:
    return BOTS[kind][name]()


def next_move(rules: Any, s: Any, bots: list[Bot], rnd: random.Random) -> tuple[int, msgspec.Struct] | None:
    """Who acts next and with what: the awaited seat; else any seat that interrupts; else the seat whose turn it is."""
    if s.pending is not None:
        seat = s.pending.seat
        return seat, bots[seat].choose(s, seat, rules.legal_commands(s, seat), rnd)
    turn = s.turn_seat
    for seat in [*s.opponents(turn)]:
        legal = rules.legal_commands(s, seat)
        if legal:
            command = bots[seat].choose(s, seat, legal, rnd)
            if command is not None:
                return seat, command
    legal = rules.legal_commands(s, turn)
    if not legal:
        return None
    command = bots[turn].choose(s, turn, legal, rnd)
    return (turn, command) if command is not None else None
