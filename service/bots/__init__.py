"""Bots: players the service (and simulations) can seat. They act only through ``legal_commands``."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec

from service.events.base import BotParams

from .expert import HORIZON, NODES, ExpertBot
from .free_parking import BOTS as FREE_PARKING_BOTS
from .monopoly import BOTS as MONOPOLY_BOTS
from .solitaire import BOTS as SOLITAIRE_BOTS
from .solitaire import SOLVER_BUDGET
from .turns import awaited, holds_up, next_move, seated

__all__ = ["BOTS", "PARAMS", "Bot", "awaited", "bot", "holds_up", "next_move", "params_of", "seated"]


class Bot(Protocol):
    name: str

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        """A command from ``legal``, or ``None`` to let the moment pass (only when not obliged to act)."""


BOTS: dict[str, dict[str, type]] = {
    "free-parking": {**FREE_PARKING_BOTS, "expert": ExpertBot},
    "solitaire": SOLITAIRE_BOTS,
    "monopoly": MONOPOLY_BOTS,
}


PARAMS: dict[tuple[str, str], BotParams] = {
    ("free-parking", "expert"): BotParams(nodes=NODES, horizon=HORIZON),
    ("solitaire", "solver"): BotParams(budget=SOLVER_BUDGET),
    ("monopoly", "strategic"): BotParams(jail="auto"),
}
"""The parameters the service seats each bot with; a bot missing here has none."""


def params_of(kind: str, name: str) -> BotParams | None:
    return PARAMS.get((kind, name))


def bot(kind: str, name: str, params: BotParams | None = None) -> Bot:
    """A bot of ``kind`` called ``name``, made with ``params`` (its seat's record) or with none (its defaults)."""
    given = {f: getattr(params, f) for f in BotParams.__struct_fields__ if getattr(params, f) is not None} if params else {}
    return BOTS[kind][name](**given)
