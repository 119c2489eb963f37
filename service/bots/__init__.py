"""Bots: players the service (and simulations) can seat. They act only through ``legal_commands``."""

from __future__ import annotations

import inspect
import random
from typing import Any, Protocol, get_args

import msgspec

from service.events.base import BotParams

from .expert import HORIZON, NODES, ExpertBot
from .free_parking import BOTS as FREE_PARKING_BOTS
from .monopoly import BOTS as MONOPOLY_BOTS
from .monopoly import JailPolicy
from .solitaire import BOTS as SOLITAIRE_BOTS
from .solitaire import SOLVER_BUDGET
from .turns import awaited, holds_up, next_move, seated

__all__ = ["BOTS", "PARAMS", "Bot", "awaited", "bot", "holds_up", "next_move", "params_of", "seated", "unfit"]


class Bot(Protocol):
    name: str

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        """A command from ``legal``, or ``None`` to let the moment pass (only when not obliged to act)."""


BOTS: dict[str, dict[str, type]] = {
    "free-parking": {**FREE_PARKING_BOTS, "expert": ExpertBot},
    "solitaire": SOLITAIRE_BOTS,
    "monopoly": MONOPOLY_BOTS,
}


STRENGTH: dict[str, tuple[str, ...]] = {
    "free-parking": ("random", "greedy", "expert"),
    "solitaire": ("greedy", "solver"),
    "monopoly": ("random", "strategic"),
}
"""Each kind's bots, weakest first, as the league measured them (docs/bots.md, "Bots, measured"): the queue's choice
between bot kinds as close to a player's rating (at first every one is unrated) goes to the weakest."""

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


LIMITS: dict[str, int] = {"nodes": 10 * NODES, "horizon": 10 * HORIZON, "budget": 10 * SOLVER_BUDGET}
"""The most search a recorded bot may ask for: ten times what the service seats it with. ``replays verify`` makes
the bot a log names and asks it every move again, so a log's parameters are bounded before it does (a hostile
``nodes`` of 10**12 would run for days)."""


def unfit(kind: str, name: str, params: BotParams | None) -> str | None:
    """Why a bot a log records (``kind``, ``name``, ``params``) is none the service could have seated, or ``None``:
    a name it has no bot of, a parameter that bot does not take, a jail policy it does not know, a search beyond
    ``LIMITS`` (or below nothing)."""
    made = BOTS.get(kind, {}).get(name)
    if made is None:
        return f"no {kind} bot is called {name!r}"
    given = {f: getattr(params, f) for f in BotParams.__struct_fields__ if getattr(params, f) is not None} if params else {}
    takes = inspect.signature(made).parameters
    for field, v in given.items():
        if field not in takes or field in ("name",):
            return f"the {name} bot takes no {field}"
        if field in LIMITS and not 0 <= v <= LIMITS[field]:
            return f"{field} {v} is outside 0..{LIMITS[field]}"
        if field == "jail" and v not in get_args(JailPolicy):
            return f"jail {v!r} is none of {', '.join(get_args(JailPolicy))}"
    return None
