"""Who is at each table, in the lobby's list (``GET /games`` ``players``, docs/lobby.md): the names, bot kinds and
bot accounts of the seats taken, in the order they were taken, and nothing a spectator of the table would not see."""

from __future__ import annotations

import pytest

from tests.api.conftest import ADMIN_HEADERS

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])


async def listed(api, game_id: str, status: str) -> dict:
    r = await api.get("/games", params={"status": status})
    assert r.status_code == 200, r.text
    return next(g for g in r.json()["games"] if g["game_id"] == game_id)


async def test_the_list_names_who_sat_down_and_nothing_private(api):
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 3})).json()["game_id"]
    assert (await listed(api, game_id, "waiting"))["players"] == []
    ann = (await api.post("/players", json={"name": "Ann"})).json()
    r = await api.post(f"/games/{game_id}/seats", json={"client_seed": "ab" * 32}, headers={"authorization": f"Bearer {ann['token']}"})
    assert r.status_code == 201, r.text
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    waiting = await listed(api, game_id, "waiting")
    assert waiting["taken"] == 2 and waiting["players"] == [
        {"name": "Ann"}, {"name": waiting["players"][1]["name"], "bot": "greedy", "account": "bot"}]
    assert (await api.post(f"/games/{game_id}/seats", json={"name": "Bob"})).status_code == 201
    playing = await listed(api, game_id, "playing")
    assert [p["name"] for p in playing["players"]] == ["Ann", waiting["players"][1]["name"], "Bob"]
    # the names a spectator's view shows, and none of a player's id, key or client seed
    seen = (await api.get(f"/games/{game_id}")).json()
    assert sorted(p["name"] for p in playing["players"]) == sorted(p["name"] for p in seen["players"])
    text = str(playing)
    assert ann["player_id"] not in text and "ab" * 32 not in text and "player_id" not in text


async def test_a_fixed_seed_game_and_a_solitaire_list_their_players_too(api):
    r = await api.post("/games", json={"kind": "monopoly", "seats": 2, "seed": "5e" * 32}, headers=ADMIN_HEADERS)
    game_id = r.json()["game_id"]
    for bot in ("strategic", "random"):
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": bot})).status_code == 201
    assert [p["bot"] for p in (await listed(api, game_id, "playing"))["players"]] == ["strategic", "random"]
    solo = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    assert (await api.post(f"/games/{solo}/seats", json={"name": "Cy"})).status_code == 201
    assert (await listed(api, solo, "playing"))["players"] == [{"name": "Cy"}]
