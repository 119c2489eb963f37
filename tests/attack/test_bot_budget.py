"""A game of bots alone is played at the pace of the address that created it: each server bot's move there takes a
token from that address's command bucket (docs/limits.md, "Commands per player and per address").

The limiter's clock is held still, at one token a minute: no token comes back while a test waits, and a bucket's key
lives for minutes in the store (a key's TTL runs on the store's own clock: at 600 a minute a held clock would see a
drained bucket's key expire, and the bucket refill, within seconds)."""

from __future__ import annotations

import asyncio
import hashlib
import itertools

import pytest

from service.api.games import now_ms
from tests.api.conftest import ADMIN_HEADERS, served, make_settings

pytestmark = pytest.mark.parametrize("kind", ["embedded", "redis"])
NOW = 1_800_000_000_000
ADDRESS = {"x-forwarded-for": "10.31.0.2"}
BUDGET_WAIT_MS = 5_000
"""A due time further off than this is the budget's wait (a minute here): a bot's own delay is 0 in these tests."""


def limited(kind: str, tmp_path, burst: int):
    return served(make_settings(kind, tmp_path, rate_limits=True, proxies_count=1, address_commands_burst=burst,
                                address_commands_per_minute=1))


async def until(check, what: str, seconds: float = 30.0):
    """Poll ``check`` until it gives something true; the bound only ends a test that would hang."""
    for _ in range(int(seconds * 20)):
        if found := await check():
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {seconds}s")


async def status(api, game_id: str) -> tuple[str, int]:
    view = (await api.get(f"/games/{game_id}")).json()
    return view["status"], view["version"]


async def waiting_for_budget(api, game_id: str) -> bool:
    """Whether the game's next look is recorded in the store for the budget's wait, not for a move owed now."""
    due = dict(await api.app.ctx.store.due_games(now_ms() + 10 * 60_000))
    return game_id in due and due[game_id] > now_ms() + BUDGET_WAIT_MS


async def settled(api, game_ids: list[str]) -> int:
    """Wait until every game is finished or waits for its budget; the events they hold, all together."""
    async def all_settled():
        states = [await status(api, g) for g in game_ids]
        for g, (st, _) in zip(game_ids, states, strict=True):
            if st != "finished" and not await waiting_for_budget(api, g):
                return None
        return sum(version for _, version in states)

    return await until(all_settled, "every game finished or waiting for its budget", 120)


async def bot_solitaire(api, headers) -> str:
    r = await api.post("/games", json={"kind": "solitaire"}, headers=headers)
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"}, headers=ADDRESS)
    assert r.status_code == 201, r.text
    return game_id


async def test_a_bot_game_out_of_budget_waits_in_the_store_and_finishes_when_tokens_come_back(kind, tmp_path):
    burst = 3
    async with limited(kind, tmp_path, burst) as api:
        limiter = api.app.ctx.limiter
        limiter.clock = lambda: NOW
        game_id = await bot_solitaire(api, ADDRESS)
        await settled(api, [game_id])
        state, version = await status(api, game_id)
        assert state == "playing" and version <= 3 + burst  # created, seated, started: then one event a token
        export = (await api.get(f"/games/{game_id}/export")).text
        assert hashlib.sha256(b"10.31.0.2").hexdigest()[:32] not in export  # the bucket is the store's, not the log's

        minutes = itertools.count(1)
        limiter.clock = lambda: NOW + next(minutes) * 60_000  # a minute passes between any two takes
        await api.app.ctx.runner.scan(now_ms() + 10 * 60_000)  # as a worker does when the due time comes

        async def finished():
            return (await status(api, game_id))[0] == "finished"

        await until(finished, "the game's end", 120)


async def test_an_admins_bot_game_is_not_charged(kind, tmp_path):
    async with limited(kind, tmp_path, 1) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        game_id = await bot_solitaire(api, {**ADDRESS, **ADMIN_HEADERS})

        async def finished():
            return (await status(api, game_id))[0] == "finished"

        await until(finished, "the game's end", 120)


async def test_bots_at_a_table_with_a_person_are_not_charged(kind, tmp_path):
    """Seat 1 plays first (next to the dealer), then seat 2: two bots' moves, on a budget of one."""
    async with limited(kind, tmp_path, 1) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        r = await api.post("/games", json={"kind": "free-parking", "seats": 3}, headers=ADDRESS)
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        assert (await api.post(f"/games/{game_id}/seats", json={"name": "Ann"}, headers=ADDRESS)).status_code == 201
        for _ in range(2):
            assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"}, headers=ADDRESS)).status_code == 201

        async def second_bot_moved():
            events = (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["events"]
            return any(e.get("actor") == "seat:2" for e in events)

        await until(second_bot_moved, "the second bot's move")
