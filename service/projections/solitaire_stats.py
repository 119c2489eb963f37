"""Each registered player's solitaire statistics: games played and won, win rate, best and median time.

A game's time runs from its first event to its last (envelope ``at``, ms: ``SolitaireScore.time_ms``). Games dealt
from a seed the player chose ("play deal N again") are counted apart from dealt ones: a known deal says little of
skill. Only finished games of registered players count (``results.registered``).

Every finished game's time is kept, keyed by its game id, in sorted sets: ``ns:proj:solitaire:{<player_id>}:``
``played:<bucket>`` and ``won:<bucket>`` (member the game id, score its time) and ``games`` (score its end). A
``ZADD`` of the same game and time changes nothing, so an upsert written twice — two projectors, a retry after a
crash, a replay — counts once, with no counters to keep in step. Counts are ``ZCARD``; the best time is the first
member and the median the middle one or two, read by rank: O(log n) for a player with thousands of games.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.store import Store

from .results import registered
from .scores import Scores

Bucket = Literal["dealt", "chosen_seed"]
BUCKETS: tuple[Bucket, ...] = ("dealt", "chosen_seed")


class SolitaireGame(msgspec.Struct, frozen=True, kw_only=True):
    """What one finished game adds to its player's statistics."""

    player_id: str
    game_id: str
    bucket: Bucket
    won: bool
    time_ms: int
    finished_at: int


class TimeStats(msgspec.Struct, kw_only=True):
    played: int = 0
    won: int = 0
    win_rate: float | None = None  # won / played; None before a first game
    best_ms: int | None = None  # the fastest win
    median_ms: int | None = None  # the median win (of an even count, the mean of the middle two, rounded down)
    median_played_ms: int | None = None  # the median of every finished game, won or lost


class SolitaireStats(msgspec.Struct, kw_only=True):
    """A player's solitaire statistics as of ``as_of`` (the end of the latest game counted, ms)."""

    player_id: str
    games: int = 0  # finished games counted, both buckets
    as_of: int | None = None
    dealt: TimeStats = msgspec.field(default_factory=TimeStats)
    chosen_seed: TimeStats = msgspec.field(default_factory=TimeStats)


def game_of(scores: Scores) -> SolitaireGame | None:
    """The statistics entry of a finished solitaire whose player is registered; ``None`` for any other game."""
    solo = scores.solitaire
    if scores.kind != "solitaire" or scores.status != "finished" or solo is None or solo.time_ms is None:
        return None
    player = scores.seats[0].player if scores.seats else None
    if not registered(player):
        return None
    assert player is not None and player.player_id is not None
    return SolitaireGame(
        player_id=player.player_id,
        game_id=scores.game_id,
        bucket="chosen_seed" if solo.seed_chosen else "dealt",
        won=solo.result == "won",
        time_ms=solo.time_ms,
        finished_at=scores.finished_at or 0,
    )


async def record(store: Store, scores: Scores) -> int:
    """Count a finished solitaire in its player's statistics; answers 1 if that was new, else 0."""
    game = game_of(scores)
    if game is None:
        return 0
    done = await store.project_solitaire(game.player_id, game.game_id, game.bucket, game.time_ms, game.won, game.finished_at)
    return int(done.applied)


def median(middle: list[int]) -> int | None:
    """The median from the one or two middle values of a sorted list (``middle_ranks``)."""
    return sum(middle) // len(middle) if middle else None


def middle_ranks(n: int) -> tuple[int, int]:
    """The ranks (0-based, inclusive) of the middle of ``n`` sorted values: one when ``n`` is odd, two when even."""
    return (n - 1) // 2, n // 2


async def read_stats(store: Store, player_id: str) -> SolitaireStats:
    """A player's statistics (zeros before a first counted game). Two round trips: the sizes, then by rank."""
    key = store.keys.player_projection
    sets = {(b, what): key("solitaire", player_id, f"{what}:{b}") for b in BUCKETS for what in ("played", "won")}
    games = key("solitaire", player_id, "games")
    pipe = store.r.pipeline(transaction=False)
    for name in sets.values():
        pipe.zcard(name)
    pipe.zcard(games)
    pipe.zrange(games, -1, -1, withscores=True)
    *sizes, total, last = await store._read(pipe.execute())
    size = dict(zip(sets, (int(n) for n in sizes), strict=True))
    pipe = store.r.pipeline(transaction=False)
    for b in BUCKETS:
        pipe.zrange(sets[(b, "won")], 0, 0, withscores=True)
        pipe.zrange(sets[(b, "won")], *middle_ranks(size[(b, "won")]), withscores=True)
        pipe.zrange(sets[(b, "played")], *middle_ranks(size[(b, "played")]), withscores=True)
    replies = iter(await store._read(pipe.execute()))
    out = SolitaireStats(player_id=player_id, games=int(total), as_of=int(last[0][1]) if last else None)
    for b in BUCKETS:
        best, won_middle, played_middle = next(replies), next(replies), next(replies)
        played, won = size[(b, "played")], size[(b, "won")]
        setattr(out, b, TimeStats(
            played=played,
            won=won,
            win_rate=won / played if played else None,
            best_ms=int(best[0][1]) if best else None,
            median_ms=median([int(t) for _, t in won_middle]) if won else None,
            median_played_ms=median([int(t) for _, t in played_middle]) if played else None,
        ))
    return out
