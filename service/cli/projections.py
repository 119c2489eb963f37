"""``python -m service rebuild`` and ``python -m service project``: the read models, from the command line.

``rebuild`` drops every read model and the projectors' consumer groups and replays every game's stream.
``project`` runs a standalone projector: one more consumer of the projectors' group, for scale. Both use the
real Redis named by ``REDIS_URL`` when it is set, else the embedded store under ``--data`` — which only one
process may own at a time, so stop the service first (there, ``project`` catches up and exits: nothing else can
append while it holds the data).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from service.store.logtrim import LOG_KEEP_MS
from service.store.owner import DataInUse
from service.store.store import Store
from service.store.stores import open_store
from service.projections.projector import Projector
from service.projections.rebuild import RebuildRefused, all_games, read_all, rebuild


def _store_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=os.environ.get("FREE_PARKING_DATA_DIR", "data"), metavar="DIR",
                   help="the embedded store's directory, when REDIS_URL is not set (default: data)")
    p.add_argument("--namespace", default=os.environ.get("FREE_PARKING_NAMESPACE", "fp"),
                   help="the key namespace (default: fp)")
    p.add_argument("--archive", default=os.environ.get("FREE_PARKING_ARCHIVE_DIR"), metavar="DIR_OR_URL",
                   help="where finished games were archived (default: <data>/archive): their events are read there")


async def _open(args: argparse.Namespace) -> Store:
    """The store; ``DataInUse`` when the embedded store's folder is another process's (the service's, running)."""
    return await open_store(
        os.environ.get("REDIS_URL") or None,
        Path(args.data),
        namespace=args.namespace,
        cluster=os.environ.get("FREE_PARKING_CLUSTER", "auto"),  # auto: a cluster node says so (INFO cluster)
        archive=args.archive or Path(args.data) / "archive",
    )


def _where(store: Store, args: argparse.Namespace) -> str:
    return f"redis namespace {args.namespace!r}" if store.name == "redis" else f"embedded store in {args.data}"


# --- rebuild ---------------------------------------------------------------------------------


async def _rebuild(args: argparse.Namespace, console: Console) -> int:
    store = await _open(args)
    try:
        console.print(f"rebuilding the projections of the {_where(store, args)}", markup=False)
        with Progress(
            TextColumn("[bold]rebuilding"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games · {task.fields[events]:,} events"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        ) as bar:
            task = bar.add_task("games", total=None, events=0)
            counted = {"events": 0}

            def on_games(total: int) -> None:
                bar.update(task, total=total)

            def on_game(game_id: str, events: int) -> None:
                counted["events"] += events
                bar.update(task, advance=1, events=counted["events"])

            try:
                done = await rebuild(
                    store, group=args.group, concurrency=args.concurrency, on_game=on_game, on_games=on_games
                )
            except RebuildRefused as e:
                console.print(f"rebuild refused: {e}", markup=False)
                return 2
        table = Table(title="rebuild", show_header=False, title_justify="left")
        table.add_row("games", f"{done.games:,}")
        table.add_row("events", f"{done.events:,}")
        table.add_row("keys dropped", f"{done.dropped_keys:,}")
        table.add_row("time", f"{done.seconds:.2f} s")
        table.add_row("events/s", f"{done.events_per_second:,.0f}")
        if args.compare:
            games, _ = await all_games(store)
            events, seconds = await read_all(store, games, concurrency=args.concurrency)
            table.add_row("raw XRANGE + decode", f"{events / max(seconds, 1e-9):,.0f} events/s ({seconds:.2f} s)")
        console.print(table)
        return 0
    finally:
        await store.close()


def rebuild_main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_rebuild(args, Console(highlight=False)))
    except DataInUse as e:
        print(f"free-parking rebuild: {e}", file=sys.stderr)
        return 2


def add_rebuild_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "rebuild",
        help="drop every read model and replay every game's stream",
        description="Drop every read model (scores, audit lines, players' results) and the projectors' consumer "
        "groups, then replay every game's stream. REDIS_URL selects a real Redis, else --data the embedded store "
        "(stop the service first: one process owns the embedded data).",
    )
    _store_arguments(p)
    p.add_argument("--group", default="projectors", help="the consumer group to create again (default: projectors)")
    p.add_argument(
        "--concurrency", type=int, default=None, help="games replayed at once (default: 16 on Redis, 1 embedded)"
    )
    p.add_argument("--compare", action="store_true", help="also time a bare XRANGE + decode of every stream")
    p.set_defaults(func=rebuild_main)
    return p


# --- project ---------------------------------------------------------------------------------


async def _project(args: argparse.Namespace, console: Console) -> int:
    store = await _open(args)
    name = args.name or f"{socket.gethostname()}-{os.getpid()}"
    projector = Projector(
        store, name, args.group, count=args.count, min_idle_ms=args.min_idle, concurrency=args.concurrency,
        log_keep_ms=args.log_keep_ms,
    )
    try:
        console.print(f"projector {name} (group {args.group}) on the {_where(store, args)}", markup=False)
        if args.once or store.name == "embedded":
            started = time.perf_counter()
            stats = await projector.catch_up()
            console.print(
                f"caught up in {time.perf_counter() - started:.2f} s: {stats.entries:,} log entries, "
                f"{stats.events:,} events applied, {stats.conflicts} conflicts, {stats.reclaimed} reclaimed",
                markup=False,
            )
            return 0
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = asyncio.create_task(projector.run_forever(stop, args.poll))
        last = (-1, -1)
        with console.status("projecting…") as status:
            while not stop.is_set():
                try:
                    await asyncio.wait_for(stop.wait(), args.report)
                except TimeoutError:
                    pass
                s = projector.stats
                status.update(
                    f"{s.entries:,} log entries · {s.events:,} events applied · {s.conflicts} conflicts · "
                    f"{s.reclaimed} reclaimed · {s.errors} errors · {s.trimmed:,} log entries trimmed"
                )
                if (s.entries, s.errors) != last:
                    last = (s.entries, s.errors)
                    console.log(
                        f"{s.entries:,} entries, {s.events:,} events, {s.conflicts} conflicts, {s.errors} errors",
                        markup=False,
                    )
        await runner
        console.print("stopped", markup=False)
        return 0
    finally:
        await store.close()


def project_main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_project(args, Console(highlight=False)))
    except DataInUse as e:
        print(f"free-parking project: {e}", file=sys.stderr)
        return 2


