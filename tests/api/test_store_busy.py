"""Every store connection in use: a request waits, and past the wait it is told the store is *busy* (503 store_busy,
Retry-After), never a 500 and never "unreachable" — and a command refused so changes nothing (docs/limits.md)."""

from __future__ import annotations

import pytest

from tests.api.conftest import make_settings, served
from tests.api.helpers import assert_error, log_of, seeded_game, view


@pytest.fixture(params=["embedded", "redis"])
async def small(request, tmp_path):
    """A service whose store has two connections and waits 200 ms for one."""
    async with served(make_settings(request.param, tmp_path, store_connections=2, store_wait_ms=200)) as client:
        yield client


class Held:
    """Every connection of the service's store pool, taken until the block ends."""

    def __init__(self, api):
        self.pool = api.app.ctx.store.r.connection_pool

    async def __aenter__(self):
        self.held = [await self.pool.get_connection() for _ in range(2)]

    async def __aexit__(self, *exc):
        for connection in self.held:
            await self.pool.release(connection)


def assert_busy(r) -> None:
    error = assert_error(r, 503, "store_busy")
    assert "busy" in error["message"] and "unreachable" not in error["message"], error
    assert int(r.headers["retry-after"]) >= 1


async def test_past_the_wait_every_request_is_told_the_store_is_busy_and_nothing_changes(small):
    game_id, tokens = await seeded_game(small, 2, "0" * 64)
    views = [await view(small, game_id, token) for token in tokens]
    ann, before = next((t, v) for t, v in zip(tokens, views, strict=True) if any(c["type"] == "discard" for c in v["legal"]))
    log = await log_of(small, game_id)
    card = before["you"]["hand"][0]["id"]
    async with Held(small):
        assert_busy(await small.get("/games?kind=free-parking"))
        seen = await small.get(f"/games/{game_id}", headers={"authorization": f"Bearer {ann}"})
        if small.app.ctx.store.name == "embedded":  # the worker owns the data: a view past the cache needs no connection
            assert seen.status_code == 200 and seen.json()["version"] == before["version"], seen.text
        else:
            assert_busy(seen)
        made = await small.post("/games", json={"kind": "solitaire"})
        done = await small.post(f"/games/{game_id}/commands", json={"type": "discard", "card": card},
                                headers={"authorization": f"Bearer {ann}"})
    listed = (await small.get("/games?kind=solitaire")).json()
    if small.app.ctx.store.name == "embedded":  # and its writes call fakeredis directly, one at a time: no connection
        assert (made.status_code, done.status_code) == (201, 200), (made.text, done.text)
        version, _, events = await log_of(small, game_id)
        assert events[: len(log[2])] == log[2] and version == done.json()["version"] > log[0]  # the old log, then it
        assert (await view(small, game_id, ann))["version"] == done.json()["version"] > before["version"]
        assert [g["game_id"] for g in listed["games"]] == [made.json()["game_id"]], listed
        return
    assert_busy(made)
    assert_busy(done)
    assert await log_of(small, game_id) == log
    assert (await view(small, game_id, ann))["version"] == before["version"]
    assert listed["games"] == [], listed  # the refused POST /games made no game
