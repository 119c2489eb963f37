"""Benchmark 7: a real Redis's memory (``used_memory_rss`` of ``INFO memory``) holding 10,000 live card games of
50 events each, written through the store's append path: each simulated game's first 50 events (to the end of the
command that reaches 50), one append per command as the service makes them — stream entries, metadata, the
partition logs' pointers, the game indexes and the due set. A private redis-server, started empty for it.

Beside it, what a service worker pays to hold those games live in its decider cache: the resident memory one
process gains by loading them all through ``Games.load`` (each folded once from its stream).

A tenth of the games are simulated; each is also written under nine other game ids, sealed again into each id's own
hash chain (every log verifies): they share deals, which changes nothing of what Redis stores per game."""

from __future__ import annotations

import asyncio
import gc
import os
import resource
from pathlib import Path

from service.api.games import Games
from service.store.redis_store import RedisStore

from . import games as g
from . import procs
from .report import Measure

EVENTS = 50
COPIES = 10
WORKER_SAMPLE = 1_000
"""Games a worker's cache is measured with (its growth is scaled to all of them)."""
"""Each simulated game is written under this many game ids (``games.copy``: sealed again into each id's chain, so
each is a valid log of its own): the memory of 10,000 games, for the simulation time of 1,000."""
MB = 1024 * 1024


def measures() -> dict[str, Measure]:
    return {"7": Measure("7", "Redis RSS, 10,000 live card games × 50 events", "— (absolute)", 200, "max", unit="MB")}


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(args, ms: dict[str, Measure], log) -> None:
    if args.redis_url:
        raise RuntimeError("needs a redis-server of its own (its memory is the measure): run without --redis-url")
    n = args.memory_games
    processes = min(4, os.cpu_count() or 1)
    copies = COPIES if n % COPIES == 0 else 1
    log(f"  simulating {n // copies:,} games to {EVENTS} events, {copies} copies of each under other ids ({processes} processes)")
    logs = g.simulate_many(range(5 * 10**6, 5 * 10**6 + n // copies), EVENTS, processes=processes, copies=copies)
    events = sum(lg.events for lg in logs)
    appends = sum(len(lg.batches) for lg in logs)
    with procs.redis_server() as redis:

        async def go() -> tuple[dict, dict, int]:
            store = RedisStore.from_url(redis.url, namespace="fp")
            try:
                before = await store.r.info("memory")
                await g.write_many(store, logs)
                after = await store.r.info("memory")
                keys = await store.r.dbsize()
                log(f"  wrote {events:,} events in {appends:,} appends; {keys:,} keys")
                sample = [lg.game_id for lg in logs[:WORKER_SAMPLE]]
                log(f"  loading {len(sample):,} of them into one Games cache, as a worker would")
                worker = await _worker_rss(store, sample) * len(logs) // len(sample)
                return before, after, worker if isinstance(worker, int) else 0
            finally:
                await store.close()

        before, after, worker = asyncio.run(go())
    rss = after["used_memory_rss"] / MB
    scale = 10_000 / n
    detail = (f"{rss:.0f} MB RSS ({after['used_memory'] / MB:.0f} MB used, {before['used_memory_rss'] / MB:.0f} MB empty) for {n:,} games, "
              f"{events:,} events; {(after['used_memory'] - before['used_memory']) / events:.0f} B per event all in")
    if n != 10_000:
        rss = before["used_memory_rss"] / MB + (after["used_memory_rss"] - before["used_memory_rss"]) / MB * scale
        detail += f"; scaled to 10,000 games: {rss:.0f} MB"
    if worker:
        detail += (f"; a service worker holding them all in its cache: ~{worker / MB:.0f} MB more RSS ({worker / n / 1024:.1f} kB a game, "
                   f"measured with {min(n, WORKER_SAMPLE):,})")
    ms["7"].add(rss, detail)
    log(f"  {detail}")


async def _worker_rss(store: RedisStore, game_ids: list[str]) -> int:
    """What one process gains in resident memory by holding every game in a ``Games`` cache, as a worker would."""
    gc.collect()
    base = _rss()
    games = Games(store, cache_size=len(game_ids) + 1)
    for i in range(0, len(game_ids), 64):
        await asyncio.gather(*(games.load(gid) for gid in game_ids[i : i + 64]))
    gc.collect()
    grown = _rss() - base
    del games
    return grown
