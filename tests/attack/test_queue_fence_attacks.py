"""The play-now queue's fence (docs/queue.md, Limits) attacked: a matcher's worker that stalls between its claim and
its last seat, and wakes after ``GET /queue`` settled a claim of its table as lost. On every store. Found by a review
helper of the fence's change; each test failed before its fix."""

from __future__ import annotations

import asyncio
import logging

from service.api import matchmaker
from service.api import queue as queue_routes
from tests.api.conftest import bearer, make_settings, served, store_kind  # noqa: F401 (store_kind: a fixture)
from tests.api.helpers import wait_for
from tests.api.test_player_stream import of, read_player, register

STALLED = {"queue_fill_ms": 0, "queue_interval_ms": 3_600_000}  # the tests run the matcher's passes themselves
TABLE = {"kind": "free-parking", "seats": 2}


async def _stalled_at_the_second_seat(api, monkeypatch) -> tuple[asyncio.Future[int], str, str, str]:
    """Two players queue for one table; its worker seats the first, then stalls before the second's seat: the pass
    (awaiting the gate ``api.gate``), the game, the first player's id and the second's."""
    games, order, made = api.app.ctx.games, [], []
    api.gate = asyncio.Event()
    seat = games.seat

    async def held(game_id, player, *args, **kwargs):
        if not player.bot:
            made.append(game_id)
            order.append(player.player_id)
            if len(order) == 2:
                await api.gate.wait()  # the worker is stopped between the first seat and the second
        return await seat(game_id, player, *args, **kwargs)

    monkeypatch.setattr(games, "seat", held)
    for token in api.tokens.values():
        assert (await api.post("/queue", json=TABLE, headers=bearer(token))).status_code == 202
    table = asyncio.ensure_future(api.app.ctx.matchmaker.pass_once())

    async def stalled() -> bool:
        return len(order) == 2

    await wait_for(stalled, 30, every=0.05)
    return table, made[0], order[0], order[1]


async def _settled_lost(api, monkeypatch, token: str) -> dict:
    """``GET /queue`` of ``token``'s player as a worker sees it ``SEATING_LOST_MS`` later: the claim settled as lost."""
    real = queue_routes.now_ms
    monkeypatch.setattr(queue_routes, "now_ms", lambda: real() + matchmaker.SEATING_LOST_MS + 1)
    try:
        return (await api.get("/queue", headers=bearer(token))).json()
    finally:
        monkeypatch.setattr(queue_routes, "now_ms", real)


async def _two_players(api) -> None:
    api.tokens = dict([await register(api, "Ann"), await register(api, "Bob")])


async def test_a_player_seated_before_the_stall_is_told_seated_when_the_worker_wakes(store_kind, tmp_path, monkeypatch):
    """The first player sat down before the stall; the second's claim was settled as lost, so the woken worker's seat
    for them is refused and the table is left part-filled. The first player sits there: the worker must say so —
    not ``cancelled`` ("queue again"), which left them seated at a game they were told they did not have, free to be
    seated at a second table by the queue for that one queueing."""
    async with served(make_settings(store_kind, tmp_path, **STALLED)) as api:
        await _two_players(api)
        table, game_id, first, second = await _stalled_at_the_second_seat(api, monkeypatch)
        assert (await _settled_lost(api, monkeypatch, api.tokens[second]))["state"] == "cancelled"
        api.gate.set()
        assert await table == 0
        view = await api.app.ctx.games.fresh(game_id)
        assert [s.player.player_id for s in view.state.seats if s.player] == [first]
        status = (await api.get("/queue", headers=bearer(api.tokens[first]))).json()
        assert (status["state"], status.get("game_id"), status.get("seat")) == ("seated", game_id, 0), status
        told = of(await read_player(api, api.tokens[first], lambda m: len(of(m, "queue")) >= 2), "queue")
        assert [(e["status"], e.get("game_id")) for e in told[:2]] == [("waiting", None), ("seated", game_id)]


async def test_a_seat_refused_for_a_lost_claim_is_no_error_in_the_log(store_kind, tmp_path, monkeypatch, caplog):
    """A worker that wakes after its claim was settled is the case the fence is for, handled: the log says it (a
    warning, naming the game) without an error and its traceback, which an operator's alerting counts as a fault."""
    async with served(make_settings(store_kind, tmp_path, **STALLED)) as api:
        await _two_players(api)
        table, game_id, _, second = await _stalled_at_the_second_seat(api, monkeypatch)
        assert (await _settled_lost(api, monkeypatch, api.tokens[second]))["state"] == "cancelled"
        with caplog.at_level(logging.INFO, logger="free_parking.queue"):
            api.gate.set()
            assert await table == 0
        ours = [r for r in caplog.records if r.name == "free_parking.queue"]
        assert [r.levelno for r in ours] == [logging.WARNING] and game_id in ours[0].getMessage()
        assert ours[0].exc_info is None
