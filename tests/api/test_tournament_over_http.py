"""Done means: a two-table tournament, every seat a server bot, played to the end over HTTP on the service as
deployed; its standings published; its bundle exported to anyone, loaded offline, and every table verified."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from replays.bundle import verify_bundle
from replays.verify import verify
from service.rules.free_parking.bundle import load_bundle, ranking_csv, standings_csv
from tests.api.conftest import ADMIN_HEADERS


async def wait_for(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while not (found := await check()):
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        await asyncio.sleep(0.1)
    return found


@pytest.mark.live_settings(allow_volatile=True)
async def test_a_tournament_of_bots_is_played_out_exported_and_verified(live):
    tables = [{"seats": 2}, {"seats": 3}]
    r = await live.post("/tournaments", json={"name": "Bots' Cup", "kind": "free-parking", "tables": tables}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    tournament = r.json()
    tid = tournament["tournament_id"]
    for table in tournament["tables"]:
        for bot in ("greedy", "random", "greedy")[: table["seats"]]:
            r = await live.post(f"/games/{table['game_id']}/seats", json={"bot": bot})
            assert r.status_code == 201, r.text

    async def finished() -> dict | None:
        t = (await live.get(f"/tournaments/{tid}")).json()
        return t if t["status"] == "finished" else None

    tournament = await wait_for(finished, 240, "the bots did not finish the tournament")
    assert all(t["status"] == "finished" for t in tournament["tables"])

    async def standings() -> dict | None:
        s = (await live.get(f"/tournaments/{tid}/standings")).json()
        return s if s["status"] == "finished" else None

    published = await wait_for(standings, 30, "the standings did not catch up")
    assert sum(p["winner"] for p in published["ranking"]) == 2 and len(published["ranking"]) == 5

    r = await live.get(f"/tournaments/{tid}/export")  # anyone, now that every table has finished
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    manifest, exports = load_bundle(r.content)
    assert [t.game_id for t in manifest.tables] == [t["game_id"] for t in tournament["tables"]]
    assert msgspec.to_builtins(manifest.standings) == [t["standing"] for t in published["tables"]]  # published = the logs
    for header, envelopes in exports:
        verdict = verify(header, envelopes)
        assert verdict.ok and verdict.redecided, verdict.summary()
    bundle = verify_bundle(manifest, exports)
    assert bundle.ok, bundle.lines()
    assert msgspec.to_builtins(manifest.ranking) == published["ranking"]  # the API's ranking is the bundle's
    r = await live.get(f"/tournaments/{tid}/export", params={"format": "csv"})
    assert r.status_code == 200 and r.content == standings_csv(manifest)
    r = await live.get(f"/tournaments/{tid}/export", params={"format": "ranking-csv"})
    assert r.status_code == 200 and r.content == ranking_csv(manifest) and r.content.startswith(b"\xef\xbb\xbf")