def add_project_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "project",
        help="run a standalone projector (one more consumer of the projectors' group)",
        description="Run a projector until interrupted: it consumes the partition logs in the projectors' consumer "
        "group and keeps the read models up to date, taking over entries a dead consumer left pending. REDIS_URL "
        "selects a real Redis; without it the embedded store under --data is caught up once (stop the service first).",
    )
    _store_arguments(p)
    p.add_argument("--name", help="this consumer's name (default: <host>-<pid>; reuse it to resume its entries)")
    p.add_argument("--group", default="projectors", help="the consumer group (default: projectors)")
    p.add_argument("--poll", type=float, default=0.5, help="seconds between polls when idle (default 0.5)")
    p.add_argument("--min-idle", type=int, default=60_000, metavar="MS",
                   help="take over another consumer's entries once idle this long (default 60000 ms)")
    p.add_argument("--count", type=int, default=200, help="log entries read at a time per partition (default 200)")
    p.add_argument(
        "--concurrency", type=int, default=None, help="games applied at once (default: 16 on Redis, 1 embedded)"
    )
    p.add_argument("--log-keep-ms", type=int, default=int(os.environ.get("FREE_PARKING_LOG_KEEP_MS", LOG_KEEP_MS)),
                   metavar="MS", help=f"trim a partition log's entries every consumer group applied once this old (default {LOG_KEEP_MS})")
    p.add_argument("--once", action="store_true", help="catch up, then exit")
    p.add_argument("--report", type=float, default=5.0, help="seconds between progress lines (default 5)")
    p.set_defaults(func=project_main)
    return p
