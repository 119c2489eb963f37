"""Tournaments over rounds over HTTP (docs/tournaments.md): created with a committed seed, entered (open entry with the
player's client seed, or named by the organiser), started, each round drawn as the last ends, its short tables filled
with bots, played to the end by the entrants' clients, ranked — and the bundle re-derives every seed, draw, deal and
standing offline (``replays verify``), refusing one whose draw was changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replays.rounds import verify_rounds
from service.rules import rounds as rules
from service.rules.rounds.bundle import dump_rounds, load_rounds
from tests.api.conftest import ADMIN_HEADERS, bearer, make_settings, served
from tests.api.helpers import assert_error, playable, view, wait_for

MONOPOLY = {"kind": "monopoly", "format": "rounds", "rounds": 2, "table_size": 2, "options": {"max_rounds": 3}}
ROOT = Path(__file__).resolve().parents[2]
PREFERRED = ("buy", "choose_tax", "pass_bid", "reject_trade", "claim_buildings", "roll", "declare_bankruptcy", "decline",
             "end_turn")
SPAM = ("offer_trade", "mortgage", "lift_mortgage", "build", "sell_building", "bid")
"""Never chosen by the plain client: two clients that offer each other trades and reject them play no game."""


async def register(api, name: str) -> tuple[str, str]:
    body = (await api.post("/players", json={"name": name})).json()
    return body["player_id"], body["token"]


def plain(legal: list[dict]) -> dict | None:
    """A plain move of ``legal`` (never ``resign``, never a trade offer or the like): the first of the kinds above that
    is there, else the first; ``None`` when only those are left (off turn, it waits)."""
    moves = [c for c in playable(legal) if c["type"] not in SPAM]
    return next((c for kind in PREFERRED for c in moves if c["type"] == kind), moves[0] if moves else None)


async def play_round(api, tokens: dict[str, str], tables: list[dict]) -> None:
    """Every entrant's client plays its seat, each move from its ``legal``, until every table of the round is over;
    the server's bots play theirs."""
    seats = [(t["game_id"], tokens[s["player_id"]]) for t in tables for s in t["seats"] if s["player_id"]]
    for _ in range(20_000):
        over = True
        for game_id, token in seats:
            v = await view(api, game_id, token)
            if v["status"] == "finished":
                continue
            over = False
            move = plain(v["legal"])
            if move is not None:
                r = await api.post(f"/games/{game_id}/commands", json={**move, "expected_version": v["version"]},
                                   headers=bearer(token))
                assert r.status_code in (200, 409), r.text
        if over:
            return
    raise AssertionError("the round did not end")


async def drawn(api, tournament_id: str, round_no: int) -> dict:
    async def ready():
        t = (await api.get(f"/tournaments/{tournament_id}")).json()
        return t if len(t["drawn"]) >= round_no else None

    return await wait_for(ready, 60)


@pytest.fixture
async def organised(store_kind, tmp_path):
    async with served(make_settings(store_kind, tmp_path, allow_volatile=True, runner_interval_ms=20)) as api:
        yield api


