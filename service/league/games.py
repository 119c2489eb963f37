"""One league game, played in memory through the rules' decider (``service.sim.games``): its winner, by seat.

The bots are made here from their names: a kind's seatable bots (``service.bots.BOTS``) and, for measurement only,
``omniscient`` — the card game's expert search given the true hidden cards, a ceiling no table may seat — and
``open-hands``, the same search seeing every hand but not the decks' orders.
``nodes`` sets the budget of a bot that searches (the expert's nodes, the solitaire solver's budget).
"""

from __future__ import annotations

import inspect
import random
from dataclasses import dataclass

from service.bots import BOTS, Bot
from service.bots.expert import ExpertBot
from service.events.common import Seeding
from service.rules.ratings import rated_game
from service.sim.games import new_game, play

from .tables import Task

MEASUREMENT_ONLY: dict[str, dict[str, tuple[type, dict]]] = {
    "free-parking": {"omniscient": (ExpertBot, {"omniscient": True}), "open-hands": (ExpertBot, {"open_hands": True})},
}
"""Bots the league may field that no game may seat, each a class and what it is told that a seat may not see:
``omniscient`` the true table, decks' orders included; ``open-hands`` every hand."""


SEEDINGS: tuple[Seeding, ...] = ("legacy", "combined", "fixed")
"""Every seed counts in a league: its deals are its own, seeded from its command line."""


def names(kind: str) -> list[str]:
    return [*BOTS[kind], *MEASUREMENT_ONLY.get(kind, {})]


def make(kind: str, name: str, nodes: int | None = None) -> Bot:
    """The bot ``name`` of ``kind``, with ``nodes`` as its search budget where it searches."""
    cls, told = MEASUREMENT_ONLY.get(kind, {}).get(name) or (BOTS[kind][name], {})
    params = inspect.signature(cls).parameters
    kw: dict = dict(told)
    if nodes is not None:
        budget = next((p for p in ("nodes", "budget") if p in params), None)
        if budget is not None:
            kw[budget] = nodes
    return cls(**kw)


@dataclass(frozen=True)
class Outcome:
    table: tuple[str, ...]
    seating: tuple[str, ...]
    index: int
    winner: int | None
    """The seat the winner sat in at the start (a trade of places moves players, not their bots), or ``None``."""
    commands: int
    ranks: tuple[int, ...] | None = None
    """Each starting seat's place in the game's order of finish (RULES.md §4: 1 first, ties share), or ``None``
    (a solitaire, or a game that ended with no result)."""


def play_game(task: Task) -> Outcome:
    """Play ``task`` to its end; runs in a worker process when the league has ``--jobs`` > 1."""
    players = [make(task.kind, name, task.nodes) for name in task.seating]
    sim = new_game(task.kind, len(players), task.seed, f"league-{task.index:05d}", [p.name for p in players],
                   dict(task.options))
    start = [st.player for st in sim.game.state.seats]
    for _ in play(sim, [p.name for p in players], random.Random(task.bots_seed), players=players):
        pass
    s = sim.game.state
    won = s.winner
    winner = start.index(s.seats[won].player) if won is not None and len(s.seats) > 1 else won
    finish = rated_game(sim.envelopes, seeding=SEEDINGS) if len(s.seats) > 1 else None
    ranks = None
    if finish is not None:
        by_start = {start.index(s.seats[p.seat].player): p.rank for p in finish.places}
        ranks = tuple(by_start[i] for i in range(len(start)))
    return Outcome(task.table, task.seating, task.index, winner, len(sim.envelopes), ranks)
