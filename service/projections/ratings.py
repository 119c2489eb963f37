"""Ratings (RULES.md §4): the rated games, kept order-free, and the order-dependent fold made when they are read.

Every other read model here is order-free: a game's result lands whenever the game is projected. Ratings are not —
each rated game updates the ratings the games before it left, in the order games finished. So the projection keeps
only what is order-free, each rated game's place list (``RatedGame``, from ``service.rules.ratings``, the very
function ``python -m replays ratings`` runs on exports), upserted per game like the players' results
(``Store.project_rated_game``: idempotent, a later version of a game replaces an earlier one). The fold itself is
made on reading, over every rated game of the kind in the order they finished — the offline fold, by construction.

A reader keeps its last fold per kind: when the games read extend the ones it folded (each new one finished after
the last folded), only the new ones are folded; when one arrived out of order (a game on another partition, projected
later, that finished earlier) or changed, the fold starts again from the first game. Either way the answer equals a
fold of every rated game from nothing.

Key (one slot per kind, tag ``{rt}``): ``ns:proj:ratings:{rt}:<kind>`` — hash: ``g:<game_id>`` (the ``RatedGame`` as
JSON), ``c:<game_id>`` (its version) and ``seq``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import msgspec

from service.rules.ratings import (RATED_KINDS, RATED_SEEDING, RatedGame, Rating, RatingChange, Ratings, ordered,
                                  rated_game)
from service.store.store import Store

from .scores import Scores

_encoder = msgspec.json.Encoder()
_game = msgspec.json.Decoder(RatedGame)


async def record(store: Store, scores: Scores) -> int:
    """Upsert a finished game's place list into its kind's rated games; answers 1 if it was new, else 0 (not rated,
    or already stored at this version). Called on every apply of a finished game, so its entry follows the last event
    (the fold orders games by the time of their last event)."""
    if scores.status != "finished" or scores.kind not in RATED_KINDS:
        return 0
    stored = await store._read(store.r.hget(store.keys.ratings(scores.kind), f"c:{scores.game_id}"))
    if stored is not None and int(stored.split(b" ")[0]) >= scores.version:
        return 0  # the repeat after the checkpoint moved, or a replay: the game's log is not read again
    meta = await store.meta(scores.game_id)
    if meta is not None and meta.get("seeding", "combined") not in RATED_SEEDING:
        return 0  # an admin's seed (the game's metadata says so): not rated, and its log need not be read to know it
    game = rated_game(await store.read(scores.game_id, count=scores.version))
    if game is None:
        return 0
    done = await store.project_rated_game(game.kind, game.game_id, game.version, _encoder.encode(game))
    return int(done.applied)


@dataclass
class _Fold:
    """A reader's last fold of one kind: the games folded (their order and version) and what they gave."""

    folded: list[tuple[tuple[int, str], int]] = field(default_factory=list)
    ratings: Ratings = field(default_factory=Ratings)
    changes: dict[str, list[RatingChange]] = field(default_factory=dict)  # game id -> what it did to each rated seat
    refolds: int = 0  # folds started again from the first game (a game arrived out of order): for tests and metrics


_folds: weakref.WeakKeyDictionary[Store, dict[str, _Fold]] = weakref.WeakKeyDictionary()


async def rated_games(store: Store, kind: str) -> list[RatedGame]:
    """Every rated game of ``kind`` the projection holds, in the order they finished."""
    raw = await store._read(store.r.hgetall(store.keys.ratings(kind)))
    return ordered(_game.decode(v) for k, v in raw.items() if k.startswith(b"g:"))


async def read_kind(store: Store, kind: str) -> Ratings:
    """The ratings of ``kind`` after every rated game projected so far (equal to ``fold`` of them all)."""
    games = await rated_games(store, kind)
    marks = [(g.order, g.version) for g in games]
    mine = _folds.setdefault(store, {})
    last = mine.get(kind)
    if last is None or marks[: len(last.folded)] != last.folded:
        last = mine[kind] = _Fold(refolds=last.refolds + 1 if last is not None else 0)
    for game in games[len(last.folded) :]:
        last.changes[game.game_id] = last.ratings.add(game)
        last.folded.append((game.order, game.version))
    return last.ratings


async def read_game_changes(store: Store, kind: str, game_id: str) -> list[RatingChange] | None:
    """What a rated game did to each rated seat's rating (before and after it); ``None`` when the game is not among
    the rated games (not rated, or not projected yet)."""
    await read_kind(store, kind)
    return _folds[store][kind].changes.get(game_id)


def refolds(store: Store, kind: str) -> int:
    """How many times this process started ``kind``'s fold again because a game arrived out of order."""
    last = _folds.get(store, {}).get(kind)
    return last.refolds if last is not None else 0


async def read_ratings(store: Store, kind: str) -> list[Rating]:
    """One kind's ratings, best first."""
    return (await read_kind(store, kind)).table(kind)


async def read_player_ratings(store: Store, rated_id: str) -> dict[str, Rating]:
    """A rated player's rating in each kind they have one."""
    out = {}
    for kind in sorted(RATED_KINDS):
        rating = (await read_kind(store, kind)).kinds.get(kind, {}).get(rated_id)
        if rating is not None:
            out[kind] = rating
    return out
