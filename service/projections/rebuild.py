"""Rebuild: drop every read model and the consumer groups, then replay every game's stream (and relay its outbox).

Games are found in the partition logs (in the order they first appear) and — the logs are trimmed once every
projector applied them (service/store/logtrim.py) — in the lobby's indexes, which list every game by status
(an archived game too: its events are read from the archive), and by scanning the game streams. Each log's consumer group is created again at the last entry read before the replay,
so a projector started afterwards picks up exactly what was appended since. Meant to run while no projector
does (a running one is harmless — every write is a compare-and-set — but it would redo work).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis import exceptions as rex

from service.store.archive import ArchiveDamaged
from service.store.keys import PARTITIONS, STATUSES
from service.store.store import Store

from .projector import MAX_EVENTS, Stats, project_games, tell_players

PAGE = 5000
REBUILD_BATCH = 32
"""Games replayed together (their streams read in one pipeline): a rebuild's ``concurrency``, unless it is given."""


@dataclass
class Rebuilt:
    games: int
    events: int
    dropped_keys: int
    seconds: float

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


async def drop_groups(store: Store) -> int:
    """Destroy every consumer group of every partition log; answers how many."""
    dropped = 0
    for p in range(PARTITIONS):
        key = store.keys.log(p)
        try:
            groups = await store._read(store.r.xinfo_groups(key))
        except rex.ResponseError:  # no such log
            continue
        for g in groups:
            dropped += await store._read(store.r.xgroup_destroy(key, g["name"]))
    return dropped


async def games_in_logs(store: Store) -> tuple[list[str], dict[int, str]]:
    """Every game a partition log names, in order of first appearance, and the last entry id of each log."""
    seen: dict[str, None] = {}
    marks: dict[int, str] = {}
    for p in range(PARTITIONS):
        start = "-"
        while True:
            rows = await store._read(store.r.xrange(store.keys.log(p), start, "+", count=PAGE))
            for entry_id, fields in rows:
                seen.setdefault(fields[b"game"].decode(), None)
            if rows:
                marks[p] = rows[-1][0].decode()
                start = "(" + marks[p]
            if len(rows) < PAGE:
                break
    return list(seen), marks


async def games_in_streams(store: Store) -> list[str]:
    """Every game that has a stream (``ns:game:{pN}:<id>``), by scanning the keys."""
    prefix = f"{store.keys.ns}:game:"
    out = []
    async for key in store.r.scan_iter(match=f"{prefix}*", count=1000):
        rest = key.decode()[len(prefix) :]
        out.append(rest.split("}:", 1)[1])
    return sorted(out)


async def games_in_indexes(store: Store) -> list[str]:
    """Every game the partitions' indexes list (each game is in one of its statuses), oldest first in a partition."""
    pipe = store.r.pipeline(transaction=False)
    for p in range(PARTITIONS):
        for status in STATUSES:
            pipe.zrange(store.keys.index(p, status), 0, -1)
    return [g.decode() for ids in await store._read(pipe.execute()) for g in ids]


async def all_games(store: Store) -> tuple[list[str], dict[int, str]]:
    games, marks = await games_in_logs(store)
    seen = dict.fromkeys(games)
    for found in (await games_in_indexes(store), await games_in_streams(store)):
        seen.update(dict.fromkeys(g for g in found if g not in seen))
    return list(seen), marks


class RebuildRefused(Exception):
    """A rebuild that could not replay every game is refused before it drops anything."""


async def _archived_games_readable(store: Store, games: list[str]) -> None:
    """Every archived game's file is in the archive this rebuild reads, and reads whole: else a rebuild would drop
    those games' read models and put nothing back (a rebuild run without the service's ``--archive``), or stop half
    done at the first damaged file, every game after it without its read models. An archive that cannot be read at
    all raises ``ArchiveError`` here, before anything is dropped, too."""
    metas = await store.metas(games)
    archived = [g for g, meta in zip(games, metas, strict=True) if meta and meta.get("archived") == "1"]
    if not archived:
        return
    if store.archive is None:
        raise RebuildRefused(f"{len(archived)} games are archived and no archive is set: give the service's --archive")
    missing = [g for g in archived if not await asyncio.to_thread(store.archive.exists, g)]
    if missing:
        raise RebuildRefused(f"{len(missing)} of {len(archived)} archived games are not in the archive {store.archive.root} "
                             f"(e.g. {', '.join(missing[:3])}): is it the service's --archive? Nothing was dropped.")
    damaged = []
    for game_id in archived:  # read whole, as the replay will: a damaged file found there would stop it half done
        try:
            await store.read(game_id)  # the archived log, checked as every read checks it (its version and head too)
        except ArchiveDamaged as e:
            damaged.append(str(e))
    if damaged:
        raise RebuildRefused(f"{len(damaged)} of {len(archived)} archived games' files are damaged ({'; '.join(damaged[:3])}): "
                             "restore them from a backup (or the players' own exports) first. Nothing was dropped.")


async def rebuild(
    store: Store,
    *,
    group: str = "projectors",
    concurrency: int | None = None,
    max_events: int = MAX_EVENTS,
    on_game: Callable[[str, int], None] | None = None,
    on_games: Callable[[int], None] | None = None,
) -> Rebuilt:
    """Drop every projection and consumer group, replay every game, then create ``group`` again after what was read.

    ``on_games(total)`` is told how many games there are, ``on_game(game_id, events)`` of each one replayed.
    """
    started = time.perf_counter()
    games, marks = await all_games(store)
    await _archived_games_readable(store, games)
    await drop_groups(store)
    dropped = await store.drop_projections()
    if on_games:
        on_games(len(games))
    stats = Stats()
    # games in batches: each batch's checkpoints, streams and writes in one round trip each (``project_games``)
    batch = REBUILD_BATCH if concurrency is None else max(1, concurrency)
    for i in range(0, len(games), batch):
        part = games[i : i + batch]
        outcome = await project_games(store, dict.fromkeys(part), max_events=max_events, stats=stats,
                                      batch_games=batch, batch_events=max_events)
        for game_id in part:
            done = outcome[game_id]
            if isinstance(done, Exception):
                raise done
            if on_game:
                on_game(game_id, done[1])
        # the group is created again past the pointers read: one that a worker dead before its relay left pending would
        # have had the projector relay the game's outbox, so the rebuild relays every outbox itself (most are empty)
        for error in (await tell_players(store, set(part))).values():
            raise error
    for p in range(PARTITIONS):
        try:
            await store._read(store.r.xgroup_create(store.keys.log(p), group, id=marks.get(p, "0"), mkstream=True))
        except rex.ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise
    return Rebuilt(len(games), stats.events, dropped, time.perf_counter() - started)


async def read_all(
    store: Store, games: list[str], *, concurrency: int | None = None, max_events: int = MAX_EVENTS
) -> tuple[int, float]:
    """The baseline a rebuild is measured against: ``XRANGE`` and decode every game's stream, nothing else — read as
    a rebuild reads them (``concurrency`` games per pipeline).

    Answers ``(events, seconds)``.
    """
    started = time.perf_counter()
    batch = REBUILD_BATCH if concurrency is None else max(1, concurrency)
    total = 0
    for i in range(0, len(games), batch):
        after = dict.fromkeys(games[i : i + batch], 0)
        while after:
            reads = await store.read_many([(g, a, max_events) for g, a in after.items()])
            following = {}
            for (g, _), envelopes in zip(after.items(), reads, strict=True):
                total += len(envelopes)
                if len(envelopes) >= max_events:
                    following[g] = envelopes[-1].seq
            after = following
    return total, time.perf_counter() - started
