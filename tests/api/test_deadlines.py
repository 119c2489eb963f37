"""Deadlines and server actions (DESIGN.md): a wait nobody answers is timed out by the server as an event of
its own; two runners collapse into one event; overdue deadlines are found again at start; server-seated
bots play their seats by themselves."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from service.api.games import Games
from service.api.runner import Runner
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import (
    TIME_EXPIRES_SEED, log_of, pick, playable, seeded_game, time_expires_pending, verified, view, wait_for,
)
from tests.http import serving
from tests.stores import drop_namespace_at

SEED = TIME_EXPIRES_SEED()


def accepted_events(log, after: int = 0):
    return [e for e in log if e["type"] == "accepted" and e["seq"] > after]


async def until_past(deadline_at_ms: int) -> None:
    await asyncio.sleep(max(0.0, deadline_at_ms / 1000 - time.time()) + 0.05)


def assert_timeout(answer: dict, log: list[dict], game_id: str) -> dict:
    """The one ``accepted`` event after the wait ``answer`` started is the server's, by the rules of DESIGN.md."""
    wait_seq, deadline_at = answer["version"], answer["view"]["pending"]["deadline_at"]
    accepted = accepted_events(log, wait_seq)
    assert len(accepted) == 1, accepted
    event = accepted[0]
    assert event["seq"] == wait_seq + 1, "the timeout is not the first thing after the wait"
    assert event["public"] == {"type": "accepted", "seat": 0, "by_server": True}
    assert event.get("actor", "server") == "server"  # the default, which the canonical form omits
    assert event["command_id"] == f"timeout:{game_id}:{wait_seq}"
    assert event["at"] >= deadline_at, "the server acted before the deadline"
    assert event["command"] == {"type": "timeout"}
    return event


async def test_a_response_nobody_gives_is_timed_out_by_the_servers_runner(api):
    game_id, tokens = await seeded_game(api, 2, SEED, response_seconds=1)
    answer = await time_expires_pending(api, game_id, tokens)
    pending = answer["view"]["pending"]
    assert 900 <= pending["deadline_at"] - answer["events"][0]["at"] <= 1000
    assert (await view(api, game_id, tokens[0]))["legal"], "the awaited seat may answer until the deadline"
    log = await wait_for(lambda: _log_with_accept(api, game_id, answer["version"]))
    assert_timeout(answer, log, game_id)
    after = await view(api, game_id, tokens[0])
    assert after["pending"] is None and after["players"][0]["meter"] == 0  # accepted: the meter expired
    assert after["turn"] == 1 and after["phase"] == "after_main"  # Time Expires was seat 1's main play
    await verified(api, game_id)


async def _log_with_accept(api, game_id, after):
    _, _, log = await log_of(api, game_id)
    return log if accepted_events(log, after) else None


async def test_an_answer_in_time_leaves_the_server_nothing_to_do(api):
    game_id, tokens = await seeded_game(api, 2, SEED, response_seconds=1)
    answer = await time_expires_pending(api, game_id, tokens)
    r = await api.post(f"/games/{game_id}/commands", json={"type": "accept"}, headers=bearer(tokens[0]))
    assert r.status_code == 200, r.text
    await until_past(answer["view"]["pending"]["deadline_at"] + 400)
    _, _, log = await log_of(api, game_id)
    accepted = accepted_events(log, answer["version"])
    assert [(e.get("actor", "server"), e["public"].get("by_server", False)) for e in accepted] == [("seat:0", False)]


async def test_runners_acting_at_once_collapse_into_one_event(store_kind, tmp_path):
    """Three runners — two workers' and a second task of one of them — act on the same overdue wait at once:
    one timeout event; each later look finds nothing to do."""
    settings = make_settings(store_kind, tmp_path, runner=False)
    try:
        app = fresh_app(settings)
        async with serving(app) as api:
            game_id, tokens = await seeded_game(api, 2, SEED, response_seconds=1)
            answer = await time_expires_pending(api, game_id, tokens)
            assert not await Runner(Games(app.ctx.store)).act(game_id), "the runner acted before the deadline"
            await until_past(answer["view"]["pending"]["deadline_at"])
            one, two = Runner(Games(app.ctx.store)), Runner(Games(app.ctx.store))
            await asyncio.gather(one.act(game_id), one.act(game_id), two.act(game_id))
            assert not await two.act(game_id) and not await Runner(Games(app.ctx.store)).act(game_id)
            version, _, log = await log_of(api, game_id)
            assert_timeout(answer, log, game_id)
            assert [e["seq"] for e in log] == list(range(1, version + 1))
            await verified(api, game_id)
    finally:
        await _drop(settings)