async def test_a_monopoly_tournament_over_rounds_plays_to_the_end_and_its_bundle_verifies(organised, tmp_path):
    api = organised
    players = {name: await register(api, name) for name in ("Ann", "Bob", "Cy", "Di", "Eve")}
    tokens = {pid: token for pid, token in players.values()}
    named = [players["Ann"][0], players["Bob"][0]]
    r = await api.post("/tournaments", json={**MONOPOLY, "name": "Club night", "entrants": "open"}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    t = r.json()
    tid = t["tournament_id"]
    assert (t["format"], t["status"], t["entry"], t["entrants"], t["drawn"]) == ("rounds", "entry", "open", [], [])
    for pid in named:  # the organiser names two, their seeds derived
        r = await api.post(f"/tournaments/{tid}/entries", json={"player_id": pid}, headers=ADMIN_HEADERS)
        assert r.status_code == 201 and r.json()["seed_from"] == "server", r.text
    for name in ("Cy", "Di", "Eve"):  # three enter by themselves, with seeds of their own
        r = await api.post(f"/tournaments/{tid}/entries", json={"client_seed": f"{ord(name[0]):02x}" * 32},
                           headers=bearer(players[name][1]))
        assert r.status_code == 201 and r.json()["seed_from"] == "player", r.text
    assert_error(await api.post(f"/tournaments/{tid}/entries", json={}, headers=bearer(players["Cy"][1])), 409, "already_entered")
    assert_error(await api.post(f"/tournaments/{tid}/start", headers=bearer(players["Cy"][1])), 403)
    started = (await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).json()
    assert started["status"] == "playing" and len(started["drawn"]) == 1
    late, _ = await register(api, "Late")
    assert_error(await api.post(f"/tournaments/{tid}/entries", json={"player_id": late}, headers=ADMIN_HEADERS), 409, "entry_closed")
    first = started["drawn"][0]["tables"]
    assert sorted(len([s for s in t["seats"] if s["bot"]]) for t in first) == [0, 0, 1]  # five at tables of two
    assert_error(await api.post(f"/games/{first[0]['game_id']}/seats", json={}, headers=bearer(players["Eve"][1])), 409,
                 "seat_reserved")
    await play_round(api, tokens, first)
    second = (await drawn(api, tid, 2))["drawn"][1]["tables"]
    await play_round(api, tokens, second)

    async def final():
        s = (await api.get(f"/tournaments/{tid}/standings")).json()
        return s if s["status"] == "finished" else None

    standings = await wait_for(final, 60)
    assert standings["rounds_finished"] == 2 and len(standings["standings"]) == 5
    assert [len(s["rounds"]) for s in standings["standings"]] == [2] * 5
    short = [line for s in standings["standings"] for line in s["rounds"] if line.get("bots")]
    assert len(short) == 2 and all(line["bots"] == 1 for line in short)  # a table short each round, marked
    assert sum(line["points"] for s in standings["standings"] for line in s["rounds"]) <= 2 * 3  # a bot takes some

    bundle = (await api.get(f"/tournaments/{tid}/export")).content  # public once every round has finished
    manifest, exports = load_rounds(bundle)
    assert manifest.server_seed is not None and len(exports) == 6
    verdict = verify_rounds(manifest, exports)
    assert verdict.ok, verdict.lines()

    tampered = manifest.draws[1]
    swapped = rules.Draw(round=2, tables=(tampered.tables[1].__class__(table=0, seats=tampered.tables[1].seats),
                                          tampered.tables[0].__class__(table=1, seats=tampered.tables[0].seats),
                                          *tampered.tables[2:]))
    forged = manifest.__class__(**{**{f: getattr(manifest, f) for f in manifest.__struct_fields__},
                                   "draws": [manifest.draws[0], swapped]})
    refused = verify_rounds(forged, exports)
    assert not refused.ok and any("round 2" in p and "draw" in p for p in refused.problems), refused.lines()
    for name, data, status in (("bundle", bundle, 0), ("forged", b"".join(dump_rounds(forged, exports)), 1)):
        (tmp_path / name).write_bytes(data)
        cli = subprocess.run([sys.executable, "-m", "replays", "verify", str(tmp_path / name)], capture_output=True,
                             text=True, cwd=ROOT, check=False)
        assert cli.returncode == status, cli.stdout + cli.stderr
        assert cli.stdout.strip().splitlines()[-1].startswith("OK" if status == 0 else "REJECTED"), cli.stdout

    results = (await api.get(f"/tournaments/{tid}/export", params={"format": "csv"})).text
    assert results.startswith("\ufefftournament_id,round,table") and results.count("\r\n") == 1 + 5 * 2
    sheet = (await api.get(f"/tournaments/{tid}/export", params={"format": "sheet-html", "round": 2})).text
    assert "round 2 of 2" in sheet and all(name in sheet for name in ("Ann", "Bob", "Cy", "Di", "Eve"))
    assert_error(await api.get(f"/tournaments/{tid}/export", params={"format": "sheet-csv", "round": 3}), 400)


async def test_a_tournament_over_rounds_refuses_what_its_format_does_not_allow_and_writes_nothing(organised):
    api = organised
    body = {"name": "x", "kind": "monopoly", "format": "rounds", "rounds": 2, "table_size": 4, "entrants": "open"}
    assert_error(await api.post("/tournaments", json=body, headers=ADMIN_HEADERS), 400)  # no max_rounds
    assert_error(await api.post("/tournaments", json={**body, "options": {"max_rounds": 5}, "duplicate": True},
                                headers=ADMIN_HEADERS), 400)  # Monopoly's deals are not duplicated
    assert_error(await api.post("/tournaments", json={**body, "kind": "free-parking", "tables": [{}]}, headers=ADMIN_HEADERS), 400)
    assert_error(await api.post("/tournaments", json={**body, "kind": "free-parking", "entrants": ["p_nobody"]},
                                headers=ADMIN_HEADERS), 400)
    assert_error(await api.post("/tournaments", json={"name": "x", "kind": "monopoly", "tables": [{}]}, headers=ADMIN_HEADERS), 400)
    ok = await api.post("/tournaments", json={**body, "kind": "free-parking"}, headers=ADMIN_HEADERS)
    tid = ok.json()["tournament_id"]
    assert_error(await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS), 409, "too_few_entrants")
    assert_error(await api.post(f"/tournaments/{tid}/entries", json={}), 401)
    assert_error(await api.post(f"/tournaments/{tid}/entries", json={}, headers=ADMIN_HEADERS), 400)
    assert (await api.get(f"/tournaments/{tid}/standings")).json()["status"] == "entry"
    assert_error(await api.get(f"/tournaments/{tid}/export"), 403)  # the organiser's until the end
    assert_error(await api.get(f"/tournaments/{tid}/export", params={"format": "sheet-html", "round": 1}), 400)
