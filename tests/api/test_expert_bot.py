"""The card game's expert bot over HTTP: seatable at a table like any bot (and the omniscient ceiling never), playing
a game to its verified end, and choosing its moves off the event loop."""

from __future__ import annotations

import threading

import pytest

from service.bots.expert import ExpertBot
from tests.api.helpers import new_game, verified, view, wait_for

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])


async def test_an_expert_seated_over_http_plays_the_game_to_a_verified_end(api, monkeypatch):
    threads: set[str] = set()
    choose = ExpertBot.choose

    def spied(self, *args):
        threads.add(threading.current_thread().name)
        return choose(self, *args)

    monkeypatch.setattr(ExpertBot, "choose", spied)
    game_id = await new_game(api, 2)
    for bot in ("expert", "greedy"):
        r = await api.post(f"/games/{game_id}/seats", json={"bot": bot})
        assert r.status_code == 201, r.text

    async def finished():
        v = await view(api, game_id)
        return v if v["status"] == "finished" else None

    v = await wait_for(finished, seconds=120)
    assert sorted(p["bot"] for p in v["players"]) == ["expert", "greedy"]  # a trade of places may have moved them
    served = set(threads)  # verifying below re-derives the bots' moves in this thread: what the service ran is here
    await verified(api, game_id)
    assert served and all(name.startswith("bots") for name in served), served  # never the event loop's thread
    assert threading.current_thread().name not in served


@pytest.mark.parametrize(("kind", "bot"), [("solitaire", "expert"), ("free-parking", "omniscient"), ("free-parking", "open-hands")])
async def test_a_bot_the_table_may_not_seat_is_refused_and_changes_nothing(api, kind, bot):
    r = await api.post("/games", json={"kind": kind, "seats": 1} if kind == "solitaire" else {"kind": kind, "seats": 2})
    game_id = r.json()["game_id"]
    before = await view(api, game_id)
    r = await api.post(f"/games/{game_id}/seats", json={"bot": bot})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
    after = await view(api, game_id)
    assert after["version"] == before["version"]
