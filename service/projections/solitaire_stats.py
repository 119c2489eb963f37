"""Each registered player's solitaire statistics (RULES.md §2): games started, finished and won, the win rate over
games started, best and median time.

- **Started** when dealt: the seat taken deals the layout, and the player has seen it. A deal looked at and left
  without a move is an abandoned deal, and counts (RULES.md: "the win rate over games started, so an abandoned deal
  counts"); counting from the first move instead would let a player pass over deals they dislike for free.
- **Finished**: won, resigned, lost under rules version 1 (``no_moves``), or closed by the server (``idle``).
- **Time**: from the game's first move to its last (a move, redeal or undo; ``SolitaireScore.time_ms``), kept for
  finished games with a move. Best and median over won games; ``median_played_ms`` over finished ones.
- **Apart**: games on a seed the player chose ("play deal N again") and games in which a redeal was undone (the
  player has seen that redeal) are counted in buckets of their own, since a known deal says little of skill; a
  chosen-seed game stays in ``chosen_seed`` whatever else happens. A game moves from ``dealt`` to ``redeal_undone``
  when its redeal is undone. Only games of registered players count (``results.registered``).

How it is kept: each time a game's entry (``game_of``: bucket, deal, end, result, time) changes, the projector
upserts it with the game's version (``Store.project_solitaire_game``, one script in the player's slot): the game is
taken out of every bucket and written into its own — ``started:<bucket>`` (score: the deal's time), and once it
ended ``finished:<bucket>`` (its end), ``times:<bucket>`` (its time) and ``wins:<bucket>`` (its time, won) — and an
older or repeated version is refused. So a game upserted twice (two projectors, a retry, a replay) counts once, the
sets always hold each game's newest snapshot, and a ``rebuild`` gives what the projector built. Counts are
``ZCARD``; the best time is rank 0 and a median the middle rank or two: a read is two round trips.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.store.store import Store

from .results import registered
from .scores import Scores

Bucket = Literal["dealt", "chosen_seed", "redeal_undone"]
BUCKETS: tuple[Bucket, ...] = ("dealt", "chosen_seed", "redeal_undone")


class SolitaireGame(msgspec.Struct, frozen=True, kw_only=True):
    """What one solitaire, at some version, adds to its player's statistics."""

    player_id: str
    game_id: str
    bucket: Bucket
    started_at: int
    finished_at: int | None = None
    won: bool = False
    time_ms: int | None = None


class TimeStats(msgspec.Struct, kw_only=True):
    started: int = 0  # games dealt
    finished: int = 0  # games ended: won, resigned, lost (rules version 1) or closed for nobody playing
    won: int = 0
    win_rate: float | None = None  # won / started (RULES.md §2); None before a first game
    finished_win_rate: float | None = None  # won / finished (what win_rate was before started games counted)
    best_ms: int | None = None  # the fastest win, first move to last
    median_ms: int | None = None  # the median win (of an even count, the mean of the middle two, rounded down)
    median_played_ms: int | None = None  # the median of every finished game that had a move, won or lost
    played: int = 0  # the same as finished: its name before started games counted


class SolitaireStats(msgspec.Struct, kw_only=True):
    """A player's solitaire statistics as of ``as_of`` (the latest deal or end counted, ms)."""

    player_id: str
    started: int = 0  # games started, every bucket
    games: int = 0  # games finished, every bucket
    as_of: int | None = None
    dealt: TimeStats = msgspec.field(default_factory=TimeStats)
    chosen_seed: TimeStats = msgspec.field(default_factory=TimeStats)
    redeal_undone: TimeStats = msgspec.field(default_factory=TimeStats)


def bucket_of(scores: Scores) -> Bucket:
    solo = scores.solitaire
    assert solo is not None
    return "chosen_seed" if solo.seed_chosen else "redeal_undone" if solo.redeal_undone else "dealt"


def game_of(scores: Scores | None) -> SolitaireGame | None:
    """The statistics entry of a dealt solitaire whose player is registered; ``None`` for any other game."""
    solo = scores.solitaire if scores is not None else None
    if scores is None or scores.kind != "solitaire" or solo is None or solo.dealt_at is None:
        return None
    player = scores.seats[0].player if scores.seats else None
    if not registered(player):
        return None
    assert player is not None and player.player_id is not None
    finished = scores.status == "finished"
    return SolitaireGame(
        player_id=player.player_id,
        game_id=scores.game_id,
        bucket=bucket_of(scores),
        started_at=solo.dealt_at,
        finished_at=scores.finished_at if finished else None,
        won=solo.result == "won",
        time_ms=solo.time_ms if finished else None,
    )


async def record(store: Store, before: Scores | None, after: Scores) -> int:
    """Count a solitaire's change from ``before`` to ``after`` in its player's statistics; answers 1 if it was new."""
    game = game_of(after)
    if game is None or game == game_of(before):
        return 0
    done = await store.project_solitaire_game(
        game.player_id, game.game_id, after.version, list(BUCKETS), game.bucket, game.started_at, game.finished_at,
        game.time_ms, game.won,
    )  # fmt: skip
    return int(done.applied)


def median(middle: list[int]) -> int | None:
    """The median from the one or two middle values of a sorted list (``middle_ranks``)."""
    return sum(middle) // len(middle) if middle else None


def middle_ranks(n: int) -> tuple[int, int]:
    """The ranks (0-based, inclusive) of the middle of ``n`` sorted values: one when ``n`` is odd, two when even."""
    return (n - 1) // 2, n // 2


def rate(won: int, of: int) -> float | None:
    return won / of if of else None


async def read_stats(store: Store, player_id: str) -> SolitaireStats:
    """A player's statistics (zeros before a first counted game). Two round trips: the sizes, then by rank."""
    key = store.keys.player_projection
    sets = {(b, what): key("solitaire", player_id, f"{what}:{b}") for b in BUCKETS for what in ("started", "finished", "times", "wins")}
    pipe = store.r.pipeline(transaction=False)
    for name in sets.values():
        pipe.zcard(name)
    pipe.zrange(key("solitaire", player_id, "latest"), -1, -1, withscores=True)
    *sizes, last = await store._read(pipe.execute())
    size = dict(zip(sets, (int(n) for n in sizes), strict=True))
    pipe = store.r.pipeline(transaction=False)
    for b in BUCKETS:
        pipe.zrange(sets[(b, "wins")], 0, 0, withscores=True)
        pipe.zrange(sets[(b, "wins")], *middle_ranks(size[(b, "wins")]), withscores=True)
        pipe.zrange(sets[(b, "times")], *middle_ranks(size[(b, "times")]), withscores=True)
    replies = iter(await store._read(pipe.execute()))
    out = SolitaireStats(player_id=player_id, as_of=int(last[0][1]) if last else None)
    for b in BUCKETS:
        best, won_middle, timed_middle = next(replies), next(replies), next(replies)
        started, finished, won = size[(b, "started")], size[(b, "finished")], size[(b, "wins")]
        setattr(out, b, TimeStats(
            started=started,
            finished=finished,
            won=won,
            win_rate=rate(won, started),
            finished_win_rate=rate(won, finished),
            best_ms=int(best[0][1]) if best else None,
            median_ms=median([int(t) for _, t in won_middle]) if won else None,
            median_played_ms=median([int(t) for _, t in timed_middle]) if size[(b, "times")] else None,
            played=finished,
        ))  # fmt: skip
        out.started += started
        out.games += finished
    return out
