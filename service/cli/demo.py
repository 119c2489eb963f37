"""``python -m service demo``: a few games of server-seated bots, played through the HTTP API.

A newcomer sees finished games, their audits and their verified exports at once. With ``--url`` it
uses a running service; otherwise it starts one in this process on a free port (embedded store in a
temporary folder unless ``--data`` or ``REDIS_URL`` says otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from replays.verify import verify
from service.api.app import create_app, serving_here
from service.api.settings import Settings
from service.events.export import load


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="watch bots play a few games through the HTTP API", description=__doc__)
    p.add_argument("--url", help="a running service (default: start one here)")
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--data", type=Path, help="embedded store folder for the service started here (default: a temporary one)")
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for the games to end")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_demo(args, Console(highlight=False, soft_wrap=True)))


async def _demo(args: argparse.Namespace, console: Console) -> int:
    async with _service(args) as api:
        games = []
        for k in range(args.games):
            seats = (2, 4, 6, 3, 5, 8, 7)[k % 7]
            r = await api.post("/games", json={"kind": "free-parking", "seats": seats})
            r.raise_for_status()
            game_id = r.json()["game_id"]
            for _ in range(seats):
                bot = "greedy" if len(games) % 2 == 0 else "random"
                (await api.post(f"/games/{game_id}/seats", json={"bot": bot})).raise_for_status()
            games.append(game_id)
            console.print(f"created {game_id}: {seats} server-seated bots")
        await _wait(api, games, args.timeout)
        failed = 0
        for game_id in games:
            failed += await _report(api, game_id, console)
        return 1 if failed else 0


@contextlib.asynccontextmanager
async def _service(args: argparse.Namespace) -> AsyncIterator[httpx.AsyncClient]:
    if args.url:
        async with httpx.AsyncClient(base_url=args.url, timeout=30) as client:
            yield client
        return
    with tempfile.TemporaryDirectory(prefix="free-parking-demo-") as tmp:
        env = Settings.from_env()
        settings = Settings(data_dir=args.data or Path(tmp), redis_url=env.redis_url, namespace=env.namespace,
                            runner_interval_ms=200, admin_token=env.admin_token, rate_limits=False)  # a private service
        app = create_app(settings, name="free_parking_demo")
        async with serving_here(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
            yield client


async def _wait(api: httpx.AsyncClient, games: list[str], timeout: float) -> None:
    with Progress(transient=True) as bar:
        task = bar.add_task("bots playing", total=len(games))
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            views = [(await api.get(f"/games/{g}")).json() for g in games]
            done = sum(v["status"] == "finished" for v in views)
            bar.update(task, completed=done, description=f"bots playing: {sum(v['version'] for v in views)} events")
            if done == len(games):
                return
            await asyncio.sleep(0.2)
    raise SystemExit(f"the games did not finish within {timeout:.0f} s")


async def _report(api: httpx.AsyncClient, game_id: str, console: Console) -> int:
    view = (await api.get(f"/games/{game_id}")).json()
    audit = (await api.get(f"/games/{game_id}/audit")).text.splitlines()
    export = await api.get(f"/games/{game_id}/export")
    header, envelopes = load(export.content)
    verdict = verify(header, envelopes)
    table = Table(title=f"{game_id} — {len(audit)} events", title_justify="left")
    for col in ("seat", "player", "points", "meter"):
        table.add_column(col)
    for p in view["players"]:
        star = "  ★ winner" if p["seat"] == view["winner"] else ""
        table.add_row(str(p["seat"]), p["name"] + star, str(p["points"]), str(p["meter"]))
    console.print(table)
    console.print("the audit's last lines:", style="bold")
    for line in audit[-5:]:
        console.print("  " + line, markup=False)
    console.print(f"export ({len(export.content):,} bytes) → replays verify: {verdict.summary()}\n", markup=False)
    return 0 if verdict.ok else 1
