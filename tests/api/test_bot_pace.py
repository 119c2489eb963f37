"""Bots at a person's table play at a human pace, and each has a name of its own (issue 16, "who is who")."""

from __future__ import annotations

import asyncio

import pytest

from service.api.schedule import pace
from service.bots.names import bot_name
from service.events.base import Player
from tests.api.conftest import ADMIN_HEADERS, fresh_app, make_settings
from tests.api.helpers import new_game, view
from tests.http import serving

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])
PACE_MS = 400


async def events(api, game_id: str) -> list[dict]:
    return (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["events"]


async def until(check, what: str, seconds: float = 60.0):
    """Poll ``check`` until it gives something true; the bound only ends a test that would hang."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {seconds}s")


async def test_a_bot_at_a_persons_table_waits_the_pace_before_each_move(store_kind, tmp_path):
    async with serving(fresh_app(make_settings(store_kind, tmp_path, human_pace_ms=PACE_MS))) as api:
        game_id = await new_game(api, 2)
        await api.post(f"/games/{game_id}/seats", json={"name": "Ann"})
        await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})  # seat 1, next to the dealer: it plays first

        async def bot_moved():
            log = await events(api, game_id)
            return log if any(e.get("actor") == "seat:1" for e in log) else None

        log = await until(bot_moved, "the bot's first move")
        first = next(e for e in log if e.get("actor") == "seat:1")
        dealt_at = max(e["at"] for e in log if e["seq"] < first["seq"])  # the deal, with the last seat taken
        assert first["at"] - dealt_at >= PACE_MS, (first["at"], dealt_at)


async def test_bots_alone_play_at_once_whatever_the_pace(store_kind, tmp_path):
    async with serving(fresh_app(make_settings(store_kind, tmp_path, human_pace_ms=600_000))) as api:
        game_id = await new_game(api, 2)
        for bot in ("greedy", "random"):
            await api.post(f"/games/{game_id}/seats", json={"bot": bot})

        async def finished():
            return (await view(api, game_id))["status"] == "finished"

        await until(finished, "the bots' game (ten minutes a move, were the pace theirs)")


async def test_bots_at_one_table_have_names_of_their_own(store_kind, tmp_path):
    async with serving(fresh_app(make_settings(store_kind, tmp_path))) as api:
        game_id = await new_game(api, 4)
        await api.post(f"/games/{game_id}/seats", json={"name": "Greedy Gus"})  # a person took the first bot name
        for bot in ("greedy", "greedy", "random"):
            assert (await api.post(f"/games/{game_id}/seats", json={"bot": bot})).status_code == 201
        names = [p["name"] for p in (await view(api, game_id))["players"]]
        assert names == ["Greedy Gus", "Greedy Gwen", "Greedy Gil", "Random Rita"]


def test_pace_applies_where_a_person_sits(store_kind):
    class Seat:
        def __init__(self, bot):
            self.player = Player(name="x", bot=bot)

    class Table:
        def __init__(self, *bots):
            self.state = type("S", (), {"seats": [Seat(b) for b in bots]})()

    assert pace(Table("greedy", None), 0, 1000) == 1000
    assert pace(Table("greedy", "random"), 0, 1000) == 0
    assert pace(Table("greedy", "random"), 50, 1000) == 50  # the operator's bot delay still holds
    assert bot_name("greedy", ["greedy gus"]) == "Greedy Gwen"  # names differ however they are cased
    assert bot_name("random", []) == "Random Rita"
