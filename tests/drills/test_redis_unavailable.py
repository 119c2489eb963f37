"""Redis unavailable: the service answers 503 with a clear error while Redis is gone, writes nothing half, and
recovers by itself when it comes back — its request path, and its background work (the runner playing bots, the
projector) in every worker.

``tests/api/test_errors.py`` checks each endpoint's 503 on an in-process app with one request at a time; this drill
reuses its check (``_all_unavailable``) on the deployed service (two workers, bots playing, clients retrying) and
adds what only a real outage shows: connections pooled before the outage must not fail requests after it, and the
runner and projector of each worker must outlive the outage. Two outages: Redis killed (connections refused), and
Redis hung (``SIGSTOP``: nothing answers; commands time out after redis-py's ``socket_timeout`` and, when Redis
wakes up, the appends it had already been sent run after all — the clients' retries with the same command id are
answered with those, so each command is still in the log once).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time

import httpx

from tests.api.helpers import playable
from tests.api.test_errors import _all_unavailable
from tests.drills.support import (
    ADMIN_HEADERS, Ledger, background, bearer, bot_games, check_ledger, guest_games, play, read_logs, versions, wait_until,
)  # fmt: skip
from tests.servers import ALWAYS

SOCKET_TIMEOUT = 5.0  # redis-py's default: what a command waits on a Redis that does not answer
PATIENCE = 6 * SOCKET_TIMEOUT
"""How long the client waits for its answer from a hung Redis: a service that hung with it is caught, and a busy machine
cannot make a service that timed out as it should look like one that did not."""


async def test_redis_down_then_hung_503_nothing_half_written_and_the_service_recovers_by_itself(servers, services):
    server = servers(*ALWAYS)
    service = services(server, workers=2, bot_delay_ms=40)  # bots slowed down: still playing after two outages
    ledger = Ledger()
    stop = asyncio.Event()
    async with (
        httpx.AsyncClient(base_url=service.url, timeout=30, limits=httpx.Limits(max_connections=64)) as api,
        background(stop) as tasks,
    ):
        bots = await bot_games(api, 4, seats=2)
        humans = await guest_games(api, 2, seats=2)
        idle_game, idle_tokens = (await guest_games(api, 1, seats=2))[0]  # no one plays it: its log must not move
        players = tasks([play(api, g, t, ledger, random.Random(i), stop, tag=f"down-{i}", patience=25)
                         for i, (g, t) in enumerate(humans)])  # fmt: skip
        await _burst(api, bots, 64)  # every worker's pool holds many connections when Redis goes away
        await wait_until(lambda: _moved(api, bots, {}, 10), 20, "the bots playing")

        # --- outage 1: Redis killed; connections are refused -----------------------------------------------------
        before = await _admin_log(api, idle_game)
        token, legal = await _a_legal_command(api, idle_game, idle_tokens)
        server.kill()
        started = time.monotonic()
        await _all_unavailable(api, idle_game, [None, token], legal)  # commands, reads, creation, registration
        refused_in = time.monotonic() - started
        # refused at once: what the workers' requests met was the connection refused (or a pooled one found closed),
        # never a wait that ran out — the cause each worker logs, not a stopwatch a busy machine can stretch
        outage = [line for line in service.log.read_text().splitlines() if "requests: the store cannot be reached" in line]
        assert outage and not [line for line in outage if "timeout" in line.lower() or "timed out" in line.lower()], outage
        at_outage = await _versions_when_back(api, bots, server)
        assert await _admin_log(api, idle_game) == before, "a command refused with 503 left something in the store"
        assert await _burst(api, bots, 64) == {200}, "connections pooled before the outage failed requests after it"
        r = await api.post(f"/games/{idle_game}/commands", json=dict(legal, command_id="retry-me"), headers=bearer(token))
        assert r.status_code == 200, r.text  # the retry _all_unavailable's 503 asked for
        ledger.record(idle_game, "retry-me", r)
        await wait_until(lambda: _moved(api, bots, at_outage, 10), 20, "the runners playing the bots again")

        # --- outage 2: Redis hung; nothing answers --------------------------------------------------------------
        os.kill(server.proc.pid, signal.SIGSTOP)
        hung_at = time.monotonic()
        try:
            # answered, not left hanging: a 503 within the client's own patience (the read times out on the store's
            # side — one socket timeout, or two where the connection is checked first — well inside it)
            async with httpx.AsyncClient(base_url=service.url, timeout=PATIENCE) as patient:
                r = await patient.get(f"/games/{bots[0]}/events")
            waited = time.monotonic() - hung_at
            assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable", r.text
            await asyncio.sleep(0.5)  # the players' commands, the bots' moves, time out too
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        resumed_at = time.monotonic()
        at_hang = await versions(api, bots)
        await wait_until(lambda: _moved(api, bots, at_hang, 10), 20, "the bots playing after the hang")
        start = {g: len(ledger.acked[g]) for g, _ in humans}
        await wait_until(lambda: _gained(api, ledger, start, 8), 30, "the guests' games going on after the hang")
        stop.set()
        await asyncio.gather(*players)
        target = await versions(api, bots + [g for g, _ in humans])
        projected = await wait_until(lambda: _projected(api, target), 20,
                                     "every game's scores projected up to its version (the projectors alive)")  # fmt: skip
        recovered = time.monotonic() - resumed_at

    service.stop()
    logs = await read_logs(server.url, bots + [g for g, _ in humans] + [idle_game])
    counts = check_ledger(ledger, logs)
    assert counts.get("unknown, not appended", 0) + counts.get("unknown, appended", 0) == 0, counts
    print(f"\n[unavailable] ten 503s in {refused_in:.2f} s with Redis down; a read answered 503 after "
          f"{waited:.1f} s of a hung Redis; after the hang: play and projections caught up in {recovered:.1f} s "
          f"(projections {projected:.1f} s); commands {counts}; answers {dict(ledger.statuses)}")  # fmt: skip


async def _a_legal_command(api: httpx.AsyncClient, game_id: str, tokens: list[str]) -> tuple[str, dict]:
    for token in tokens:
        v = (await api.get(f"/games/{game_id}", headers=bearer(token))).json()
        if playable(v["legal"]):
            return token, dict(playable(v["legal"])[0], expected_version=v["version"])
    raise AssertionError("nobody may act in a dealt game")


async def _admin_log(api: httpx.AsyncClient, game_id: str) -> tuple[int, str, list[dict]]:
    r = await api.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()["version"], r.json()["head"], r.json()["events"]


async def _burst(api: httpx.AsyncClient, games: list[str], n: int) -> set[int]:
    """``n`` concurrent reads (spread over the workers and their pools); the statuses answered."""
    answers = await asyncio.gather(*(api.get(f"/games/{games[i % len(games)]}/events") for i in range(n)))
    return {r.status_code for r in answers}


async def _versions_when_back(api: httpx.AsyncClient, games: list[str], server) -> dict[str, tuple[int, str]]:
    """Keep Redis down a little longer (every worker's runner and projector meet it), start it, wait for the
    service to see it: the versions then."""
    await asyncio.sleep(0.5)
    server.restart()

    async def healthy() -> bool:  # asked a few times: each worker should answer
        return {(await api.get("/healthz")).status_code for _ in range(4)} == {200}

    await wait_until(healthy, 15, "/healthz ok after Redis came back")
    return await versions(api, games)


async def _moved(api: httpx.AsyncClient, games: list[str], since: dict[str, tuple[int, str]], events: int) -> bool:
    now = await versions(api, games)
    return all(s == "finished" or v >= since.get(g, (0, ""))[0] + events for g, (v, s) in now.items())


async def _gained(api: httpx.AsyncClient, ledger: Ledger, start: dict[str, int], events: int) -> bool:
    now = await versions(api, list(start))
    return all(s == "finished" or len(ledger.acked[g]) >= start[g] + events for g, (_, s) in now.items())


async def _projected(api: httpx.AsyncClient, target: dict[str, tuple[int, str]]) -> bool:
    for game_id, (version, _) in target.items():
        r = await api.get(f"/games/{game_id}/scores")
        if r.status_code != 200 or r.json()["version"] < version:
            return False
    return True
