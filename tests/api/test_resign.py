"""``resign`` over HTTP, on every store (docs/rules-free-parking.md and docs/rules-monopoly.md, "Resigning"): a seat
resigns off turn and the game goes on; another resigns and the one seat left wins; a resigned seat's next command is
a 422; the export verifies offline (``replays verify``: every event re-decided)."""

from __future__ import annotations

from tests.api.conftest import bearer
from tests.api.helpers import assert_error, fill, new_game, verified, view


async def resign(api, game_id: str, token: str) -> dict:
    r = await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(token))
    assert r.status_code == 200, r.text
    return r.json()


async def test_card_game_seats_resign_off_turn_then_the_last_one_wins(api):
    game_id = await new_game(api, 3)
    tokens = await fill(api, game_id, 3)
    v = await view(api, game_id, tokens[2])
    assert v["turn"] == 1 and v["legal"] == [{"type": "resign"}]  # off turn: resigning only, at any moment
    answer = await resign(api, game_id, tokens[2])
    assert [e["type"] for e in answer["events"]] == ["seat_resigned"]
    assert answer["view"]["players"][2]["resigned"] and answer["view"]["legal"] == []
    v = await view(api, game_id, tokens[1])
    assert v["status"] == "playing" and v["turn"] == 1 and v["legal"][-1] == {"type": "resign"}  # the game goes on
    assert_error(await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(tokens[2])),
                 422, "forfeited")
    answer = await resign(api, game_id, tokens[1])  # on turn: one seat is left, and wins
    assert [e["type"] for e in answer["events"]] == ["seat_resigned", "game_won", "seed_revealed"]
    v = await view(api, game_id, tokens[0])
    assert v["status"] == "finished" and v["winner"] == 0 and v["legal"] == []
    envelopes = await verified(api, game_id)
    assert [e.type for e in envelopes].count("seat_resigned") == 2


async def test_monopoly_players_resign_bankrupt_to_the_bank_then_the_last_one_wins(api):
    r = await api.post("/games", json={"kind": "monopoly", "seats": 3, "options": {}})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    tokens = await fill(api, game_id, 3)
    answer = await resign(api, game_id, tokens[1])  # off turn: seat 0 rolls first
    assert [e["type"] for e in answer["events"]][:1] == ["seat_resigned"]
    assert "went_bankrupt" in [e["type"] for e in answer["events"]]
    seat = answer["view"]["seats"][1]
    assert seat["resigned"] and seat["bankrupt"] and seat["cash"] == 0 and answer["view"]["legal"] == []
    v = await view(api, game_id, tokens[0])
    assert v["status"] == "playing" and {"type": "roll"} in v["legal"] and v["legal"][-1] == {"type": "resign"}
    assert_error(await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(tokens[1])),
                 422, "bankrupt")
    await resign(api, game_id, tokens[0])
    v = await view(api, game_id, tokens[2])
    assert v["status"] == "finished" and v["winner"] == 2 and v["end_reason"] == "last_player"
    await verified(api, game_id)
