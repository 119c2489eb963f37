"""The ratings fold: OpenSkill's Plackett–Luce model with the library's defaults, one update per rated game in the
order games finished (RULES.md §4). The maths is the ``openskill`` package's (its version pinned in pyproject.toml);
what is ours is which games go in, in what order, and who changes.

Who changes: each rated player holding exactly one seat of the game. A rated player holding several (a bot kind
playing itself, a person seated twice) takes part in every one of its seats with its rating as it stands, and
keeps it; a guest takes part at the model's starting rating and has none to keep. The rating shown is μ − 3σ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import msgspec
from openskill.models import PlackettLuce

from service.events.base import Account

from .finish import Place, RatedGame

MODEL = PlackettLuce()
"""The library's defaults: μ 25, σ 25/3, its β and τ."""


class Rating(msgspec.Struct, kw_only=True):
    """One rated player's standing in one kind: the model's ``mu`` and ``sigma`` after ``games`` rated games."""

    rated_id: str
    name: str
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    account: Account = "person"

    @property
    def shown(self) -> float:
        return shown(self.mu, self.sigma)


class RatingRow(msgspec.Struct, kw_only=True):
    """A row of a kind's ratings table, as ``GET /ratings`` and ``python -m replays ratings --json`` both print it:
    ``player_id`` is the rated id (a registered player's id, or ``bot:<kind>`` for a bot kind), ``rating`` μ − 3σ."""

    rank: int  # equal ratings share a rank (1, 2, 2, 4)
    player_id: str
    name: str
    rating: float
    mu: float
    sigma: float
    games: int
    account: Account = "person"
    """``bot`` for a bot kind and a bot account (a program registered as one: ``POST /players``), else ``person``."""


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """What one rated game did to one seat's player: the rating shown before and after (equal when it did not move)."""

    seat: int
    player_id: str  # the rated id, as in the table
    name: str
    before: float
    after: float


def _account(place: Place) -> Account:
    """A bot kind (``bot:<kind>``) is a bot; a registered player is what they registered as, at their last game."""
    return "bot" if (place.rated_id or "").startswith("bot:") or place.account == "bot" else "person"


def shown(mu: float, sigma: float) -> float:
    """The rating shown: μ − 3σ (the model's ordinal)."""
    return mu - 3 * sigma


def ordered(games: Iterable[RatedGame]) -> list[RatedGame]:
    """Rated games in the order they finished (the time of the last event, then the game id)."""
    return sorted(games, key=lambda g: g.order)


class Ratings:
    """Every kind's ratings after the games folded so far; ``add`` folds one more (it must finish after the last)."""

    def __init__(self) -> None:
        self.kinds: dict[str, dict[str, Rating]] = {}
        self.last: tuple[int, str] | None = None
        self.folded = 0

    def add(self, game: RatedGame) -> list[RatingChange]:
        """Fold ``game``; answers each rated seat's change. A game finishing before the last one folded is refused:
        the fold is order-dependent, so such a game means folding again from the start (``fold``)."""
        if self.last is not None and game.order <= self.last:
            raise ValueError(f"game {game.game_id} finished before the last game folded ({self.last[1]}): fold again")
        self.last = game.order
        self.folded += 1
        table = self.kinds.setdefault(game.kind, {})
        seats = Counter(p.rated_id for p in game.places if p.rated_id is not None)
        current = [table.get(p.rated_id) if p.rated_id else None for p in game.places]
        teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma) if r else MODEL.rating()] for r in current]
        rated = MODEL.rate(teams, ranks=[p.rank for p in game.places])
        changes = []
        for place, now, [new] in zip(game.places, current, rated, strict=True):
            if place.rated_id is None:
                continue
            before = now or Rating(rated_id=place.rated_id, name=place.name)
            if seats[place.rated_id] == 1:
                table[place.rated_id] = Rating(rated_id=place.rated_id, name=place.name, mu=new.mu, sigma=new.sigma,
                                               games=before.games + 1, account=_account(place))
            changes.append(RatingChange(seat=place.seat, player_id=place.rated_id, name=place.name, before=before.shown,
                                  after=table.get(place.rated_id, before).shown))
        return changes

    def table(self, kind: str) -> list[Rating]:
        """One kind's ratings, best shown rating first (then the rated id: equal ratings list alike everywhere)."""
        return sorted(self.kinds.get(kind, {}).values(), key=lambda r: (-r.shown, r.rated_id))

    def ranked(self, kind: str, limit: int | None = None) -> list[RatingRow]:
        """One kind's table, ranked: the rows the service and the offline tool print alike."""
        out: list[RatingRow] = []
        for i, r in enumerate(self.table(kind)[:limit]):
            tied = out and out[-1].rating == r.shown
            rank = out[-1].rank if tied else i + 1
            out.append(RatingRow(rank=rank, player_id=r.rated_id, name=r.name, rating=r.shown,
                                 mu=r.mu, sigma=r.sigma, games=r.games, account=r.account))
        return out

    def of(self, rated_id: str) -> dict[str, Rating]:
        """One rated player's rating in each kind they have one."""
        return {kind: table[rated_id] for kind, table in sorted(self.kinds.items()) if rated_id in table}


def fold(games: Iterable[RatedGame]) -> Ratings:
    """Every rated game folded, in the order they finished: what the service publishes and the offline tool prints."""
    out = Ratings()
    for game in ordered(games):
        out.add(game)
    return out
