"""Bots: players the service (and simulations) can seat. They act only through ``legal_commands``."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec

from .expert import ExpertBot
from .free_parking import BOTS as FREE_PARKING_BOTS
from .monopoly import BOTS as MONOPOLY_BOTS
from .solitaire import BOTS as SOLITAIRE_BOTS
from .turns import awaited, holds_up, next_move, seated

__all__ = ["BOTS", "Bot", "awaited", "bot", "holds_up", "next_move", "seated"]


class Bot(Protocol):
    name: str

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        """A command from ``legal``, or ``None`` to let the moment pass (only when not obliged to act)."""


BOTS: dict[str, dict[str, type]] = {
    "free-parking": {**FREE_PARKING_BOTS, "expert": ExpertBot},
    "solitaire": SOLITAIRE_BOTS,
    "monopoly": MONOPOLY_BOTS,
}


def bot(kind: str, name: str) -> Bot:
    return BOTS[kind][name]()
