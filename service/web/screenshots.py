"""Screenshots of the web page for the README: ``python -m service.web.screenshots [--out docs/screenshots]``.

Starts ``python -m service serve`` on a free port with a throwaway embedded store, sets up games through the
HTTP API, and photographs the lobby, a card-game table, a solitaire with its hint, a Monopoly table and the
replay viewer with Debian's Chromium (``/usr/bin/chromium``, driven by Playwright; no browser is ever downloaded), then each table
again 375 px wide, as on a phone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium: never a browser downloaded by Playwright."""
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PREFERRED = [
    "run_errand",
    "free_parking",
    "feed_meter",
    "end_turn",
    "draw_second_chance",
    "accept",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _until(
    client: httpx.AsyncClient, game_id: str, token: str | None, ok, seconds: float = 20
) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        v = (
            await client.get(
                f"/games/{game_id}",
                headers={"authorization": f"Bearer {token}"} if token else {},
            )
        ).json()
        if ok(v) or time.monotonic() > deadline:
            return v
        await asyncio.sleep(0.2)


async def _play_a_little(
    client: httpx.AsyncClient, game_id: str, token: str, commands: int
) -> None:
    """A few of the human seat's commands (scoring ones first), so the table has something on it."""
    auth = {"authorization": f"Bearer {token}"}
    for _ in range(commands):
        v = await _until(
            client, game_id, token, lambda v: v["legal"] or v["status"] == "finished"
        )
        if v["status"] == "finished" or not v["legal"]:
            return
        command = min(
            v["legal"],
            key=lambda c: PREFERRED.index(c["type"]) if c["type"] in PREFERRED else 99,
        )
        await client.post(
            f"/games/{game_id}/commands",
            json={**command, "expected_version": v["version"]},
            headers=auth,
        )


async def shoot(base: str, out: Path) -> list[Path]:
    from playwright.async_api import async_playwright

    out.mkdir(parents=True, exist_ok=True)
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        # a finished bot game (for the replay), one being played by bots, one waiting for players
        finished = (
            await client.post("/games", json={"kind": "free-parking", "seats": 3})
        ).json()["game_id"]
        for _ in range(3):
            await client.post(f"/games/{finished}/seats", json={"bot": "greedy"})
        waiting = (
            await client.post("/games", json={"kind": "free-parking", "seats": 4})
        ).json()["game_id"]
        await client.post(f"/games/{waiting}/seats", json={"bot": "random"})
        await _until(client, finished, None, lambda v: v["status"] == "finished")
        ann = (await client.post("/players", json={"name": "Ann"})).json()
        table = (
            await client.post("/games", json={"kind": "free-parking", "seats": 3})
        ).json()["game_id"]
        await client.post(
            f"/games/{table}/seats",
            json={},
            headers={"authorization": f"Bearer {ann['token']}"},
        )
        for bot in ("greedy", "random"):
            await client.post(f"/games/{table}/seats", json={"bot": bot})
        await _play_a_little(client, table, ann["token"], 9)
        await _until(client, table, ann["token"], lambda v: v["legal"])
        solitaire = (await client.post("/games", json={"kind": "solitaire"})).json()[
            "game_id"
        ]
        await client.post(
            f"/games/{solitaire}/seats",
            json={},
            headers={"authorization": f"Bearer {ann['token']}"},
        )
        replay_version = (await client.get(f"/games/{finished}")).json()["version"]
        monopoly = await _monopoly_table(client, ann["token"])

    shots = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=ARGS, headless=True
        )
        page = await browser.new_page(
            base_url=base, viewport={"width": 1280, "height": 860}
        )
        await page.goto("/#/")
        await page.evaluate(
            "p => localStorage.setItem('fp.player', JSON.stringify(p))", ann
        )
        await page.reload()
        await page.wait_for_selector("#games table.list")
        await page.wait_for_timeout(300)
        shots.append(out / "lobby.png")
        await page.screenshot(path=shots[-1], full_page=True)

        await page.goto(f"/#/games/{table}")
        await page.wait_for_selector("#table .player")
        await page.wait_for_timeout(300)
        shots.append(out / "card-game.png")
        await page.screenshot(path=shots[-1], full_page=True)

        await page.goto(f"/#/games/{solitaire}")
        await page.wait_for_selector("#table .grid .cell")
        await page.click("button.cmd[data-type=hint]")
        shots.append(out / "solitaire.png")
        await page.screenshot(path=shots[-1], full_page=True)

        await page.goto(f"/#/games/{monopoly}")
        await page.wait_for_selector("#table .mono-board .mono-cell")
        owned = page.locator("#table .mono-cell[data-owner='0']")
        if await owned.count():  # one of Ann's properties, with what she may do with it
            await owned.first.click()
        await page.wait_for_timeout(300)
        shots.append(out / "monopoly.png")
        await page.screenshot(path=shots[-1], full_page=True)

        at = replay_version // 2
        await page.goto(f"/#/replay/{finished}")
        await page.wait_for_selector(f"#replay-table[data-at='{replay_version}']")
        await page.eval_on_selector(
            "#seq",
            "(el, at) => { el.value = at; el.dispatchEvent(new Event('input')); }",
            at,
        )
        await page.wait_for_selector(f"#replay-table[data-at='{at}']")
        shots.append(out / "replay.png")
        await page.screenshot(path=shots[-1], full_page=True)

        # each table on a phone (375 px wide): what fits, fits; the solitaire grid and the board scroll in their boxes
        phone = await browser.new_page(
            base_url=base, viewport={"width": 375, "height": 812}, device_scale_factor=2
        )
        await phone.goto("/#/")
        await phone.evaluate(
            "p => localStorage.setItem('fp.player', JSON.stringify(p))", ann
        )
        for name, game, ready in (
            ("card-game-375.png", table, "#table .player"),
            ("solitaire-375.png", solitaire, "#table .grid .cell"),
            ("monopoly-375.png", monopoly, "#table .mono-board .mono-cell"),
        ):
            await phone.goto(f"/#/games/{game}")
            await phone.reload()
            await phone.wait_for_selector(ready)
            if name.startswith("solitaire"):
                await phone.wait_for_selector("#sol-stats")
            await phone.wait_for_timeout(300)
            shots.append(out / name)
            await phone.screenshot(path=shots[-1], full_page=True)
        await browser.close()
    return shots


