"""Solitaire end to end over HTTP: created as a registered player's game, played from ``legal`` to a win (the
solver's line on a seed the player chose) with ``undo`` and the ``hint`` along the way, every bad input a 422 that
appends nothing, the export verified offline, and the player's statistics keeping chosen-seed games apart."""

from __future__ import annotations

import asyncio

import pytest

from replays.verify import verify
from service.events.export import load
from service.rules.solitaire.layout import deal
from service.rules.solitaire.solver import solve
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import assert_error, log_of

WINNABLE = bytes([1]) * 32
"""A deal the solver wins within its budget (two redeals on the way)."""


async def _player(api, name: str = "Solo") -> dict:
    r = await api.post("/players", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()


async def _solitaire(api, token: str, seed: bytes | None = None) -> str:
    """A solitaire created and taken by the player of ``token``: dealt at once (it has one seat)."""
    body = {"kind": "solitaire"} | ({"seed": seed.hex()} if seed is not None else {})
    r = await api.post("/games", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["seats"] == 1
    game_id = r.json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))
    assert r.status_code == 201 and r.json()["seat"] == 0, r.text
    return game_id


async def _view(api, game_id: str, token: str | None = None) -> dict:
    r = await api.get(f"/games/{game_id}", headers=bearer(token) if token else {})
    assert r.status_code == 200, r.text
    return r.json()


async def _send(api, game_id: str, token: str, command: dict, version: int) -> dict:
    r = await api.post(f"/games/{game_id}/commands", json=dict(command, expected_version=version), headers=bearer(token))
    assert r.status_code == 200, f"{command} → {r.status_code} {r.text}"
    return r.json()


async def _refused(api, game_id: str, token: str, command: dict, code: str) -> None:
    before = await log_of(api, game_id)
    r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))
    assert_error(r, 422, code)
    assert await log_of(api, game_id) == before, f"{command} was refused but the log changed"


def _as_command(step) -> dict:
    """A solver step as the JSON command a client sends."""
    if step == "redeal":
        return {"type": "redeal"}
    card, row, slot = step
    return {"type": "move", "card": card, "to": {"row": row, "slot": slot}}


def _misfit(view: dict) -> dict:
    """A move of a card to a gap it does not fit: a legal move's card sent to another gap it is not listed for."""
    legal = {(c["card"], c["to"]["row"], c["to"]["slot"]) for c in view["legal"] if c["type"] == "move"}
    gaps = [(r, i + 1) for r, row in enumerate(view["layout"]) for i, card in enumerate(row) if card is None]
    cards = [card for row in view["layout"] for card in row if card is not None and not card.startswith("A")]
    card, (row, slot) = next((c, g) for c in cards for g in gaps if (c, *g) not in legal)
    return {"type": "move", "card": card, "to": {"row": row, "slot": slot}}


