"""Tournaments as a resource: created by the admin only, tables in the tournament's partition, reserved seats, the
durability a tournament needs, standings as rounds end, and the export bundle (NDJSON, CSV)."""

from __future__ import annotations

import asyncio
import csv
import io

import msgspec
import pytest

from service.store.keys import partition
from service.rules.free_parking.bundle import CSV_COLUMNS, RANKING_COLUMNS, load_bundle
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, drive
from tests.http import serving
from tests.stores import drop_namespace_at


@pytest.fixture
async def tapi(store_kind, tmp_path):
    """``api`` on a service that accepts tournaments on its volatile test store (``allow_volatile``)."""
    settings = make_settings(store_kind, tmp_path, allow_volatile=True)
    app = fresh_app(settings)
    async with serving(app) as client:
        client.app = app
        yield client
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def register(api, name: str) -> tuple[str, str]:
    r = await api.post("/players", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()["player_id"], r.json()["token"]


async def create(api, tables: list[dict], **body) -> dict:
    r = await api.post("/tournaments", json={"name": "Spring Cup", "kind": "free-parking", "tables": tables, **body}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return r.json()


async def test_the_admin_creates_a_tournament_whose_tables_share_its_partition(tapi):
    ann, _ = await register(tapi, "Ann")
    t = await create(tapi, [{"seats": 3, "players": [ann]}, {"seats": 2}], options={"response_seconds": 30})
    assert t["status"] == "playing" and t["name"] == "Spring Cup" and t["options"] == {"turn_seconds": 120, "response_seconds": 30, "mode": "tournament"}
    assert [(x["table"], x["seats"], x["reserved"], x["status"], x["taken"]) for x in t["tables"]] == [
        (0, 3, [ann], "waiting", 0), (1, 2, [], "waiting", 0)]
    for table in t["tables"]:
        assert partition(table["game_id"]) == partition(t["tournament_id"])
        game = (await tapi.get(f"/games/{table['game_id']}")).json()
        assert game["status"] == "waiting"
    r = await tapi.get(f"/tournaments/{t['tournament_id']}")
    assert r.status_code == 200 and r.json() == t
    meta = await tapi.app.ctx.store.meta(t["tables"][0]["game_id"])
    assert '"mode":"tournament"' in meta["config"] and meta["tournament"] == t["tournament_id"]


async def test_tournament_tables_run_a_turn_clock_the_organiser_may_set(tapi):
    """A seat nobody plays must not stall a table: 120 s a turn by default, the organiser's own, or ``null`` for none."""
    for options, expected in (({}, 120), ({"turn_seconds": 300, "forfeit_after": 5}, 300), ({"turn_seconds": None}, None)):
        t = await create(tapi, [{"seats": 2}], options=options)
        meta = await tapi.app.ctx.store.meta(t["tables"][0]["game_id"])
        config = msgspec.json.decode(meta["config"])
        assert config.get("turn_seconds") == expected, (options, config)
        assert config.get("forfeit_after", 3) == options.get("forfeit_after", 3)


async def test_only_the_admin_creates_tournaments(tapi):
    body = {"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2}]}
    assert_error(await tapi.post("/tournaments", json=body), 401, "unauthorized")
    _, token = await register(tapi, "Ann")
    assert_error(await tapi.post("/tournaments", json=body, headers=bearer(token)), 403, "forbidden")


@pytest.mark.parametrize("body, says", [
    ({"name": "Cup", "kind": "free-parking", "tables": []}, "tables"),
    ({"name": "Cup", "kind": "monopoly", "tables": [{"seats": 2}]}, "kind"),
    ({"name": "Cup", "kind": "free-parking", "tables": [{"seats": 9}]}, "seats"),
    ({"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2}], "options": {"mode": "standard"}}, "tournament mode"),
    ({"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2}], "options": {"response_seconds": 0}}, "response_seconds"),
    ({"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2, "players": ["p_nobody"]}]}, "p_nobody"),
    ({"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2, "extra": 1}]}, "extra"),
    ({"kind": "free-parking", "tables": [{"seats": 2}]}, "name"),
])
async def test_a_bad_body_is_refused_and_writes_nothing(tapi, body, says):
    ann, _ = await register(tapi, "Ann")
    if "p_nobody" in says:
        body = {**body, "tables": [{"seats": 2, "players": [ann]}, *body["tables"]]}  # a good table first: still nothing is created
    before = await tapi.app.ctx.store.list_games(None, 1000)
    error = assert_error(await tapi.post("/tournaments", json=body, headers=ADMIN_HEADERS), 400)
    assert says in error["message"], error
    assert await tapi.app.ctx.store.list_games(None, 1000) == before


async def test_a_player_reserved_twice_or_a_table_over_reserved_is_refused(tapi):
    ann, _ = await register(tapi, "Ann")
    bob, _ = await register(tapi, "Bob")
    body = {"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2, "players": [ann]}, {"seats": 2, "players": [ann]}]}
    assert "twice" in assert_error(await tapi.post("/tournaments", json=body, headers=ADMIN_HEADERS), 400)["message"]
    body["tables"] = [{"seats": 2, "players": [ann, bob, ann]}]
    assert_error(await tapi.post("/tournaments", json=body, headers=ADMIN_HEADERS), 400)


async def test_a_reserved_seat_is_kept_for_its_player(tapi):
    ann, ann_token = await register(tapi, "Ann")
    _, cy_token = await register(tapi, "Cy")
    t = await create(tapi, [{"seats": 2, "players": [ann]}])
    game_id = t["tables"][0]["game_id"]
    r = await tapi.post(f"/games/{game_id}/seats", json={"name": "Walk-in"})
    assert r.status_code == 201  # the open seat
    for attempt in ({"json": {"name": "Late"}}, {"json": {"bot": "greedy"}}, {"json": {}, "headers": bearer(cy_token)}):
        error = assert_error(await tapi.post(f"/games/{game_id}/seats", **attempt), 409, "seat_reserved")
        assert "reserved" in error["message"]
    r = await tapi.post(f"/games/{game_id}/seats", json={}, headers=bearer(ann_token))
    assert r.status_code == 201 and r.json()["player_id"] == ann
    t = (await tapi.get(f"/tournaments/{t['tournament_id']}")).json()
    assert t["tables"][0]["status"] == "playing" and t["tables"][0]["taken"] == 2


async def test_one_seat_per_player_per_tournament_is_checked_on_every_join(tapi):
    """A player reserved at one table cannot take another table's free seat; a registered player who took a free
    seat at one table cannot take one at another; and two joins racing at two tables seat the player once. Guests
    and bots are new players each time: they are not held to it."""
    ann, ann_token = await register(tapi, "Ann")
    bob, bob_token = await register(tapi, "Bob")
    cy, cy_token = await register(tapi, "Cy")
    t = await create(tapi, [{"seats": 3, "players": [ann]}, {"seats": 3}, {"seats": 3}])
    tables = [x["game_id"] for x in t["tables"]]
    error = assert_error(await tapi.post(f"/games/{tables[1]}/seats", json={}, headers=bearer(ann_token)), 409, "already_seated")
    assert error["detail"]["game_id"] == tables[0]
    assert (await tapi.post(f"/games/{tables[1]}/seats", json={}, headers=bearer(bob_token))).status_code == 201
    assert_error(await tapi.post(f"/games/{tables[0]}/seats", json={}, headers=bearer(bob_token)), 409, "already_seated")
    raced = await asyncio.gather(*(tapi.post(f"/games/{g}/seats", json={}, headers=bearer(cy_token)) for g in tables[1:]))
    assert sorted(r.status_code for r in raced) == [201, 409], [r.text for r in raced]
    for game_id in tables:  # the walk-ins and bots of every table are not held to it
        for body in ({"name": "Walk-in"}, {"bot": "greedy"}):
            r = await tapi.post(f"/games/{game_id}/seats", json=body)
            assert r.status_code in (201, 409) and r.json().get("error", {}).get("code") in (None, "game_full", "seat_reserved"), r.text
    seated = [st.player.player_id for g in tables for st in (await tapi.app.ctx.games.fresh(g)).state.seats if st.player]
    assert sorted(p for p in seated if p in (ann, bob, cy)) == sorted([bob, cy])  # Ann's reserved seat waits for her
    r = await tapi.post(f"/games/{tables[0]}/seats", json={}, headers=bearer(ann_token))
    assert r.status_code == 201 and r.json()["player_id"] == ann


async def test_an_unknown_tournament_is_not_found(tapi):
    for path in ("/tournaments/t_nope", "/tournaments/t_nope/standings", "/tournaments/t_nope/export"):
        assert_error(await tapi.get(path, headers=ADMIN_HEADERS), 404, "not_found")


async def test_a_volatile_store_refuses_tournaments_naming_the_setting(api):
    before = await api.app.ctx.store.list_games(None, 1000)
    body = {"name": "Cup", "kind": "free-parking", "tables": [{"seats": 2}]}
    error = assert_error(await api.post("/tournaments", json=body, headers=ADMIN_HEADERS), 503, "not_durable")
    assert "FREE_PARKING_DURABILITY=durable" in error["message"] and "--allow-volatile" in error["message"]
    assert await api.app.ctx.store.list_games(None, 1000) == before


async def test_an_fsynced_embedded_journal_is_durable_enough(tmp_path):
    app = fresh_app(make_settings("embedded", tmp_path, fsync=True))
    async with serving(app) as client:
        await create(client, [{"seats": 2}])


async def test_standings_follow_the_rounds_and_the_export_opens_when_every_table_finished(tapi):
    ann, ann_token = await register(tapi, "Ann")
    t = await create(tapi, [{"seats": 2, "players": [ann]}, {"seats": 2}])
    tid, tables = t["tournament_id"], [x["game_id"] for x in t["tables"]]
    assert (await tapi.post(f"/games/{tables[0]}/seats", json={}, headers=bearer(ann_token))).status_code == 201
    for game_id, names in ((tables[0], ["Bo"]), (tables[1], ["Cy", "Di"])):
        for name in names:
            assert (await tapi.post(f"/games/{game_id}/seats", json={"name": name})).status_code == 201
    assert_error(await tapi.get(f"/tournaments/{tid}/export"), 403, "forbidden")
    game = await drive(tapi.app, tables[0], until=lambda g: any(st.total for st in g.state.seats))
    await tapi.app.ctx.projector.catch_up()
    answer = (await tapi.get(f"/tournaments/{tid}/standings")).json()
    first = answer["tables"][0]
    assert answer["status"] == "playing" and first["version"] == game.version
    assert first["standing"]["rounds"] == 1 and {p["name"] for p in first["standing"]["players"]} == {"Ann", "Bo"}
    assert next(p for p in first["standing"]["players"] if p["name"] == "Ann")["player_id"] == ann
    assert answer["tables"][1]["standing"]["rounds"] == 0
    level = [r for r in answer["ranking"] if r["name"] in ("Cy", "Di")]  # table 1 has not scored: Cy and Di are level
    assert [(r["name"], r["table"], r["total"], r["rounds_won"]) for r in level] == [("Cy", 1, 0, 0), ("Di", 1, 0, 0)]
    assert level[0]["rank"] == level[1]["rank"] and _competition(answer["ranking"])
    r = await tapi.get(f"/tournaments/{tid}/export", headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    manifest, exports = load_bundle(r.content)
    assert manifest.status == "playing" and [h.game_id for h, _ in exports] == tables
    assert msgspec.to_builtins(manifest.ranking) == answer["ranking"]  # one ranking, ties and all
    r = await tapi.get(f"/tournaments/{tid}/export", params={"format": "ranking-csv"}, headers=ADMIN_HEADERS)
    assert r.headers["content-type"] == "text/csv; charset=utf-8" and r.content.startswith(b"\xef\xbb\xbf")
    assert f'filename="{tid}-ranking.csv"' in r.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert tuple(rows[0]) == RANKING_COLUMNS
    assert [(int(x["rank"]), x["name"], int(x["table"])) for x in rows] == [(x["rank"], x["name"], x["table"]) for x in answer["ranking"]]
    for game_id in tables:
        await drive(tapi.app, game_id)
    await tapi.app.ctx.projector.catch_up()
    answer = (await tapi.get(f"/tournaments/{tid}/standings")).json()
    assert answer["status"] == "finished" and sum(r["winner"] for r in answer["ranking"]) == 2
    assert [r["rank"] for r in answer["ranking"]][:1] == [1]
    assert (await tapi.get(f"/tournaments/{tid}")).json()["status"] == "finished"
    r = await tapi.get(f"/tournaments/{tid}/export")
    assert r.status_code == 200
    manifest, exports = load_bundle(r.content)
    assert manifest.status == "finished" and all(table.status == "finished" for table in manifest.tables)
    assert msgspec.to_builtins(manifest.standings) == [x["standing"] for x in answer["tables"]]  # the read model = the logs
    assert msgspec.to_builtins(manifest.ranking) == answer["ranking"] and _competition(answer["ranking"])
    r = await tapi.get(f"/tournaments/{tid}/export", params={"format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"] == "text/csv; charset=utf-8"
    assert f'filename="{tid}-standings.csv"' in r.headers["content-disposition"]
    assert r.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) > 4
    ranks = {(x["table"], x["name"]): x["rank"] for x in answer["ranking"]}
    assert all(int(row[-1]) == ranks[(int(row[1]), row[4])] for row in rows[1:])
    assert_error(await tapi.get(f"/tournaments/{tid}/export", params={"format": "xml"}), 400)


def _competition(ranking: list[dict]) -> bool:
    """Ranks as competition ranking numbers them: a player level with the one before shares their rank, else the
    rank is their place (1, 2, 2, 4), winners first and points falling."""
    keys = [(not r["winner"], -r["total"]) for r in ranking]
    return keys == sorted(keys) and all(
        r["rank"] == (ranking[i - 1]["rank"] if i and keys[i] == keys[i - 1] else i + 1) for i, r in enumerate(ranking)
    )


async def test_the_leaderboard_ranks_registered_players_by_wins_then_points(tapi):
    players = [await register(tapi, name) for name in ("Ann", "Bo")]
    r = await tapi.post("/games", json={"kind": "free-parking", "seats": 2})
    game_id = r.json()["game_id"]
    for _, token in players:
        assert (await tapi.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    game = await drive(tapi.app, game_id)
    await tapi.app.ctx.projector.catch_up()
    board = (await tapi.get("/leaderboard")).json()
    winner = game.state.seats[game.state.winner].player.player_id
    assert board["kind"] is None and [p["player_id"] for p in board["players"]][0] == winner
    assert {p["name"] for p in board["players"]} >= {"Ann", "Bo"}
    assert [p["rank"] for p in board["players"]][:2] == [1, 2] and board["players"][0]["won"] == 1
    assert (await tapi.get("/leaderboard", params={"kind": "free-parking", "limit": 1})).json()["players"] == board["players"][:1]
    assert_error(await tapi.get("/leaderboard", params={"kind": "chess"}), 400, "invalid_request")
    assert_error(await tapi.get("/leaderboard", params={"limit": 0}), 400, "invalid_request")
