"""``python -m service archive``: move every finished game that is due to the archive now, as the workers' runners
do one game at a time — for a deployment that had games before it archived, or to empty Redis of finished games at
once (``--after-ms 0``). Safe beside running workers on Redis (the partition leases, the removal's checks); on the
embedded store, stop the service first (one process owns its journal)."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
from pathlib import Path

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from service.api.app import StartupRefused, open_store_for, receipts_for
from service.api.archiver import Archiver
from service.api.games import Games
from service.api.settings import Settings
from service.store.archive import ArchiveError
from service.store.keys import PARTITIONS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("archive", help="move finished games to the archive now", description=__doc__)
    env = Settings.from_env()
    p.add_argument("--data", dest="data_dir", default=str(env.data_dir), help=f"the embedded store's folder (default {env.data_dir})")
    p.add_argument("--archive", dest="archive_dir", default=env.archive_dir,
                   help="the archive: a folder or an fsspec URL (default: <data>/archive)")
    p.add_argument("--after-ms", type=int, default=env.archive_after_ms,
                   help=f"only games finished this long ago (default {env.archive_after_ms}; 0: every finished game)")
    p.add_argument("--lease-ms", type=int, default=env.archive_lease_ms,
                   help=f"the partitions' leases, as the workers take them (default {env.archive_lease_ms})")
    p.set_defaults(func=main)


async def finished_games(store) -> list[str]:
    """Every finished game of the store not archived yet, oldest first within each partition."""
    pipe = store.r.pipeline(transaction=False)
    for p in range(PARTITIONS):
        pipe.zrange(store.keys.index(p, "finished"), 0, -1)
    ids = [gid.decode() for found in await store._read(pipe.execute()) for gid in found]
    metas = await store.metas(ids)
    return [g for g, meta in zip(ids, metas, strict=True) if meta is not None and meta.get("archived") != "1"]


async def _archive(args: argparse.Namespace, console: Console) -> int:
    env = Settings.from_env()
    settings = msgspec.structs.replace(env, data_dir=Path(args.data_dir), archive_dir=args.archive_dir)
    try:
        receipts = receipts_for(settings)
        store, _ = await open_store_for(settings)
    except StartupRefused as e:
        console.print(f"free-parking archive: {e}", markup=False, soft_wrap=True)  # one line, whatever the width
        return 2
    try:
        games = Games(store)
        archiver = Archiver(games, store.archive, args.after_ms, receipts, f"archive-{socket.gethostname()}-{os.getpid()}",
                            args.lease_ms)
        todo = await finished_games(store)
        outcomes: dict[str, int] = {}
        with Progress(TextColumn("[bold]archiving"), BarColumn(), MofNCompleteColumn(), console=console) as bar:
            task = bar.add_task("games", total=len(todo))
            for game_id in todo:
                try:
                    outcome = await archiver.archive_game(game_id)
                except ArchiveError as e:
                    console.print(f"{game_id}: {e}", markup=False)
                    outcome = "failed"
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                bar.advance(task)
        said = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "nothing to archive"
        console.print(f"{len(todo)} finished games: {said}", markup=False)
        return 1 if outcomes.get("failed") else 0
    finally:
        await store.close()


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_archive(args, Console(highlight=False)))
