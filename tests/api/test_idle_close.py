"""Games nobody joined or moved in are closed by the server (``idle_close_ms``): a waiting game and a game of people
alone are closed by the runner as ``close:<game>:<version>``, one ``game_closed`` event and the seed's reveal; a game
of bots alone is never idle; two runners collapse into one event; the time is found again at start; the export of a
closed game verifies. The scheduling itself is pure and checked first, on games of the real rules."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time

import msgspec
import pytest

from replays.verify import verify
from service.api.games import Games, now_ms
from service.api.kinds import config_for
from service.api.runner import Runner
from service.api.schedule import due_at, idle_due, next_due, server_move
from service.bots import bot, next_move
from service.events.base import Player
from service.events.common import Close, Create, TakeSeat
from service.events.export import load
from service.store.keys import partition
from service.events.solitaire import SolitaireConfig
from service.rules.engine import Game
from service.rules.solitaire import layout as grid
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, fill, log_of, view
from tests.api.helpers import new_game as api_game
from tests.http import serving
from tests.stores import drop_namespace_at

IDLE = 500
SEED = bytes(range(32))


# --- when a game is due, and for what (pure) ---------------------------------------------------------------


def _game(bots: list[str | None], at: int = 1_000) -> Game:
    """A card game created at ``at`` and, if ``bots`` names every seat, dealt: a name is a server bot, ``None`` a
    person (a guest)."""
    game = Game.new("free-parking", "g_idle", config_for("free-parking", 2, {}), SEED)
    game.play(Create(), None, at)
    for i, name in enumerate(bots):
        player = Player(name=f"s{i}", player_id=f"g_{i}", bot=name, guest=name is None)
        game.play(TakeSeat(player=player), None, at)
    return game


def test_a_game_of_people_is_due_to_be_closed_when_nobody_moved_for_the_idle_time():
    game = _game([None, None])
    assert due_at(game, game.last_at) is None  # it waits on people: nothing owed
    assert idle_due(game, IDLE) == next_due(game, game.last_at, 0, IDLE) == game.last_at + IDLE
    assert server_move(game, game.last_at + IDLE - 1, IDLE) is None
    move = server_move(game, game.last_at + IDLE, IDLE)
    assert move.command == Close(idle_ms=IDLE, since=game.last_at) and move.seat is None
    assert move.command_id == f"close:g_idle:{game.version}"
    assert idle_due(game, 0) is None and server_move(game, game.last_at + 10**9, 0) is None  # 0: never


def test_a_waiting_game_is_due_and_a_finished_one_is_not():
    waiting = _game([None])
    assert idle_due(waiting, IDLE) == 1_000 + IDLE
    assert server_move(waiting, 1_000 + IDLE, IDLE).command == Close(idle_ms=IDLE, since=1_000)
    waiting.play(Close(idle_ms=IDLE, since=waiting.last_at), None, waiting.last_at + IDLE)
    assert idle_due(waiting, IDLE) is None and server_move(waiting, waiting.last_at + 10**9, IDLE) is None


def test_a_deadline_before_the_idle_time_comes_first_and_a_timeout_before_a_close():
    game = _game(["random", None])
    rnd = random.Random(5)
    while game.state.pending is None:  # play seat 0's bot (and seat 1, as a bot would) until a wait opens
        seat, command = next_move(game.rules, game.state, [bot("free-parking", "random")] * 2, rnd)
        game.play(command, seat, game.last_at + 1)
    deadline = game.state.pending.deadline_at
    idle = deadline - game.last_at + 1
    assert next_due(game, game.last_at, 0, idle) <= deadline
    assert server_move(game, deadline + idle, idle).command != Close(idle_ms=idle, since=game.last_at)


def test_a_game_of_bots_alone_is_never_idle():
    game = _game(["random", "random"])
    assert idle_due(game, IDLE) is None
    assert next_due(game, game.last_at, 10, IDLE) == game.last_at + 10
    assert not isinstance(server_move(game, game.last_at + 10 * IDLE, IDLE).command, Close)


NOTHING_FITS = """
2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..
2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
"""


def test_a_stuck_solitaire_left_alone_is_closed_at_the_idle_time_like_any_game_of_people():
    """Stuck (rules version 2) is still playing: the server owes it nothing, and closes it once nobody moved for the
    idle time every game has — no shorter one of its own (docs/rules-solitaire.md, "The end")."""
    game = Game.new("solitaire", "g_stuck", SolitaireConfig(seats=1), SEED)
    game.play(Create(), None, 1_000)
    game.play(TakeSeat(player=Player(name="ann", player_id="g_ann", guest=True)), None, 1_000)
    game.state = msgspec.structs.replace(game.state, layout=grid.parse(NOTHING_FITS), redeals_used=2)
    assert game.state.stuck and game.rules.status_of(game.state) == "playing"
    assert due_at(game, game.last_at) is None and idle_due(game, IDLE) == game.last_at + IDLE
    move = server_move(game, game.last_at + IDLE, IDLE)
    assert move.command == Close(idle_ms=IDLE, since=game.last_at)
    game.play(move.command, None, game.last_at + IDLE)
    assert (game.view(0).result, game.view(0).reason) == ("lost", "idle")


# --- the runner closes them (embedded and Redis) -------------------------------------------------------------


@contextlib.asynccontextmanager
async def service(kind: str, tmp_path, **overrides):
    settings = make_settings(kind, tmp_path, idle_close_ms=IDLE, runner_interval_ms=50, **overrides)
    try:
        app = fresh_app(settings)
        async with serving(app) as api:
            api.app = app
            yield api
    finally:
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)


async def until(check, seconds: float = 15.0):
    """Poll ``check()`` until it answers something truthy; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {seconds} s")


