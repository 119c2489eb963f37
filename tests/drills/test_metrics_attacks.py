"""/metrics with several workers, attacked: a worker that dies keeps counting the event streams it had open.

``free_parking_sse_streams`` is a ``livesum`` gauge of prometheus-client's multi-process mode, which is only "live"
when something calls ``multiprocess.mark_process_dead(pid)`` for a worker that is gone: nothing in the service
does. A worker ``SIGKILL``ed (or crashed, or OOM-killed) with streams open leaves its gauge file behind, and every
scrape of the survivors goes on adding those streams in, for as long as the service runs (Sanic 25 does not start
the dead worker again). An operator alerting on open streams, or sizing by them, reads streams that are not there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.attack.reviewer_ports import _reviewer_ports  # noqa: F401  (fixture)
from tests.drills.support import wait_until
from tests.servers import servers  # noqa: F401  (fixture)

STREAMS = 6


async def open_streams(service) -> float:
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as api:
        r = await api.get("/metrics")
    return sum(s.value for f in text_string_to_metric_families(r.text) for s in f.samples if s.name == "free_parking_sse_streams")


async def test_a_killed_workers_streams_are_not_counted_open_after_it_died(servers, services):  # noqa: F811
    service = services(servers(), workers=2)
    workers = service.workers()
    assert len(workers) == 2, workers
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as api:
        game_id = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    conns = []
    for _ in range(STREAMS):  # each on a connection of its own, on whichever worker accepts it (``alive`` counts)
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(f"GET /games/{game_id}/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        await asyncio.wait_for(reader.readuntil(b"after 0"), 10)
        conns.append((reader, writer, service.worker_serving(writer.get_extra_info("sockname")[1])))
    assert await open_streams(service) == STREAMS
    victim = next(pid for *_, pid in conns if pid is not None)
    os.kill(victim, signal.SIGKILL)
    alive = sum(pid != victim for *_, pid in conns)

    async def survivors_answer() -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return await open_streams(service) >= 0
        return False

    await wait_until(survivors_answer, 10, "the surviving worker answering /metrics")
    counted = [await open_streams(service) for _ in range(4)]  # whichever worker takes each scrape
    for _, writer, _pid in conns:
        writer.close()
    assert counted == [alive] * 4, f"{counted}: {STREAMS - alive} streams of the dead worker {victim} still counted"
