"""What a league's games say: each bot's win share at each table, with a 95% interval, and one rating per bot.

The rating is the service's own (RULES.md §4, ``service.rules.ratings``): OpenSkill's Plackett–Luce model with the
library's defaults, one update per game in the league's order (game index), each game by its order of finish, each
bot one rated player; a bot holding several seats of a game plays at its rating as it stands and keeps it, as a bot
kind does in the service. Shown as μ − 3σ. A kind played alone (solitaire) has no order of finish between bots in
one game: each deal counts as one game among the bots that played it, those that won it first, tied, then those that
lost it, tied. ``pairwise`` still counts who beat whom, for the JSON report.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from service.rules.ratings import MODEL, Place, RatedGame, Ratings, shown
from service.sim.intervals import wilson

from .games import Outcome

LEAGUE = "league"
"""The one kind a league's fold keeps its ratings under (its games are all of the league's own kind)."""


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


def _game(index: int, seating: tuple[str, ...], ranks: tuple[int, ...]) -> RatedGame:
    places = tuple(Place(seat=i, rank=rank, rated_id=bot, name=bot)
                   for i, (bot, rank) in enumerate(zip(seating, ranks, strict=True)))
    return RatedGame(game_id=f"league-{index:05d}", kind=LEAGUE, finished_at=index, version=0, places=places)


def games(outcomes: list[Outcome]) -> list[RatedGame]:
    """The league's games as the ratings fold takes them, in the league's order: a game by its order of finish (an
    outcome that has none, its winner first and the others tied), a solitaire deal as one game among its bots."""
    out: list[RatedGame] = []
    deals: dict[int, list[Outcome]] = defaultdict(list)
    for o in sorted(outcomes, key=lambda o: (o.index, o.seating)):
        if len(o.seating) == 1:
            deals[o.index].append(o)
        elif o.ranks is not None or o.winner is not None:
            ranks = o.ranks or tuple(1 if i == o.winner else 2 for i in range(len(o.seating)))
            out.append(_game(len(out), o.seating, ranks))
    for index in sorted(deals):
        same = deals[index]
        if len(same) > 1:
            ranks = tuple(1 if o.winner is not None else 2 for o in same)
            out.append(_game(len(out), tuple(o.seating[0] for o in same), ranks))
    return out


def rate(bots: list[str], outcomes: list[Outcome]) -> dict[str, float]:
    """Each bot's rating (μ − 3σ) after every game of the league; a bot no game moved keeps the model's start (0)."""
    ratings = Ratings()
    for game in games(outcomes):
        ratings.add(game)
    table = ratings.kinds.get(LEAGUE, {})
    start = shown(MODEL.mu, MODEL.sigma)
    return {bot: table[bot].shown if bot in table else start for bot in bots}
