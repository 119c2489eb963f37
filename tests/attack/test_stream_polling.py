"""Idle event streams on many games keep the store busy.

watch.py: one watch per game per worker, each looking for new events every ``POLL_SECONDS`` (0.2 s) with
``Games.fresh`` — an XRANGE per game per tick, whether or not anything happens. Streams on one game share it (the
docs' 500 streams on one game cost one reader), but streams on N games cost 5·N store reads a second per worker:
measured on two workers and 1,000 idle solitaires, 4,300 Redis commands a second and ~40 % of a core, with nothing
being played. Anyone can open them (no token, no limit on streams: any game id ``GET /games`` lists).

Expected: an idle stream costs (next to) nothing — e.g. one blocking read for all the worker's watched games, or a
wake-up from the appends — so that idle load does not grow with the number of games watched.
"""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from tests.attack.conftest import ADMIN_HEADERS, inproc, settings

GAMES = 150


async def test_idle_streams_on_many_games_do_not_poll_the_store(own_redis, tmp_path):
    server = own_redis()
    config = settings(tmp_path, redis_url=server.url, namespace="attack", projector=False, runner=False)
    async with inproc(config) as api:
        games = [(await api.post("/games", json={"kind": "solitaire"}, headers=ADMIN_HEADERS)).json()["game_id"]
                 for _ in range(GAMES)]
        host, port = str(api.base_url).rstrip("/").removeprefix("http://").split(":")
        streams = []
        for game_id in games:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(f"GET /games/{game_id}/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            streams.append((reader, writer))
        for reader, _ in streams:  # every stream is open and has sent its first lines
            assert (await asyncio.wait_for(reader.readuntil(b"\n\n"), 10)).startswith(b"HTTP/1.1 200")
        redis = aioredis.from_url(server.url)
        try:
            before, started = (await redis.info("stats"))["total_commands_processed"], time.monotonic()
            await asyncio.sleep(2)
            after, elapsed = (await redis.info("stats"))["total_commands_processed"], time.monotonic() - started
        finally:
            await redis.aclose()
            for _, writer in streams:
                writer.close()
        rate = (after - before - 1) / elapsed
        assert rate < 50, f"{GAMES} idle streams (nothing appended) cost {rate:.0f} Redis commands a second"
