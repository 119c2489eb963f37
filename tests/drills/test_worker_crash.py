"""Worker crash: one of two Sanic workers ``SIGKILL``ed while commands stream in leaves no partial batch.

To be sure the kill lands in the middle of commands, the worker is first frozen (``SIGSTOP``) until commands sent
to it are seen hanging, then killed: it dies wherever it stood — reading a request, deciding, with the append
pipeline half-written to its socket or already run by Redis and the answer not yet written. A command's events are
appended by one Lua script, which Redis runs whole or not at all (a script is not started before its whole request
has arrived, and nothing else runs while it does); so whatever the worker was doing, every game's log is whole:
it verifies (re-deciding every command reproduces exactly its batch), and the partition log's pointers cut it into
exactly one batch per command (``read_log``). Every command answered is in the log once; the clients whose
connection was cut send the same command again (same ``command_id``) and get the first answer if it had gone
through. Sanic (25.x) does not start a worker again after a ``SIGKILL``: the other worker serves everything, the
bots of both included (any worker's runner finds a due game in the store's due sets).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time

import httpx

from tests.drills.support import Ledger, background, bot_games, check_ledger, guest_games, play, read_logs, versions, wait_until

CLIENTS = 8
HANGING = 1.0  # a command unanswered this long is on the frozen worker (the other answers in milliseconds)


async def test_a_worker_killed_mid_command_leaves_no_partial_batch(servers, services):
    server = servers()  # Redis itself does not fail here
    service = services(server, workers=2, bot_delay_ms=10)
    workers = service.workers()
    assert len(workers) == 2, workers
    ledger = Ledger()
    stop = asyncio.Event()
    async with (
        httpx.AsyncClient(base_url=service.url, timeout=30) as api,
        httpx.AsyncClient(base_url=service.url, timeout=30, limits=httpx.Limits(max_connections=4)) as poster,
        background(stop) as start,
    ):
        bots = await bot_games(api, 3, seats=3)
        humans = await guest_games(api, CLIENTS, seats=2)
        tasks = start([play(api, g, t, ledger, random.Random(i), stop, tag=f"w{i}", patience=20, poster=poster)
                       for i, (g, t) in enumerate(humans)])  # fmt: skip
        await wait_until(lambda: _acked(ledger, 150, tasks), 30, "150 events acknowledged")

        # Freeze a worker until a command sent to it is seen hanging. The commands go through a pool of their own, of
        # four connections always busy: a command hangs as soon as one of them belongs to the frozen worker (a new
        # connection is accepted by the other). If none does, thaw it and freeze the other worker.
        async def stuck() -> bool:
            now = time.monotonic()
            return any(now - sent > HANGING for sent in ledger.in_flight.values())

        for attempt in range(6):
            name, pid = sorted(workers.items())[attempt % 2]
            os.kill(pid, signal.SIGSTOP)
            try:
                await wait_until(stuck, 3, "a command hanging on the frozen worker", every=0.02)
                break
            except AssertionError:
                os.kill(pid, signal.SIGCONT)
        else:
            raise AssertionError("no command ever hung on a frozen worker")
        os.kill(pid, signal.SIGKILL)  # (a stopped process dies of it at once)
        in_flight_at_kill = len(ledger.in_flight)
        killed_at = time.monotonic()
        acked_at_kill = {g: len(ledger.acked[g]) for g, _ in humans}

        async def going_on() -> bool:  # every guest game 10 events further (or over); every bot game over
            now = await versions(api, bots + list(acked_at_kill))
            guests = all(s == "finished" or len(ledger.acked[g]) >= acked_at_kill[g] + 10
                         for g, (_, s) in now.items() if g in acked_at_kill)  # fmt: skip
            return guests and all(now[g][1] == "finished" for g in bots)

        try:
            recovered = await wait_until(going_on, 40, "play going on after the kill")
        except AssertionError:
            now = await versions(api, bots + list(acked_at_kill))
            print("DEBUG", {g: (now[g], acked_at_kill.get(g), len(ledger.acked[g])) for g in now}, ledger.in_flight, ledger.statuses, [t.done() for t in tasks])
            raise
        left = service.workers()
        stop.set()
        await asyncio.gather(*tasks)
        assert pid not in left.values()

    service.stop()
    logs = await read_logs(server.url, bots + [g for g, _ in humans])
    counts = check_ledger(ledger, logs)
    assert ledger.cut, "no command was cut by the kill"
    batches = sum(len(log.pointers) for log in logs.values())
    restarted = "restarted it" if len(left) == 2 else f"left {len(left)} worker"
    print(f"\n[worker] killed {name} with {in_flight_at_kill} commands in flight ({len(ledger.cut)} cut in all); "
          f"Sanic {restarted}; play went on within {recovered:.1f} s of the kill; {batches} batches, each whole; "
          f"commands {counts}; answers {dict(ledger.statuses)}; {time.monotonic() - killed_at:.1f} s after the kill")  # fmt: skip


async def _acked(ledger: Ledger, events: int, tasks: list[asyncio.Task]) -> bool:
    assert not any(t.done() for t in tasks), [t.exception() for t in tasks if t.done()]
    return ledger.events_acked >= events
