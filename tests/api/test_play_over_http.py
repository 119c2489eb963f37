"""Done means: clients that send only commands from ``legal`` finish seeded 2–8-seat games over HTTP with
no 4xx but 409, and every finished game's export passes ``replays verify``."""

from __future__ import annotations

import random

import pytest

from replays.verify import verify
from service.events.export import load
from tests.api.helpers import fill, new_game, play_from_legal

GAMES = 50


@pytest.mark.parametrize("batch", range(5))
async def test_fifty_games_played_from_legal_finish_and_their_exports_verify(live, batch):
    rnd = random.Random(batch)
    for k in range(GAMES // 5):
        seats = 2 + (batch * 10 + k) % 7
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
