"""Benchmark 12: the embedded store's journal after 10,000 card games played and archived, with and without compaction
(docs/operating.md, "Compaction"), against a store that only ever held the live games.

Store A: 10,000 finished games (random bots, written through the store's append path, projected by a projector),
archived as the archiver does (``Archiver.archive_game``: file written and read back, events removed), the partition logs
trimmed past the projectors, then a tenth as many games written and projected that stay (the live ones). Store B: those
live games alone. Each journal under ``--data``, the embedded store's own.

12: A's journal compacted (``Compaction.run``) over B's journal — the archived games' metadata, lobby entries, results
and ratings stay in the store (docs/operating.md, "Archive"), so they weigh in A's; the detail gives A uncompacted too.
12s: the start (``EmbeddedStore.open``: the journal loaded) of A compacted over B's, each round alike; the detail gives
A uncompacted.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import tempfile
import time
from pathlib import Path

from service.api.archiver import Archiver
from service.api.games import Games
from service.projections.projector import Projector
from service.store.archive import Archive
from service.store.embedded import EmbeddedStore
from service.store.logtrim import trim_logs

from . import games as g
from .report import Measure

COPIES = 10
LIVE_SHARE = 10
"""Live games: a tenth of the archived ones."""
MB = 1024 * 1024


def measures() -> dict[str, Measure]:
    return {
        "12": Measure("12", "embedded journal, --memory-games card games archived and a tenth live, compacted",
                      "a journal of the live games alone", 2.0, "max"),
        "12s": Measure("12s", "embedded store's start, the same, compacted", "a start of the live games alone", 1.5, "max",
                       note="the detail gives the uncompacted start"),
    }  # fmt: skip


def run(args, ms: dict[str, Measure], log) -> None:
    n = args.memory_games
    live = max(1, n // LIVE_SHARE)
    log(f"  simulating {(n + live) // COPIES:,} card games to their end, {COPIES} copies of each under other ids")
    logs = g.simulate_many(range(9 * 10**6, 9 * 10**6 + (n + live) // COPIES + 1), None,
                           processes=min(4, os.cpu_count() or 1), copies=COPIES)[: n + live]  # fmt: skip
    gc.collect()
    gc.freeze()
    where = "/dev/shm" if os.path.isdir("/dev/shm") else None
    try:
        with tempfile.TemporaryDirectory(prefix="fp-bench-compact-", dir=where) as folder:
            root = Path(folder)
            asyncio.run(_build(root, logs[:n], logs[n:], log))
            _rounds(root, args.rounds, ms, log)
    finally:
        gc.unfreeze()


async def _build(root: Path, archived: list, live: list, log) -> None:
    """``root/a`` (archived and live games, its journal as it grew), ``root/a-compacted``, ``root/b`` (the live ones)."""
    store = await EmbeddedStore(root / "a").open()
    store.archive = Archive(root / "archive")
    projector = Projector(store, "bench")
    started = time.perf_counter()
    await g.write_many(store, archived)
    await projector.catch_up()
    archiver = Archiver(Games(store, cache_size=64), store.archive, 0, None, "bench")
    outcomes = {await archiver.archive_game(lg.game_id) for lg in archived}
    assert outcomes == {"archived"}, outcomes
    await trim_logs(store, keep_ms=0)
    await g.write_many(store, live)
    await projector.catch_up()
    await store.close()
    log(f"  store A: {len(archived):,} games archived, {len(live):,} live, in {time.perf_counter() - started:.0f} s")
    shutil.copytree(root / "a", root / "a-compacted", ignore=shutil.ignore_patterns("lock"))
    store = await EmbeddedStore(root / "a-compacted").open()
    done = await store.compaction.run()
    await store.close()
    log(f"  compacted: {done.before / MB:.1f} MB → {done.after / MB:.1f} MB in {done.seconds:.1f} s")
    store = await EmbeddedStore(root / "b").open()
    await g.write_many(store, live)
    await Projector(store, "bench").catch_up()
    await store.close()


def _rounds(root: Path, rounds: int, ms: dict[str, Measure], log) -> None:
    size = {name: (root / name / "journal.bin").stat().st_size for name in ("a", "a-compacted", "b")}
    for _ in range(rounds):
        start = {name: asyncio.run(_start(root / name)) for name in ("b", "a-compacted", "a")}
        ms["12"].add(size["a-compacted"] / size["b"],
                     f"{size['a-compacted'] / MB:.1f} MB compacted vs {size['b'] / MB:.1f} MB live alone "
                     f"({size['a'] / MB:.1f} MB uncompacted, {size['a'] / size['b']:.1f}×)")  # fmt: skip
        ms["12s"].add(start["a-compacted"] / start["b"],
                      f"{start['a-compacted']:.2f} s compacted vs {start['b']:.2f} s live alone "
                      f"({start['a']:.1f} s uncompacted, {start['a'] / start['b']:.1f}×)")  # fmt: skip
        log(f"  {ms['12'].details[-1]}; {ms['12s'].details[-1]}")


async def _start(folder: Path) -> float:
    """Seconds ``EmbeddedStore.open`` takes on ``folder``: the journal read, checked and loaded."""
    gc.collect()
    started = time.perf_counter()
    store = await EmbeddedStore(folder).open()
    spent = time.perf_counter() - started
    await store.close()
    return spent
