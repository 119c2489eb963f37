"""The client on a service of two workers over one Redis (``python -m service serve --workers 2``): its requests and
its player's stream land on either worker, and a game played from the stream still verifies to the last signature."""

from __future__ import annotations

import asyncio

from free_parking_client import Client, PlayerKey
from tests.api.conftest import ADMIN
from tests.client.play import play, two_seats_with_a_bot, verify
from tests.servers import Service
from tests.stores import drop_namespace_at, namespace, need_redis


async def test_a_keyed_player_plays_on_two_workers_and_the_game_verifies(tmp_path):
    redis_url = need_redis()
    service = Service(tmp_path / "service", redis_url, workers=2, namespace=namespace(), admin_token=ADMIN,
                      rate_limits=False, human_pace_ms=0, human_chance_ms=0, runner_interval_ms=250, idle_close_ms=0)
    try:
        await asyncio.to_thread(service.start)
        with Client(service.url, key=PlayerKey.generate()) as fp:
            await asyncio.to_thread(fp.register, "Jo")
            game_id = await asyncio.to_thread(two_seats_with_a_bot, fp, service.url)
            last = await asyncio.to_thread(play, fp, game_id, 4)
            assert last.finished
            result = await asyncio.to_thread(verify, fp, game_id, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "one they signed" in result.stdout
    finally:
        await asyncio.to_thread(service.stop)
        await drop_namespace_at(redis_url, service.settings.namespace)
