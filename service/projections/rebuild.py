"""Rebuild: drop every read model and the consumer groups, then replay every game's stream.

Games are found in the partition logs (in the order they first appear) and, in case a log was ever trimmed, by
scanning the game streams. Each log's consumer group is created again at the last entry read before the replay,
so a projector started afterwards picks up exactly what was appended since. Meant to run while no projector
does (a running one is harmless — every write is a compare-and-set — but it would redo work).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis import exceptions as rex

from service.events.keys import PARTITIONS
from service.events.store import Store

from .projector import MAX_EVENTS, Stats, project_game

PAGE = 5000


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


async def all_games(store: Store) -> tuple[list[str], dict[int, str]]:
    games, marks = await games_in_logs(store)
    known = set(games)
    games += [g for g in await games_in_streams(store) if g not in known]
    return games, marks


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
    await drop_groups(store)
    dropped = await store.drop_projections()
    games, marks = await all_games(store)
    if on_games:
        on_games(len(games))
    stats = Stats()
    gate = asyncio.Semaphore(concurrency or (1 if store.name == "embedded" else 16))

    async def one(game_id: str) -> None:
        async with gate:
            mine = Stats()
            await project_game(store, game_id, None, max_events=max_events, stats=mine)
            stats.add(mine)
            if on_game:
                on_game(game_id, mine.events)

    await asyncio.gather(*(one(g) for g in games))
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
    """The baseline a rebuild is measured against: ``XRANGE`` and decode every game's stream, nothing else.

    Answers ``(events, seconds)``.
    """
    started = time.perf_counter()
    gate = asyncio.Semaphore(concurrency or (1 if store.name == "embedded" else 16))
    total = 0

    async def one(game_id: str) -> None:
        nonlocal total
        async with gate:
            after = 0
            while True:
                envelopes = await store.read(game_id, after=after, count=max_events)
                total += len(envelopes)
                if len(envelopes) < max_events:
                    return
                after = envelopes[-1].seq

    await asyncio.gather(*(one(g) for g in games))
    return total, time.perf_counter() - started
