"""Done means: clients that send only commands from ``legal`` finish seeded 2–8-seat games over HTTP with
no 4xx but 409, and every finished game's export passes ``replays verify``: on each store, every seat count from 2
to 8 in each batch (each store's games their own seeds) — one batch in ``make test``, five in ``make soak``
(``tests/depth.py``)."""

from __future__ import annotations

import random

import pytest

from replays.verify import verify
from service.events.export import load
from tests.api.helpers import fill, new_game, play_from_legal
from tests.depth import count

BATCHES = count("FREE_PARKING_HTTP_BATCHES", 1, 5)
SEAT_COUNTS = 7  # 2 to 8


@pytest.mark.parametrize("batch", range(BATCHES))
async def test_games_played_from_legal_finish_and_their_exports_verify(live, live_kind, batch):
    on_redis = live_kind != "embedded"
    rnd = random.Random(f"{live_kind}-{batch}")
    for k in range(SEAT_COUNTS):  # every seat count from 2 to 8 on each store, each batch starting elsewhere
        seats = 2 + (batch * 3 + k + 3 * on_redis) % SEAT_COUNTS
        game_id = await new_game(live, seats)
        tokens = await fill(live, game_id, seats)
        statuses = await play_from_legal(live, game_id, tokens, rnd)
        assert set(statuses) <= {200, 409}
        r = await live.get(f"/games/{game_id}/export")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-ndjson")
        header, envelopes = load(r.content)
        verdict = verify(header, envelopes)
        assert verdict.ok and verdict.redecided, verdict.summary()