async def closed_view(api, game_id: str) -> dict | None:
    v = await view(api, game_id)
    return v if v["status"] == "finished" else None


async def assert_closed(api, game_id: str) -> list[dict]:
    """The game was closed by the server, as DESIGN.md's server actions are: its log says so, and it verifies."""
    v = await until(lambda: closed_view(api, game_id))
    assert v["closed"] == {"reason": "idle", "idle_ms": IDLE} and v["legal"] == []
    _, _, log = await log_of(api, game_id)
    closed, revealed = log[-2], log[-1]
    assert [e["type"] for e in log].count("game_closed") == 1 and revealed["type"] == "seed_revealed"
    assert closed["public"] == {"type": "game_closed", "reason": "idle", "idle_ms": IDLE}
    assert closed["command"] == {"type": "close", "idle_ms": IDLE, "since": log[-3]["at"]}
    assert closed["command_id"] == f"close:{game_id}:{closed['seq'] - 1}" and closed.get("actor", "server") == "server"
    assert closed["at"] >= log[-3]["at"] + IDLE, "closed before nobody had moved for the idle time"
    audit = (await api.get(f"/games/{game_id}/audit")).text.splitlines()
    assert "closed: nobody moved for 500 ms" in audit[-2]
    r = await api.get(f"/games/{game_id}/export")  # anyone's, now that it is over
    assert r.status_code == 200
    header, envelopes = load(r.content)
    assert header.seed is not None  # revealed, as at any end
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    listed = (await api.get("/games", params={"status": "finished"})).json()["games"]
    assert game_id in {g["game_id"] for g in listed}
    return log


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_a_waiting_game_nobody_joins_is_closed(kind, tmp_path):
    async with service(kind, tmp_path) as api:
        game_id = await api_game(api, 3)
        await assert_closed(api, game_id)
        assert_error(await api.post(f"/games/{game_id}/seats", json={"name": "Late"}), 409, "game_full")


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_a_game_of_people_nobody_moves_in_is_closed_and_then_refuses_every_command(kind, tmp_path):
    async with service(kind, tmp_path) as api:
        game_id = await api_game(api, 2)
        tokens = await fill(api, game_id, 2)
        assert (await view(api, game_id, tokens[1]))["status"] == "playing"
        await assert_closed(api, game_id)
        v = await view(api, game_id, tokens[1])
        assert v["legal"] == [] and v["winner"] is None
        assert_error(await api.post(f"/games/{game_id}/commands", json={"type": "end_turn"}, headers=bearer(tokens[1])), 422)


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_a_game_of_bots_alone_is_played_however_slowly(kind, tmp_path):
    """Bots slower than the idle time: the game still goes on (it would be closed between any two moves else)."""
    async with service(kind, tmp_path, bot_delay_ms=IDLE + 200) as api:
        game_id = await api_game(api, 2)
        for _ in range(2):
            assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
        start = (await view(api, game_id))["version"]
        await until(lambda: _moved(api, game_id, start + 3))
        _, _, log = await log_of(api, game_id)
        assert "game_closed" not in {e["type"] for e in log}


async def _moved(api, game_id: str, version: int) -> bool:
    v = await view(api, game_id)
    return v["version"] >= version or v["status"] == "finished"