async def _stats(api, player_id: str, games: int) -> dict:
    """The player's statistics once the projector has counted ``games`` finished games."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 60
    while True:
        r = await api.get(f"/players/{player_id}/stats")
        assert r.status_code == 200, r.text
        if r.json()["solitaire"]["games"] >= games:
            return r.json()["solitaire"]
        assert loop.time() < end, f"the statistics did not count {games} games: {r.text}"
        await asyncio.sleep(0.05)


async def test_a_solitaire_is_played_over_http_from_the_deal_to_a_win_and_counted_apart(api):
    player = await _player(api)
    token = player["token"]
    game_id = await _solitaire(api, token, WINNABLE)
    v = await _view(api, game_id, token)
    assert v["kind"] == "solitaire" and v["status"] == "playing" and v["seat"] == 0 and v["seed_chosen"] is True
    assert v["redeals_left"] == 2 and len(v["layout"]) == 4 and all(len(row) == 13 for row in v["layout"])
    assert v["stuck"] is False  # rules version 2's field: true only with no move and no redeal left
    assert v["hint"] in v["legal"]
    spectator = await _view(api, game_id)
    assert spectator["seat"] is None and spectator["legal"] == [] and spectator["layout"] == v["layout"]

    # every bad input: a 422 with the rule's code, nothing appended
    occupied = next((r, i + 1) for r, row in enumerate(v["layout"]) for i, card in enumerate(row) if card is not None)
    card = v["layout"][occupied[0]][occupied[1] - 1]
    await _refused(api, game_id, token, _misfit(v), "card_does_not_fit")
    await _refused(api, game_id, token, {"type": "move", "card": card, "to": {"row": occupied[0], "slot": occupied[1]}}, "not_a_gap")
    await _refused(api, game_id, token, {"type": "undo"}, "nothing_to_undo")
    await _refused(api, game_id, token, {"type": "feed_meter", "card": "M20-1"}, "wrong_kind")
    assert_error(await api.post(f"/games/{game_id}/commands", json={"type": "move", "card": "ZZ", "to": {"row": 0, "slot": 1}},
                                headers=bearer(token)), 400, "invalid_command")

    # the hint is a legal move, and undo takes it back to the very layout
    answer = await _send(api, game_id, token, v["hint"], v["version"])
    assert [e["type"] for e in answer["events"]] == ["card_moved"] and answer["view"]["can_undo"]
    answer = await _send(api, game_id, token, {"type": "undo"}, answer["version"])
    assert [e["type"] for e in answer["events"]] == ["undone"] and answer["view"]["layout"] == v["layout"]

    # two redeals a game: a third is refused; both undone, the deal is back as it was
    for _ in range(2):
        answer = await _send(api, game_id, token, {"type": "redeal"}, answer["version"])
    assert answer["view"]["status"] == "playing" and answer["view"]["redeals_left"] == 0
    await _refused(api, game_id, token, {"type": "redeal"}, "no_redeal_left")
    for _ in range(2):
        answer = await _send(api, game_id, token, {"type": "undo"}, answer["version"])
    assert answer["view"]["layout"] == v["layout"] and answer["view"]["redeals_left"] == 2

    # the solver's winning line, each step taken from ``legal``; a redeal undone and redone deals the same cards
    line = solve(deal(WINNABLE), seed=WINNABLE, redeals_used=0, budget=50_000)
    assert line.won, "the solver no longer wins the test's deal: choose another WINNABLE"
    v, redeals = answer["view"], 0
    for step in line.moves:
        command = _as_command(step)
        assert command in v["legal"], f"{command} is not in legal at version {v['version']}"
        answer = await _send(api, game_id, token, command, v["version"])
        if step == "redeal":
            redeals += 1
            dealt = answer["view"]["layout"]
            undone = await _send(api, game_id, token, {"type": "undo"}, answer["version"])
            assert undone["view"]["redeals_left"] == 3 - redeals
            answer = await _send(api, game_id, token, {"type": "redeal"}, undone["version"])
            assert answer["view"]["layout"] == dealt
        v = answer["view"]
    assert v["status"] == "finished" and v["result"] == "won" and v["legal"] == [] and v["hint"] is None
    assert answer["events"][-1]["type"] == "seed_revealed"
    await _refused(api, game_id, token, {"type": "undo"}, "game_over")
    await _refused(api, game_id, token, {"type": "resign"}, "game_over")

    # the log verifies offline: every decision re-made from the seed
    r = await api.get(f"/games/{game_id}/export")
    assert r.status_code == 200, r.text
    header, envelopes = load(r.content)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()

    # a dealt game (the service's seed), resigned: counted apart from the chosen deal
    dealt_id = await _solitaire(api, token)
    d = await _view(api, dealt_id, token)
    assert d["seed_chosen"] is False
    d = (await _send(api, dealt_id, token, d["legal"][0], d["version"]))["view"]
    d = (await _send(api, dealt_id, token, {"type": "resign"}, d["version"]))["view"]
    assert d["status"] == "finished" and d["result"] == "lost" and d["reason"] == "resigned"

    stats = await _stats(api, player["player_id"], 2)
    chosen, dealt = stats["chosen_seed"], stats["dealt"]
    assert (stats["started"], stats["games"]) == (2, 2)
    assert (chosen["started"], chosen["finished"], chosen["won"], chosen["win_rate"]) == (1, 1, 1, 1.0)
    assert stats["redeal_undone"]["started"] == 0  # its redeals were undone, but a chosen-seed game stays apart as that
    assert (dealt["played"], dealt["won"], dealt["win_rate"], dealt["best_ms"], dealt["median_ms"]) == (1, 0, 0.0, None, None)
    won_time = envelopes[-1].at - next(e.at for e in envelopes if e.type == "card_moved")  # first move to last
    assert chosen["best_ms"] == chosen["median_ms"] == chosen["median_played_ms"] == won_time
    assert stats["as_of"] >= envelopes[-1].at and stats["player_id"] == player["player_id"]
    results = (await api.get(f"/players/{player['player_id']}")).json()["results"]  # a known deal wins no leaderboard
    assert set(results["games"]) == {dealt_id} and results["kinds"]["solitaire"] == {"played": 1, "won": 0, "points": 0}
    scores = (await api.get(f"/games/{game_id}/scores")).json()["scores"]
    assert scores["status"] == "finished" and scores["winner"] == 0
    assert scores["solitaire"]["result"] == "won" and scores["solitaire"]["redeals"] == redeals and scores["solitaire"]["time_ms"] == won_time
    assert scores["solitaire"]["moves"] == len(line.moves) - redeals + 1  # and the hint's, undone
    assert scores["solitaire"]["undos"] == 1 + 2 + redeals
    assert scores["solitaire"]["seed_chosen"] is True


async def test_solitaire_creation_seats_and_seeds(api):
    player = await _player(api)
    assert_error(await api.post("/games", json={"kind": "solitaire", "seats": 2}), 400, "invalid_request")
    assert_error(await api.post("/games", json={"kind": "solitaire", "options": {"seed_chosen": True}}), 400, "invalid_request")
    assert_error(await api.post("/games", json={"kind": "solitaire", "options": {"mode": "standard"}}), 400, "invalid_request")
    # a player may choose a solitaire's seed; only the admin a card game's
    assert (await api.post("/games", json={"kind": "solitaire", "seats": 1, "seed": "ab" * 32})).status_code == 201
    assert_error(await api.post("/games", json={"kind": "free-parking", "seed": "ab" * 32}), 403, "forbidden")
    r = await api.post("/games", json={"kind": "free-parking"})
    assert r.status_code == 201 and r.json()["seats"] == 4
    card_game = r.json()["game_id"]
    guest = (await api.post(f"/games/{card_game}/seats", json={"name": "Guest"})).json()["token"]
    r = await api.post(f"/games/{card_game}/commands", json={"type": "redeal"}, headers=bearer(guest))
    assert_error(r, 422, "wrong_kind")  # well formed, only another kind's
    r = await api.post(f"/games/{card_game}/commands", json={"type": "redeal", "expected_version": 2.5}, headers=bearer(guest))
    assert "$.expected_version" in assert_error(r, 400, "invalid_command")["message"]  # malformed as any kind's: says where
    game_id = await _solitaire(api, player["token"])
    other = await _player(api, "Second")
    assert_error(await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(other["token"])), 409)
    r = await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(other["token"]))
    assert_error(r, 403, "forbidden")
    fresh = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    assert_error(await api.post(f"/games/{fresh}/seats", json={"bot": "nope"}), 400, "invalid_request")
    assert_error(await api.get("/players/p_nobody/stats"), 404, "not_found")
    empty = (await api.get(f"/players/{other['player_id']}/stats")).json()["solitaire"]
    assert empty["games"] == empty["started"] == 0 and empty["as_of"] is None
    assert empty["dealt"]["played"] == empty["dealt"]["started"] == 0 and empty["dealt"]["win_rate"] is None
    listed = (await api.get("/games", params={"kind": "solitaire"})).json()["games"]
    assert {g["game_id"] for g in listed} >= {game_id, fresh} and all(g["seats"] == 1 for g in listed)


async def test_the_admin_sees_a_solitaire_replay_and_the_audit_names_each_step(api):
    player = await _player(api)
    game_id = await _solitaire(api, player["token"], WINNABLE)
    v = await _view(api, game_id, player["token"])
    answer = await _send(api, game_id, player["token"], v["legal"][0], v["version"])
    audit = (await api.get(f"/games/{game_id}/audit")).text.splitlines()
    assert len(audit) == answer["version"]
    r = await api.get(f"/games/{game_id}/replay", params={"at": 3}, headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.json()["view"]["kind"] == "solitaire", r.text
    assert_error(await api.get(f"/games/{game_id}/replay"), 403, "forbidden")


@pytest.mark.parametrize("bot", ["solver", "greedy"])
async def test_a_server_seated_solitaire_bot_plays_itself_to_the_end(api, bot):
    from service.bots import BOTS

    if bot not in BOTS.get("solitaire", {}):
        pytest.skip(f"no solitaire {bot} bot")
    game_id = (await api.post("/games", json={"kind": "solitaire", "seed": WINNABLE.hex()}, headers=ADMIN_HEADERS)).json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={"bot": bot})
    assert r.status_code == 201, r.text
    loop = asyncio.get_running_loop()
    end = loop.time() + 120
    while (v := await _view(api, game_id))["status"] != "finished":
        assert loop.time() < end, f"the {bot} bot did not finish: {v}"
        await asyncio.sleep(0.1)
    assert v["result"] in ("won", "lost")
    header, envelopes = load((await api.get(f"/games/{game_id}/export")).content)
    assert verify(header, envelopes).ok
