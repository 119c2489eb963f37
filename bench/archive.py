"""Benchmark 11: what archiving frees, and what reading an archived game costs (docs/operating.md, "Archive").

11: a private redis-server's ``used_memory_rss`` holding 10,000 finished card games (played to their end by random
bots, written through the store's append path, their read models projected), after every game is archived
(``Archiver.archive_game``: file written and fsynced, read back, events removed) and the partition logs trimmed
past the projectors (``trim_logs``, as a running projector does once ``--log-keep-ms`` has passed), over before.
Redis hands freed pages back with ``MEMORY PURGE``, as a long-running server does over time; both figures are in
the detail.

11r: ``GET /games/{id}`` of an archived game over a finished game still in the store, each read cold (a game the
worker has not cached: folded from the archive's file, or from the stream), on a service in this process.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
import time

import httpx

from service.api.app import create_app, serving_here
from service.api.archiver import Archiver
from service.api.games import Games
from service.api.settings import Settings
from service.store.archive import Archive
from service.store.logtrim import trim_logs
from service.store.redis_store import RedisStore
from service.projections.rebuild import rebuild

from . import games as g
from . import procs
from .report import Measure

COPIES = 10
READS = 300
"""Games read cold for 11r, each kind; the live ones are written after 11 is measured, so they weigh nothing in it."""
MB = 1024 * 1024


def measures() -> dict[str, Measure]:
    return {
        "11": Measure("11", "Redis RSS, 10,000 finished card games, after archiving (and a restart)", "before archiving", 0.10, "max"),
        "11r": Measure("11r", "GET /games/{id} of an archived game, cold", "a finished game in Redis, cold", 3.0, "max",
                       note="no target in the issue: 3× is ours"),
    }


def run(args, ms: dict[str, Measure], log) -> None:
    if args.redis_url:
        raise RuntimeError("needs a redis-server of its own (its memory is the measure): run without --redis-url")
    n = args.memory_games
    processes = min(4, os.cpu_count() or 1)
    log(f"  simulating {n // COPIES:,} card games to their end, {COPIES} copies of each under other ids")
    logs = g.simulate_many(range(7 * 10**6, 7 * 10**6 + (n + READS) // COPIES), None, processes=processes, copies=COPIES)
    # the logs live to the end (millions of objects): frozen, the collector stops walking them — a full collection of
    # 3,300 took 4–5 s here, the event loop standing still past redis-py's 5 s socket timeout for a read in flight
    gc.collect()
    gc.freeze()
    # the archive in memory where the machine has one (/dev/shm): the measure is Redis's memory, not the disk's fsyncs
    where = "/dev/shm" if os.path.isdir("/dev/shm") else None
    try:
        with procs.redis_server() as redis, tempfile.TemporaryDirectory(prefix="fp-bench-archive-", dir=where) as folder:
            with Pauses() as pauses:
                asyncio.run(_measure(redis.url, folder, logs[:n], logs[n:], ms, log))
    finally:
        gc.unfreeze()
    log(f"  longest garbage collection in the measure: {pauses.longest * 1000:.0f} ms")


class Pauses:
    """The longest pause of the garbage collector while it is entered (``gc.callbacks``): the event loop stands still
    for as long, and a read in flight meanwhile counts the pause against its timeout."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._since = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._since = time.perf_counter()
        else:
            self.longest = max(self.longest, time.perf_counter() - self._since)

    def __enter__(self) -> Pauses:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def _measure(url: str, folder: str, logs: list, extra: list, ms: dict[str, Measure], log) -> None:
    store = RedisStore.from_url(url, namespace="fp")
    store.archive = Archive(folder)
    try:
        await g.write_many(store, logs)
        await rebuild(store)
        before = await _rss(store)
        events = sum(lg.events for lg in logs)
        log(f"  {len(logs):,} finished games, {events:,} events: {before / MB:.0f} MB RSS; archiving")
        archiver = Archiver(Games(store, cache_size=64), store.archive, 0, None, "bench")
        archived = [lg.game_id for lg in logs]
        started = time.perf_counter()
        outcomes = [await archiver.archive_game(gid) for gid in archived]
        spent = time.perf_counter() - started
        assert set(outcomes) == {"archived"}, set(outcomes)
        trimmed = await trim_logs(store, keep_ms=0)
        await store.r.memory_purge()
        purged = await _rss(store)
        used = int((await store.r.info("memory"))["used_memory"])
        after = await _restarted(store)
        ms["11"].add(after / before, f"{before / MB:.0f} MB → {purged / MB:.0f} MB RSS in place ({used / MB:.0f} MB used, "
                                     f"{purged / before:.2f}×) → {after / MB:.0f} MB restarted for {len(logs):,} games, {events:,} events, "
                                     f"archived at {len(archived) / spent:.0f} games/s (fsync each, on "
                                     f"{'tmpfs' if folder.startswith('/dev/shm') else 'disk'}), {trimmed:,} log entries trimmed")
        await g.write_many(store, extra)
        await rebuild(store)
        live = [lg.game_id for lg in extra]
        cold_archived, cold_live = await _cold_reads(url, folder, archived[:READS], live[:READS])
        ms["11r"].add(cold_archived / cold_live, f"{cold_archived * 1000:.2f} ms vs {cold_live * 1000:.2f} ms a cold GET")
        log(f"  {ms['11'].details[-1]}; {ms['11r'].details[-1]}")
    finally:
        await store.close()


async def _rss(store: RedisStore) -> int:
    return int((await store.r.info("memory"))["used_memory_rss"])


async def _restarted(store: RedisStore) -> int:
    """Redis's RSS once restarted on the same data (``DEBUG RELOAD``: saved and loaded again, as a Redis with AOF or
    RDB is after a restart): the pages the archived games' holes kept are gone. In place, ``activedefrag yes`` gives
    them back over time on a Redis built with its own jemalloc (the official image); Debian's redis-server, the one
    here, is built without it and refuses it."""
    await store.r.execute_command("DEBUG", "RELOAD")
    await store.r.memory_purge()
    return await _rss(store)


async def _cold_reads(url: str, folder: str, archived: list[str], live: list[str]) -> tuple[float, float]:
    """Seconds a GET of each game takes, read once each (cold), archived games and live ones alternated."""
    settings = Settings(redis_url=url, namespace="fp", archive_dir=folder, runner=False, projector=False,
                        receipts=False, rate_limits=False, data_dir=os.path.join(folder, "data"))
    app = create_app(settings, name=f"bench_archive_{os.getpid()}")
    spent = {"archived": 0.0, "live": 0.0}
    async with serving_here(app) as base, httpx.AsyncClient(base_url=base) as client:
        for a, b in zip(archived, live):
            for which, gid in (("archived", a), ("live", b)):
                started = time.perf_counter()
                r = await client.get(f"/games/{gid}")
                spent[which] += time.perf_counter() - started
                assert r.status_code == 200, r.text
    pairs = min(len(archived), len(live))
    return spent["archived"] / pairs, spent["live"] / pairs
