"""``python -m service demo``: one game of each kind — the card game, a solitaire, Monopoly — played through the HTTP
API, each checked at its end as a player would check it.

At the card game you ("You") sit among server bots, and you alone play the solitaire: a key of your own, every move
signed, a client seed of your own. Monopoly is server bots alone (a few rounds, so it ends soon). For each finished
game: its scores, the end of its audit, and ``replays verify``'s verdict on its export given what a player kept —
the seed commitment shown at creation, the receipt of every view and answer read, the service's keys
(``GET /keys``), and at your games your key and client seed: so the receipts' signatures are checked, the seed is
recomputed from yours, and every move in your name is found signed by you. With ``--url`` it uses a running
service; otherwise it starts one in this process on a free port (embedded store in a temporary folder unless
``--data`` or ``REDIS_URL`` says otherwise), its bots at full pace.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from replays.receipts import load_keys
from replays.verify import verify
from service.api.app import StartupRefused, create_app, serving_here
from service.api.settings import Settings
from service.events.export import load

from .demo_player import NAME, Kept, You

KINDS = ("free-parking", "solitaire", "monopoly")
TABLES = {"free-parking": ("greedy", "random", None, "greedy"), "solitaire": (None,), "monopoly": ("strategic", "random", "strategic")}
"""Each kind's seats in order: a server bot's name, or ``None`` for yours (no expert: re-deriving its every move,
as the verdict does, takes seconds)."""
_RUNS = itertools.count()
OPTIONS = {"monopoly": {"max_rounds": 12}}  # the largest worth wins after 12 rounds: a game of seconds, not minutes


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="one game of each kind through the HTTP API, each checked as its player would",
                       description=__doc__)
    p.add_argument("--url", help="a running service (default: start one here)")
    p.add_argument("--games", type=int, default=3, help="games, the kinds in turn: card game, solitaire, Monopoly (default 3)")
    p.add_argument("--data", type=Path, help="embedded store folder for the service started here (default: a temporary one)")
    p.add_argument("--timeout", type=float, default=300, help="seconds to wait for the games to end")
    p.add_argument("--seed", type=int, help="your choices' random seed (default: a new one)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_demo(args, Console(highlight=False, soft_wrap=True)))
    except StartupRefused as e:
        print(f"free-parking demo: not started: {e}", file=sys.stderr)
        return 2


async def _demo(args: argparse.Namespace, console: Console) -> int:
    rnd = random.Random(args.seed)
    async with _service(args) as api:
        games = [await _start(api, KINDS[k % len(KINDS)], rnd, console) for k in range(args.games)]
        try:
            ends = await asyncio.wait_for(asyncio.gather(*(_finish(api, kept, you) for kept, you in games)), args.timeout)
        except TimeoutError:
            console.print(f"the games did not finish within {args.timeout:.0f} s", markup=False)
            return 1
        keys = load_keys([(await api.get("/keys")).content])
        failed = 0
        for (kept, _), end in zip(games, ends, strict=True):
            failed += not await _report(api, kept, end, keys, console)
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
                            runner_interval_ms=100, admin_token=env.admin_token, rate_limits=False,
                            human_pace_ms=0, bot_delay_ms=0)  # a private service, its bots at full pace
        app = create_app(settings, name=f"free_parking_demo_{next(_RUNS)}")  # Sanic names an app once a process
        app.config.TOUCHUP = False  # Sanic rewrites its classes once a process: a second demo in one would fail there
        async with serving_here(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
            yield client


async def _start(api: httpx.AsyncClient, kind: str, rnd: random.Random, console: Console) -> tuple[Kept, You | None]:
    """A game of ``kind`` with its seats taken: the bots', and yours (joined with your key and client seed)."""
    seats = TABLES[kind]
    r = await api.post("/games", json={"kind": kind, "seats": len(seats), "options": OPTIONS.get(kind, {})})
    r.raise_for_status()
    kept = Kept(r.json()["game_id"], r.json()["seed_commitment"])
    you = None
    for bot in seats:
        if bot is None:
            you = You(api, kept, random.Random(rnd.random()))
            await you.join()
        else:
            (await api.post(f"/games/{kept.game_id}/seats", json={"bot": bot})).raise_for_status()
    who = ", ".join(f"{b} bot" if b else f"{NAME} (keyed)" for b in seats)
    console.print(f"created {kind} {kept.game_id}: {who}", markup=False)
    return kept, you


async def _finish(api: httpx.AsyncClient, kept: Kept, you: You | None) -> dict:
    """The game's last view: you play yours to the end; a game of bots alone is watched (its views' receipts kept)."""
    if you is not None:
        return await you.play()
    while (v := kept.keep((await api.get(f"/games/{kept.game_id}")).json()))["status"] != "finished":
        await asyncio.sleep(0.1)
    return v


async def _report(api: httpx.AsyncClient, kept: Kept, end: dict, keys, console: Console) -> bool:
    audit = (await api.get(f"/games/{kept.game_id}/audit")).text.splitlines()
    export = await api.get(f"/games/{kept.game_id}/export")
    export.raise_for_status()
    header, envelopes = load(export.content)
    verdict = verify(header, envelopes, commitment=kept.commitment, client_seeds=kept.client_seeds(),
                     receipts=kept.receipt_list(), keys=keys, player_keys=kept.player_keys())
    console.print(_scores(end, kept))
    console.print("the audit's last lines:", style="bold")
    for line in audit[-5:]:
        console.print("  " + line, markup=False)
    given = f"{len(kept.receipts)} receipts kept, the keys of GET /keys, the seed commitment"
    if kept.public_key:
        given += f", your key and client seed (seat {kept.seat})"
    console.print(f"export ({len(export.content):,} bytes) → replays verify with {given}:", markup=False)
    console.print(f"  {verdict.summary()}", markup=False)
    if verdict.ok and verdict.signed and kept.public_key:
        yours = sum(e.sig is not None for e in envelopes)  # a seat of yours is the one keyed seat here
        console.print(f"  ✓ every move in your name is one you signed: {yours} commands, each checked against the key "
                      f"you joined seat {kept.seat} with", markup=False)
    console.print()
    return verdict.ok


def _scores(view: dict, kept: Kept) -> Table:
    """The finished game's scores, in its kind's terms."""
    kind = view["kind"]
    table = Table(title=f"{kind} {kept.game_id} — {view['version']} events", title_justify="left")
    if kind == "solitaire":
        for col in ("player", "result", "runs", "redeals left"):
            table.add_column(col)
        table.add_row(f"{view['name']} (seat 0)", f"{view['result']} ({view.get('reason') or 'all runs built'})",
                      " ".join(map(str, view["runs"])), str(view["redeals_left"]))
        return table
    rows = view["players"] if kind == "free-parking" else view["seats"]
    columns = ("points", "meter") if kind == "free-parking" else ("cash", "worth", "bankrupt")
    for col in ("seat", "player", *columns):
        table.add_column(col)
    for p in rows:
        star = "  ★ winner" if p["seat"] == view["winner"] else ""
        table.add_row(str(p["seat"]), f"{p['name']}{star}", *(str(p[c]) for c in columns))
    return table
