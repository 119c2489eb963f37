"""The turn clock through the service (option ``turn_seconds``): a person's turn nobody plays is played by the server's
runner at its deadline, as a ``timeout`` command of its own; missed turns in a row forfeit the seat, and with one
player left the game is over. Waits on the log's versions, never on the clock."""

from __future__ import annotations

from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import find_seed, log_of, seeded_game, verified, view, wait_for

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


TURN_S, ANSWER_S = 4, 6  # an answer may take longer than a whole turn


def _colluders_seed() -> str:
    """Three seats, seat 1 first: seat 1 holds a Feed the Meter and a Point card of the same minutes (fed, then run,
    its meter is back at 0 with a Point card down: a target for Officer Jones), and seat 0 holds an Officer Jones."""

    def deals(s) -> bool:
        hand1 = s.seats[1].hand
        same = any(f"M{m}-" in " ".join(hand1) and f"P{m}-" in " ".join(hand1) for m in (20, 30, 40, 60))
        return same and any(c.startswith("OJ-") for c in s.seats[0].hand)

    return find_seed(deals, seats=3, turn_seconds=TURN_S, forfeit_after=1, response_seconds=ANSWER_S)


async def _play(api, game_id: str, token: str, *bodies: dict) -> None:
    for body in bodies:
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
        assert r.status_code == 200, (body, r.text)


async def test_colluders_cannot_run_out_a_third_players_clock_with_officer_jones(api):
    """Issue 31: at the start of seat 2's turn, seat 0 plays Officer Jones on seat 1, who never answers. The answer
    may take longer than seat 2's whole turn; it used to run seat 2's clock out, and with ``forfeit_after`` 1 put seat
    2 out the moment the server answered for seat 1. Now seat 2's clock stops while it waits on seat 1 and restarts
    with the time it had left (rules version 3)."""
    seed = _colluders_seed()
    game_id, tokens = await seeded_game(api, 3, seed, turn_seconds=TURN_S, forfeit_after=1, response_seconds=ANSWER_S)
    hand1 = [c["id"] for c in (await view(api, game_id, tokens[1]))["you"]["hand"]]
    held = {c.split("-")[0] for c in hand1}
    minutes = next(m for m in (20, 30, 40, 60) if {f"M{m}", f"P{m}"} <= held)
    feed, errand = (next(c for c in hand1 if c.startswith(f"{k}{minutes}-")) for k in "MP")
    await _play(api, game_id, tokens[1], {"type": "feed_meter", "card": feed}, {"type": "end_turn"})
    hand2 = (await view(api, game_id, tokens[2]))["you"]["hand"]
    await _play(api, game_id, tokens[2], {"type": "discard", "card": hand2[0]["id"]}, {"type": "end_turn"})
    hand0 = (await view(api, game_id, tokens[0]))["you"]["hand"]
    other = next(c["id"] for c in hand0 if not c["id"].startswith("OJ-"))
    await _play(api, game_id, tokens[0], {"type": "discard", "card": other}, {"type": "end_turn"})
    await _play(api, game_id, tokens[1], {"type": "run_errand", "card": errand}, {"type": "end_turn"})
    victim = await view(api, game_id, tokens[2])
    assert victim["turn"] == 2 and victim["players"][1]["meter"] == 0
    jones = next(c["id"] for c in (await view(api, game_id, tokens[0]))["you"]["hand"] if c["id"].startswith("OJ-"))
    await _play(api, game_id, tokens[0], {"type": "officer_jones", "card": jones, "target": 1})

    async def answered_for_seat_1():
        _, _, log = await log_of(api, game_id)
        return log if _events(log, "accepted") else None

    log = await wait_for(answered_for_seat_1, seconds=ANSWER_S + 20)
    accepted = _events(log, "accepted")[0]
    assert accepted["public"] == {"type": "accepted", "seat": 1, "by_server": True}
    after = await view(api, game_id, tokens[2])
    assert not after["players"][2]["forfeited"] and after["turn"] == 2
    assert after["turn_deadline_at"] > accepted["at"], "the wait on seat 1 took seat 2's turn"
    hand2 = after["you"]["hand"]
    await _play(api, game_id, tokens[2], {"type": "discard", "card": hand2[0]["id"]}, {"type": "end_turn"})
    _, _, log = await log_of(api, game_id)
    assert not _events(log, "seat_forfeited") and not _events(log, "turn_timed_out")
    await verified(api, game_id)
