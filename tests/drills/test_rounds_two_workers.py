"""A card-game tournament over rounds, and a duplicate one, run end to end over HTTP on two workers sharing one Redis
(docs/tournaments.md): entrants named by the organiser and entering by themselves, each round drawn by whichever worker
sees the last one end, every table played by the entrants' own clients (bots standing in for people, each move taken
from its ``legal``), and the bundle verified offline — every draw and deal re-derived. In the duplicate one, a table
that has finished shows nobody but the admin its seed or its hands while its round's other tables play the same cards.

``make test`` runs 8 entrants over 2 rounds; ``make soak`` the issue's 24 over 4 (``tests/depth.py``)."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest

from replays.rounds import verify_rounds
from service.rules.rounds.bundle import load_rounds
from tests.api.helpers import pick, playable
from tests.depth import count
from tests.drills.support import ADMIN_HEADERS, bearer, wait_until

ENTRANTS = count("FREE_PARKING_ROUNDS_ENTRANTS", 8, 24)
ROUNDS = count("FREE_PARKING_ROUNDS_ROUNDS", 2, 4)


async def play_table(api: httpx.AsyncClient, game_id: str, tokens: list[str], rnd: random.Random) -> None:
    """The table's entrants play it to its end, each from its own ``legal`` (never resigning); 409s are races lost."""
    for _ in range(20_000):
        over = True
        for token in tokens:
            v = (await api.get(f"/games/{game_id}", headers=bearer(token))).json()
            if v["status"] == "finished":
                return
            over = False
            if playable(v["legal"]):
                r = await api.post(f"/games/{game_id}/commands", json={**pick(v["legal"], rnd), "expected_version": v["version"]},
                                   headers=bearer(token))
                assert r.status_code in (200, 409), r.text
        if over:
            return
    raise AssertionError(f"{game_id} did not finish")


async def round_of(api: httpx.AsyncClient, tid: str, n: int) -> dict:
    found: dict = {}

    async def drawn() -> bool:
        found.update((await api.get(f"/tournaments/{tid}")).json())
        return len(found["drawn"]) >= n

    await wait_until(drawn, 120, f"round {n} drawn")
    return found["drawn"][n - 1]


def tables_of(drawn: dict, tokens: dict[str, str]) -> list[tuple[str, list[str]]]:
    return [(t["game_id"], [tokens[s["player_id"]] for s in t["seats"] if s["player_id"]]) for t in drawn["tables"]]


@pytest.mark.parametrize("duplicate", [False, True], ids=["drawn-deals", "duplicate"])
async def test_a_tournament_over_rounds_on_two_workers_ends_and_its_bundle_verifies(servers, services, duplicate):
    service = services(servers(), workers=2, allow_volatile=True)
    rnd = random.Random(f"rounds:{duplicate}")
    async with httpx.AsyncClient(base_url=service.url, timeout=60) as api:
        tokens = {}
        for i in range(ENTRANTS):
            body = (await api.post("/players", json={"name": f"Entrant {i:02d}"})).json()
            tokens[body["player_id"]] = body["token"]
        named = list(tokens)[: ENTRANTS // 2]
        r = await api.post("/tournaments", headers=ADMIN_HEADERS, json={
            "name": "Club night", "kind": "free-parking", "format": "rounds", "rounds": ROUNDS, "table_size": 4,
            "entrants": "open", "duplicate": duplicate})
        assert r.status_code == 201, r.text
        tid = r.json()["tournament_id"]
        for pid in named:
            assert (await api.post(f"/tournaments/{tid}/entries", json={"player_id": pid}, headers=ADMIN_HEADERS)).status_code == 201
        for pid in list(tokens)[ENTRANTS // 2:]:
            seed = rnd.randbytes(32).hex()
            assert (await api.post(f"/tournaments/{tid}/entries", json={"client_seed": seed}, headers=bearer(tokens[pid]))).status_code == 201
        assert (await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).status_code == 200
        for n in range(1, ROUNDS + 1):
            tables = tables_of(await round_of(api, tid, n), tokens)
            if duplicate and n == 1:
                await _a_finished_table_keeps_its_cards_while_its_round_plays(api, tables, rnd)
            await asyncio.gather(*(play_table(api, g, ts, random.Random(f"{g}:{n}")) for g, ts in tables))

        async def finished() -> bool:
            return (await api.get(f"/tournaments/{tid}/standings")).json()["status"] == "finished"

        await wait_until(finished, 120, "the standings after the last round")
        standings = (await api.get(f"/tournaments/{tid}/standings")).json()
        bundle = (await api.get(f"/tournaments/{tid}/export")).content
    assert standings["rounds_finished"] == ROUNDS and len(standings["standings"]) == ENTRANTS
    assert all(len(s["rounds"]) == ROUNDS for s in standings["standings"])
    manifest, exports = load_rounds(bundle)
    verdict = verify_rounds(manifest, exports)
    assert verdict.ok, verdict.lines()
    for n, games in enumerate(manifest.games, 1):  # every table of a duplicate round dealt alike; others apart
        seeds = {header.seed for header, _ in exports if header.game_id in games}
        assert len(seeds) == (1 if duplicate else len(games)), (n, seeds)
    if duplicate:
        assert [line for line in verdict.notes if "every table dealt from the round's seed" in line] != []
        assert all(line.matchpoints is not None for s in manifest.standings for line in s.rounds)


async def _a_finished_table_keeps_its_cards_while_its_round_plays(api, tables, rnd) -> None:
    """The first table of a duplicate round plays to its end while the others have not begun: its full export is the
    admin's alone, a seat's own record carries no seed, nobody but its players watches it, and their finished view
    shows no other hand."""
    (game_id, tokens), *_ = tables
    await play_table(api, game_id, tokens, rnd)
    assert (await api.get(f"/games/{game_id}/export")).status_code == 403
    own = (await api.get(f"/games/{game_id}/export", params={"as": 0}, headers=bearer(tokens[0]))).text
    assert '"seed":' not in own.split("\n", 1)[0]
    assert (await api.get(f"/games/{game_id}")).status_code == 403  # no spectator: the other tables hold its cards
    view = (await api.get(f"/games/{game_id}", headers=bearer(tokens[0]))).json()
    assert all(p.get("hand") in (None, []) for p in view["players"]), view["players"]
    assert (await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)).status_code == 200