async def test_the_other_kinds_are_closed_too_and_close_is_the_servers_alone(tmp_path):
    async with service("embedded", tmp_path) as api:
        solo = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
        token = (await api.post(f"/games/{solo}/seats", json={"name": "Sol"})).json()["token"]
        assert_error(await api.post(f"/games/{solo}/commands", json={"type": "close"}, headers=bearer(token)), 422, "server_only")
        mono = (await api.post("/games", json={"kind": "monopoly", "seats": 2})).json()["game_id"]
        tokens = await fill(api, mono, 2)
        assert_error(await api.post(f"/games/{mono}/commands", json={"type": "close"}, headers=bearer(tokens[0])), 422, "server_only")
        for game_id in (solo, mono):
            await assert_closed(api, game_id)
        assert (await view(api, solo))["result"] == "lost" and (await view(api, solo))["reason"] == "idle"
        assert (await view(api, mono))["end_reason"] == "idle"


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_runners_closing_at_once_collapse_into_one_event(kind, tmp_path):
    async with service(kind, tmp_path, runner=False) as api:
        game_id = await api_game(api, 2)
        store = api.app.ctx.store
        assert not await Runner(Games(store, idle_ms=IDLE)).act(game_id), "closed before the idle time"
        _, _, log = await log_of(api, game_id)
        # nothing owed yet: the runner left the game due at its idle close, not out of the schedule
        assert await store.r.zscore(store.keys.due(partition(game_id)), game_id) == log[-1]["at"] + IDLE
        await until(lambda: _past(log[-1]["at"] + IDLE))
        one, two = Runner(Games(store, idle_ms=IDLE)), Runner(Games(store, idle_ms=IDLE))
        await asyncio.gather(one.act(game_id), one.act(game_id), two.act(game_id))
        assert not await two.act(game_id)
        log = await assert_closed(api, game_id)
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))


async def _past(at: int) -> bool:
    return now_ms() >= at


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_an_idle_game_is_found_again_at_start(kind, tmp_path):
    """The service stops; the idle time passes; a new service on the same store closes the game by itself."""
    settings = make_settings(kind, tmp_path, idle_close_ms=IDLE, runner_interval_ms=50, runner=False)
    try:
        async with serving(fresh_app(settings)) as api:
            game_id = await api_game(api, 2)
            _, _, log = await log_of(api, game_id)
        await until(lambda: _past(log[-1]["at"] + IDLE))
        async with serving(fresh_app(msgspec.structs.replace(settings, runner=True))) as api:
            await assert_closed(api, game_id)
    finally:
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_the_admin_sees_the_seed_of_a_closed_game_in_its_export(tmp_path):
    async with service("embedded", tmp_path) as api:
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": SEED.hex()},
                                  headers=ADMIN_HEADERS)).json()["game_id"]  # fmt: skip
        await until(lambda: closed_view(api, game_id))
        header, _ = load((await api.get(f"/games/{game_id}/export")).content)
        assert header.seed == SEED.hex()


@pytest.mark.parametrize("kind", ["embedded", "redis"])
async def test_a_trade_offered_and_withdrawn_again_and_again_does_not_hold_a_monopoly_table(kind, tmp_path):
    """Issue 31: the player on turn never rolls and offers, then withdraws, a trade well within each idle time. Any
    event used to count as a move, so the table was held for ever; now the close counts from the last event that
    moved the game on (the turn's start, rules version 3), and the offers cannot put it off."""
    async with service(kind, tmp_path) as api:
        game_id = (await api.post("/games", json={"kind": "monopoly", "seats": 2})).json()["game_id"]
        tokens = await fill(api, game_id, 2)
        offer = {"type": "offer_trade", "to": 1, "give": {"cash": 10}, "get": {}}

        async def stall() -> dict | None:
            r = await api.post(f"/games/{game_id}/commands", json=offer, headers=bearer(tokens[0]))
            if r.status_code == 200:
                trade = next(e["seq"] for e in r.json()["events"] if e["type"] == "trade_offered")
                await asyncio.sleep(IDLE / 5000)
                withdraw = {"type": "withdraw_trade", "trade": trade}
                await api.post(f"/games/{game_id}/commands", json=withdraw, headers=bearer(tokens[0]))
            return await closed_view(api, game_id)

        v = await until(stall, seconds=20)
        assert v["closed"] == {"reason": "idle", "idle_ms": IDLE} and v["winner"] is None
        _, _, log = await log_of(api, game_id)
        began = max(e["at"] for e in log if e["type"] == "turn_began")
        closed = next(e for e in log if e["type"] == "game_closed")
        assert closed["command"] == {"type": "close", "idle_ms": IDLE, "since": began}
        assert closed["at"] >= began + IDLE
        stalled = [e for e in log if e["type"] == "trade_closed" and e["at"] > began]
        assert stalled, "the stalling went on after the turn began"
        r = await api.get(f"/games/{game_id}/export")
        verdict = verify(*load(r.content))
        assert verdict.ok and verdict.redecided, verdict.summary()