async def test_two_services_on_one_redis_namespace_time_out_a_wait_once(tmp_path):
    settings = make_settings("redis", tmp_path)
    try:
        async with serving(fresh_app(settings)) as one, serving(fresh_app(settings)) as two:
            game_id, tokens = await seeded_game(one, 2, SEED, response_seconds=1)
            answer = await time_expires_pending(one, game_id, tokens)
            await wait_for(lambda: _log_with_accept(two, game_id, answer["version"]))
            await asyncio.sleep(0.6)  # both runners have looked again by now (they scan every 250 ms)
            _, _, log = await log_of(two, game_id)
            assert_timeout(answer, log, game_id)
    finally:
        await _drop(settings)


async def test_an_overdue_deadline_is_found_again_at_start(store_kind, tmp_path):
    """The service stops while a wait is pending; the deadline passes; a new service on the same store
    (embedded: the same data directory; Redis: the same namespace) fires the timeout by itself."""
    settings = make_settings(store_kind, tmp_path, runner=False)
    try:
        async with serving(fresh_app(settings)) as api:
            game_id, tokens = await seeded_game(api, 2, SEED, response_seconds=1)
            answer = await time_expires_pending(api, game_id, tokens)
        await until_past(answer["view"]["pending"]["deadline_at"])
        async with serving(fresh_app(msgspec.structs.replace(settings, runner=True))) as api:
            log = await wait_for(lambda: _log_with_accept(api, game_id, answer["version"]))
            assert_timeout(answer, log, game_id)
            assert log[-1]["at"] >= answer["view"]["pending"]["deadline_at"]
    finally:
        await _drop(settings)


async def _drop(settings) -> None:
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)  # a single Redis or the whole cluster


# --- server-seated bots -------------------------------------------------------------------------------------


async def test_a_guest_among_bots_plays_and_the_bots_answer_by_themselves(api):
    import random

    r = await api.post("/games", json={"kind": "free-parking", "seats": 3, "options": {"response_seconds": 60}})
    game_id = r.json()["game_id"]
    token = (await api.post(f"/games/{game_id}/seats", json={"name": "Ann"})).json()["token"]
    for name in ("greedy", "random"):
        r = await api.post(f"/games/{game_id}/seats", json={"bot": name})
        assert r.status_code == 201 and r.json()["token"] == "", r.text  # a bot's seat has no token to hand out
    rnd = random.Random(3)
    turns = 0
    for _ in range(6):  # the bots (seats 1 and 2) play their turns; the guest plays seat 0's
        v = await wait_for(lambda: _when_seat_may_act(api, game_id, token), seconds=10)
        if v["status"] == "finished":
            break
        before = v["version"]
        while playable(v["legal"]) and v["status"] != "finished":
            command = next((c for c in v["legal"] if c["type"] == "end_turn"), None) if v["phase"] == "after_main" else None
            command = command or pick(v["legal"], rnd)
            r = await api.post(f"/games/{game_id}/commands", json=dict(command, expected_version=v["version"]), headers=bearer(token))
            assert r.status_code in (200, 409), r.text
            v = r.json()["view"] if r.status_code == 200 else await view(api, game_id, token)
            if command["type"] in ("end_turn", "draw_second_chance") and r.status_code == 200:
                break
        turns += 1
        assert (await view(api, game_id, token))["version"] > before
    _, _, log = await log_of(api, game_id)
    bot_events = [e for e in log if e.get("actor") in ("seat:1", "seat:2") and e.get("command_id")]
    assert len(bot_events) >= turns, "the bots did not play"
    for e in bot_events:
        assert e["command_id"] == f"bot:{game_id}:{e['seq'] - 1}"
    assert not [e for e in log if e["type"] == "accepted" and e["public"].get("by_server")], "a bot's answer was left to the deadline"
    await verified(api, game_id)


async def _when_seat_may_act(api, game_id, token):
    v = await view(api, game_id, token)
    if v["status"] == "finished":
        return v
    mine = v["pending"]["seat"] == v["seat"] if v["pending"] else v["turn"] == v["seat"]
    return v if mine and playable(v["legal"]) else None


@pytest.mark.parametrize("bots", [("greedy", "greedy"), ("random", "greedy", "random")])
async def test_a_game_of_bots_plays_to_the_end_on_its_own(api, bots):
    r = await api.post("/games", json={"kind": "free-parking", "seats": len(bots)})
    game_id = r.json()["game_id"]
    for name in bots:
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": name})).status_code == 201
    v = await wait_for(lambda: _finished(api, game_id), seconds=30, every=0.1)
    assert v["winner"] is not None and v["players"][v["winner"]]["points"] >= 200
    listed = (await api.get("/games", params={"status": "finished"})).json()["games"]
    assert game_id in [g["game_id"] for g in listed]
    envelopes = await verified(api, game_id)
    assert all(e.actor == "server" or e.command_id is None or e.command_id.startswith(("bot:", "timeout:")) for e in envelopes)
    assert envelopes[-1].type == "seed_revealed"


async def _finished(api, game_id):
    v = await view(api, game_id)
    return v if v["status"] == "finished" else None
