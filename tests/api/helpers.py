"""Clients that play through the HTTP API only."""

from __future__ import annotations

import random

import httpx

from tests.api.conftest import bearer


async def new_game(api: httpx.AsyncClient, seats: int, **options) -> str:
    r = await api.post("/games", json={"kind": "free-parking", "seats": seats, "options": options})
    assert r.status_code == 201, r.text
    return r.json()["game_id"]


async def fill(api: httpx.AsyncClient, game_id: str, seats: int) -> list[str]:
    """Seat ``seats`` guests; their tokens in seat order."""
    tokens = []
    for i in range(seats):
        r = await api.post(f"/games/{game_id}/seats", json={"name": f"Player {i}"})
        assert r.status_code == 201, r.text
        assert r.json()["seat"] == i
        tokens.append(r.json()["token"])
    return tokens


async def view(api: httpx.AsyncClient, game_id: str, token: str | None = None) -> dict:
    r = await api.get(f"/games/{game_id}", headers=bearer(token) if token else {})
    assert r.status_code == 200, r.text
    return r.json()


PREFERRED = ("free_parking", "run_errand", "feed_meter", "officer_jones", "talk_out")


def pick(legal: list[dict], rnd: random.Random) -> dict:
    """A command from ``legal``: a kind of command first (scoring ones more often), then one of that kind."""
    kinds = sorted({c["type"] for c in legal})
    weights = [4 if k in PREFERRED else 1 for k in kinds]
    kind = rnd.choices(kinds, weights)[0]
    return rnd.choice([c for c in legal if c["type"] == kind])


async def play_from_legal(api: httpx.AsyncClient, game_id: str, tokens: list[str], rnd: random.Random, max_commands: int = 3000) -> dict:
    """Play to the end sending only commands taken from a seat's ``legal``, each with ``expected_version``.

    The awaited seat acts, else now and then another seat that may interrupt, else the seat whose turn it
    is. Returns counts of answers by status; any 4xx but 409 fails the test at once.
    """
    statuses: dict[int, int] = {}
    seat_token = dict(enumerate(tokens))  # a token is a player's: after a trade of places, seats move
    v = await view(api, game_id, tokens[0])
    for step in range(max_commands):
        if v["status"] == "finished":
            return statuses
        actor = v["pending"]["seat"] if v["pending"] else v["turn"]
        v = await view(api, game_id, seat_token[actor])
        if v["pending"] is None and step % 3 == 0:
            others = [await view(api, game_id, t) for s, t in seat_token.items() if s != actor]
            interrupts = [o for o in others if o["legal"]]
            if interrupts and rnd.random() < 0.5:
                v = rnd.choice(interrupts)
        assert v["legal"], f"seat {v['seat']} has no legal command at version {v['version']}"
        command = dict(pick(v["legal"], rnd), expected_version=v["version"])
        r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(seat_token[v["seat"]]))
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code in (200, 409), f"{command} → {r.status_code} {r.text}"
        if r.status_code == 200 and any(e["type"] == "places_traded" for e in r.json()["events"]):
            seat_token = {(await view(api, game_id, t))["seat"]: t for t in tokens}
        v = r.json()["view"] if r.status_code == 200 else await view(api, game_id, tokens[0])
    raise AssertionError(f"game {game_id} did not finish within {max_commands} commands")
