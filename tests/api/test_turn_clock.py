"""The turn clock through the service (option ``turn_seconds``): a person's turn nobody plays is played by the server's
runner at its deadline, as a ``timeout`` command of its own; missed turns in a row forfeit the seat, and with one
player left the game is over. Waits on the log's versions, never on the clock."""

from __future__ import annotations

from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import log_of, seeded_game, verified, view, wait_for

SEED = "ab" * 32


def _events(log, kind):
    return [e for e in log if e["type"] == kind]


async def test_a_persons_turn_is_played_by_the_runner_when_its_clock_runs_out(api):
    game_id, tokens = await seeded_game(api, 2, SEED, turn_seconds=1, forfeit_after=2)
    first = await view(api, game_id, tokens[1])
    assert first["turn"] == 1 and first["forfeit_after"] == 2
    deadline = first["turn_deadline_at"]
    assert deadline is not None and first["legal"]

    async def timed_out():
        _, _, log = await log_of(api, game_id)
        return log if _events(log, "turn_timed_out") else None

    log = await wait_for(timed_out, seconds=10)
    event = _events(log, "turn_timed_out")[0]
    assert event["public"]["seat"] == 1 and event["public"]["missed"] == 1 and event["public"]["card"]
    assert event["command"] == {"type": "timeout"} and event["at"] >= deadline
    assert event["command_id"] == f"timeout:{game_id}:{event['seq'] - 1}"
    after = await view(api, game_id, tokens[1])
    assert after["turn"] == 0 and after["players"][1]["missed"] == 1
    assert event["public"]["card"] in [c["id"] for c in after["decks"]["discard"]]

    # nobody plays on: seat 0's turn times out, then seat 1's second miss forfeits it, and seat 0 is left to win
    async def over():
        _, _, log = await log_of(api, game_id)
        return log if _events(log, "game_won") else None

    log = await wait_for(over, seconds=15)
    forfeit = _events(log, "seat_forfeited")
    assert [e["public"]["seat"] for e in forfeit] == [1] and forfeit[0]["public"]["missed"] == 2
    assert _events(log, "game_won")[0]["public"]["seat"] == 0
    end = await view(api, game_id, tokens[1])
    assert end["status"] == "finished" and end["players"][1]["forfeited"] and end["winner"] == 0

    r = await api.get(f"/games/{game_id}/log", headers=bearer(tokens[0]))
    lines = [x["line"] for x in r.json()["lines"]]
    assert any(line.startswith("time ran out: Player 1's turn was played for them: discarded") for line in lines), lines
    assert "Player 1 forfeits after 2 missed turns" in lines
    r = await api.get(f"/games/{game_id}/audit", headers=ADMIN_HEADERS)
    assert "seat 1 (Player 1) forfeits after 2 missed turns" in r.text
    await verified(api, game_id)


async def test_an_out_of_bounds_turn_clock_is_refused(api):
    for options in ({"turn_seconds": 0}, {"turn_seconds": 86401}, {"forfeit_after": 0}):
        r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "options": options})
        assert r.status_code == 400, (options, r.text)
    r = await api.post("/games", json={"kind": "monopoly", "seats": 2, "options": {"turn_seconds": 5, "forfeit_after": 2}})
    assert r.status_code == 201, r.text


async def test_a_monopoly_roll_nobody_makes_is_made_by_the_runner_and_forfeits(api):
    r = await api.post("/games", json={"kind": "monopoly", "seats": 2, "options": {"turn_seconds": 1, "forfeit_after": 1}})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    tokens = [(await api.post(f"/games/{game_id}/seats", json={"name": f"Player {i}"})).json()["token"] for i in range(2)]
    first = await view(api, game_id, tokens[0])
    assert first["turn_deadline_at"] is not None and first["forfeit_after"] == 1

    async def over():
        _, _, log = await log_of(api, game_id)
        return log if _events(log, "game_ended") else None

    log = await wait_for(over, seconds=10)
    timed = _events(log, "turn_timed_out")[0]
    assert timed["public"] == {"type": "turn_timed_out", "seat": 0, "missed": 1} and timed["command"] == {"type": "timeout"}
    assert _events(log, "seat_forfeited")[0]["public"]["seat"] == 0
    assert _events(log, "game_ended")[0]["public"]["winner"] == 1
    end = await view(api, game_id, tokens[1])
    assert end["seats"][0]["forfeited"] and end["seats"][0]["bankrupt"] and not end["seats"][1]["forfeited"]
    await verified(api, game_id)