MONOPOLY_MOVES = ["buy", "choose_tax", "pass_bid", "claim_buildings", "pay_fine", "roll"]
"""Ann's Monopoly, in this order of preference: she buys what she lands on and stays out of auctions."""


async def _monopoly_table(client: httpx.AsyncClient, token: str) -> str:
    """A Monopoly game of Ann's and three bots, some rounds in: properties owned, Ann to move."""
    game_id = (
        await client.post(
            "/games",
            json={"kind": "monopoly", "seats": 4, "options": {"max_rounds": 40}},
        )
    ).json()["game_id"]
    await client.post(
        f"/games/{game_id}/seats",
        json={},
        headers={"authorization": f"Bearer {token}"},
    )
    for bot in ("strategic", "strategic", "random"):
        await client.post(f"/games/{game_id}/seats", json={"bot": bot})
    def moves(v: dict) -> list[dict]:
        return [c for c in v["legal"] if c["type"] in MONOPOLY_MOVES]

    for _ in range(30):
        v = await _until(
            client, game_id, token, lambda v: moves(v) or v["status"] == "finished"
        )
        if not moves(v):
            break
        command = min(moves(v), key=lambda c: MONOPOLY_MOVES.index(c["type"]))
        await client.post(
            f"/games/{game_id}/commands",
            json={**command, "expected_version": v["version"]},
            headers={"authorization": f"Bearer {token}"},
        )
    await _until(client, game_id, token, moves)
    return game_id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m service.web.screenshots", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 1
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="free-parking-shots-") as data:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("REDIS_URL", "FREE_PARKING_ADMIN_TOKEN")
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "service",
                "serve",
                "--port",
                str(port),
                "--data",
                data,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(150):
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            for path in asyncio.run(shoot(base, args.out)):
                print(path)
        finally:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
