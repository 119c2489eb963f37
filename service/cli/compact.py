"""``python -m service compact``: rewrite the embedded store's journal to what is live — a snapshot of the store, then
nothing (docs/operating.md, "Compaction") — so that it stops holding every write ever made and a start stops replaying
them. The service does it on its own when the journal is ``--compact-ratio`` times its live size; this is the same, by
hand, with the service stopped (one process owns the data folder: beside a running service it is refused)."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

import msgspec
from rich.console import Console

from service.api.app import StartupRefused, open_store_for
from service.api.settings import Settings
from service.store.embedded import JOURNAL


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compact", help="rewrite the embedded store's journal to what is live", description=__doc__)
    env = Settings.from_env()
    p.add_argument("--data", dest="data_dir", default=str(env.data_dir), help=f"the embedded store's folder (default {env.data_dir})")
    p.add_argument("--repair", action="store_true", default=env.repair,
                   help="open a damaged journal as serve --repair does (see docs/durability.md)")
    p.set_defaults(func=main)


def _mb(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size >= 2**20 else f"{size:,} bytes"


async def _compact(args: argparse.Namespace, console: Console) -> int:
    settings = msgspec.structs.replace(Settings.from_env(), data_dir=Path(args.data_dir), repair=args.repair)
    if settings.redis_url:
        console.print("free-parking compact: REDIS_URL is set; compaction is the embedded store's (Redis rewrites its "
                      "own append-only file: BGREWRITEAOF)", markup=False, soft_wrap=True)  # fmt: skip
        return 2
    journal = settings.data_dir / JOURNAL
    if not os.path.lexists(journal):  # a mistyped --data: nothing made there, and said (it made a store, "compacted")
        console.print(f"free-parking compact: no journal at {journal}; nothing to compact", markup=False, soft_wrap=True)
        return 2
    try:
        store, _ = await open_store_for(settings)
    except StartupRefused as e:
        console.print(f"free-parking compact: {e}", markup=False, soft_wrap=True)
        return 2
    try:
        done = await store.compaction.run()
    finally:
        await store.close()
    console.print(f"{store.compaction.path}: {_mb(done.before)} → {_mb(done.after)} ({done.keys:,} keys, "
                  f"{done.seconds:.1f} s)", markup=False, soft_wrap=True)  # fmt: skip
    return 0


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_compact(args, Console(highlight=False)))
