"""``python -m service`` itself on the Redis Cluster: started with only ``REDIS_URL`` naming one node, it finds the
cluster (``FREE_PARKING_CLUSTER=auto``), plays whole games from ``legal`` over HTTP, and their exports verify.

The in-process API suite runs on the cluster too (``store_kind`` = ``cluster``); this is the one test of the
service as a process of its own there (see ``live_kind`` in conftest.py for why there is only one).
"""

from __future__ import annotations

import random

import pytest

from replays.verify import verify
from service.events.export import load
from tests.api.helpers import fill, new_game, play_from_legal


@pytest.mark.parametrize("live_kind", ["cluster"])
async def test_the_service_process_finds_the_cluster_and_plays_games_to_the_end(live):
    health = await live.get("/healthz")
    assert health.status_code == 200 and health.json() == {"ok": True, "store": "redis"}
    rnd = random.Random(4)
    for seats in (2, 3):
        game_id = await new_game(live, seats)
        tokens = await fill(live, game_id, seats)
        statuses = await play_from_legal(live, game_id, tokens, rnd)
        assert set(statuses) <= {200, 409}
        r = await live.get(f"/games/{game_id}/export")
        assert r.status_code == 200
        header, envelopes = load(r.content)
        verdict = verify(header, envelopes)
        assert verdict.ok and verdict.redecided, verdict.summary()
    listed = (await live.get("/games", params={"status": "finished"})).json()
    assert len(listed["games"]) == 2
