"""What a league's games say: each bot's win share at each table, with a 95% interval, and one rating per bot.

The rating is Elo-style: a Bradley–Terry model fitted to the league's pairwise results (in a game, its winner beat
every other seat held by a different bot; in a kind played alone, a bot that won a deal beat one that lost the same
deal), put on the Elo scale — 400 points of difference mean ten to one odds — with the field's mean at 1500.
Each pair also counts half a win each way, so that a bot that never won has a finite rating.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from service.sim.intervals import wilson

from .games import Outcome

MEAN = 1500.0


@dataclass(frozen=True)
class Share:
    """How one bot did at one table."""

    table: tuple[str, ...]
    bot: str
    seats: int
    games: int
    won: int

    @property
    def share(self) -> float:
        """Games won per seat held: 1 / seats is what an equal player would win."""
        return self.won / (self.games * self.seats)

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.won, self.games * self.seats)

    @property
    def fair(self) -> float:
        return 1 / len(self.table) if len(self.table) > 1 else math.nan


def shares(outcomes: list[Outcome]) -> list[Share]:
    """Every (table, bot) pair, in the order the tables were first played."""
    games: dict[tuple[str, ...], int] = defaultdict(int)
    won: dict[tuple[tuple[str, ...], str], int] = defaultdict(int)
    for o in outcomes:
        games[o.table] += 1
        if o.winner is not None:
            won[o.table, o.seating[o.winner]] += 1
    return [Share(table, bot, table.count(bot), games[table], won[table, bot])
            for table in games for bot in dict.fromkeys(table)]


def pairwise(outcomes: list[Outcome]) -> dict[tuple[str, str], int]:
    """``wins[a, b]``: how often bot ``a`` beat bot ``b``."""
    wins: dict[tuple[str, str], int] = defaultdict(int)
    alone = [o for o in outcomes if len(o.seating) == 1]
    for o in outcomes:
        if len(o.seating) > 1 and o.winner is not None:
            best = o.seating[o.winner]
            for i, other in enumerate(o.seating):
                if i != o.winner and other != best:
                    wins[best, other] += 1
    deals: dict[int, list[Outcome]] = defaultdict(list)
    for o in alone:
        deals[o.index].append(o)
    for same in deals.values():
        for a in same:
            for b in same:
                if a.winner is not None and b.winner is None and a.seating != b.seating:
                    wins[a.seating[0], b.seating[0]] += 1
    return dict(wins)


def elo(bots: list[str], wins: dict[tuple[str, str], int], iterations: int = 2_000) -> dict[str, float]:
    """Bradley–Terry strengths by the MM algorithm (Hunter, 2004), on the Elo scale with mean ``MEAN``."""
    w = {(a, b): wins.get((a, b), 0) + 0.5 for a in bots for b in bots if a != b}
    strength = dict.fromkeys(bots, 1.0)
    for _ in range(iterations):
        new = {}
        for a in bots:
            games = sum((w[a, b] + w[b, a]) / (strength[a] + strength[b]) for b in bots if b != a)
            new[a] = sum(w[a, b] for b in bots if b != a) / games if games else 1.0
        scale = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        strength = {a: v / scale for a, v in new.items()}
    return {a: MEAN + 400 * math.log10(strength[a]) for a in bots}
