"""Read models over HTTP: the audit (from its projection, completed by the events it has not reached yet),
a game's scores and a player's results."""

from __future__ import annotations

import asyncio

from service.events.export import load
from service.rules.engine import audit_lines, rules_for
from tests.api.conftest import ADMIN_HEADERS, bearer


async def _bot_game(api, seats: int, player_token: str | None = None) -> str:
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": seats})).json()["game_id"]
    if player_token:
        assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player_token))).status_code == 201
    while (await api.get(f"/games/{game_id}")).json()["status"] == "waiting":
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    return game_id


async def _until(predicate, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not await predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_the_audit_is_one_public_line_per_event_while_playing_and_complete_after(api):
    game_id = await _bot_game(api, 3)
    r = await api.get(f"/games/{game_id}/audit")
    lines = r.text.splitlines()
    assert len(lines) == int(r.headers["x-version"]) >= 6
    assert [int(line.split()[0]) for line in lines] == list(range(1, len(lines) + 1))
    assert "[hands" not in r.text  # nothing hidden is spelled out before the end
    await _until(lambda: _finished(api, game_id))
    header, envelopes = load((await api.get(f"/games/{game_id}/export")).content)
    assert (await api.get(f"/games/{game_id}/audit")).text.splitlines() == audit_lines(rules_for("free-parking"), envelopes, reveal=True)


async def test_scores_and_player_results_follow_the_finished_game(api):
    player = (await api.post("/players", json={"name": "Ann"})).json()
    game_id = await _bot_game(api, 2, player["token"])
    me = await api.get(f"/games/{game_id}", headers=bearer(player["token"]))
    while (v := me.json())["status"] != "finished":
        if v["legal"] and v["legal"][0]["type"] != "resign":  # the player plays on (resign is always listed, last)
            await api.post(f"/games/{game_id}/commands", json=v["legal"][0], headers=bearer(player["token"]))
        else:
            await asyncio.sleep(0.02)
        me = await api.get(f"/games/{game_id}", headers=bearer(player["token"]))
    final = me.json()

    async def projected() -> bool:
        return (await api.get(f"/games/{game_id}/scores")).json()["version"] == final["version"]

    await _until(projected)
    scores = (await api.get(f"/games/{game_id}/scores")).json()["scores"]
    assert scores["status"] == "finished" and scores["winner"] == final["winner"]
    assert [s.get("points", 0) for s in scores["seats"]] == [p["points"] for p in final["players"]]
    mine = next(p for p in final["players"] if p["player_id"] == player["player_id"])

    async def counted() -> bool:
        return (await api.get(f"/players/{player['player_id']}")).json()["results"] is not None

    await _until(counted)
    results = (await api.get(f"/players/{player['player_id']}")).json()["results"]
    assert results["played"] == 1 and results["won"] == int(final["winner"] == mine["seat"])
    assert results["points"] == mine["points"] and results["games"][game_id]["seat"] == mine["seat"]


async def test_unknown_games_and_players_are_404(api):
    assert (await api.get("/games/g_nope/scores")).json()["error"]["code"] == "not_found"
    assert (await api.get("/players/p_nope")).status_code == 404


async def _finished(api, game_id: str) -> bool:
    return (await api.get(f"/games/{game_id}", headers=ADMIN_HEADERS)).json()["status"] == "finished"
