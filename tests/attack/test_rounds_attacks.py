"""Attacks on tournaments over rounds (docs/tournaments.md, "Tournaments over rounds"): a bundle edited by hand, an
entrant who enters with another's key, a second worker making a table another made, a spectator at another table of
a duplicate round, and an anonymous client asking for the results over and over."""

from __future__ import annotations

import asyncio
import json
import random
import sys

import pytest

from replays.rounds import verify_rounds
from service.api import round_tables
from service.api.round_records import decode_record, draws_of, entrants_of
from service.rules.rounds.bundle import BundleError, load_rounds
from tests.api.conftest import ADMIN_HEADERS, bearer, make_settings, served, store_kind  # noqa: F401 (a fixture)
from tests.api.helpers import pick, playable, wait_for
from tests.signing import PlayerKey

CARD_ROUNDS = {"kind": "free-parking", "format": "rounds", "rounds": 2, "table_size": 2}


async def register(api, name: str, **body) -> tuple[str, str]:
    answer = (await api.post("/players", json={"name": name, **body})).json()
    return answer["player_id"], answer["token"]


async def play_out(api, game_id: str, tokens: list[str], rnd: random.Random) -> None:
    """The table's entrants play it to its end, each move from its ``legal``."""
    for _ in range(20_000):
        for token in tokens:
            v = (await api.get(f"/games/{game_id}", headers=bearer(token))).json()
            if v["status"] == "finished":
                return
            if playable(v["legal"]):
                await api.post(f"/games/{game_id}/commands", json={**pick(v["legal"], rnd), "expected_version": v["version"]},
                               headers=bearer(token))
    raise AssertionError(f"{game_id} did not finish")


async def _played_bundle(tmp_path) -> bytes:
    """A duplicate card-game tournament of three entrants at tables of two over two rounds (a bot fills a seat each
    round), played to its end; its bundle."""
    rnd = random.Random(34)
    async with served(make_settings("embedded", tmp_path, allow_volatile=True, runner_interval_ms=20)) as api:
        tokens = dict([await register(api, name) for name in ("Ann", "Bob", "Cy")])
        created = await api.post("/tournaments", headers=ADMIN_HEADERS,
                                 json={**CARD_ROUNDS, "name": "Bundle", "entrants": list(tokens), "duplicate": True})
        tid = created.json()["tournament_id"]
        assert (await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).status_code == 200
        for n in (1, 2):
            async def drawn():
                t = (await api.get(f"/tournaments/{tid}")).json()
                return t["drawn"] if len(t["drawn"]) >= n else None

            for table in (await wait_for(drawn, 60))[n - 1]["tables"]:
                await play_out(api, table["game_id"], [tokens[s["player_id"]] for s in table["seats"] if s["player_id"]], rnd)

        async def over():
            return (await api.get(f"/tournaments/{tid}/standings")).json()["status"] == "finished" or None

        await wait_for(over, 60)
        return (await api.get(f"/tournaments/{tid}/export")).content


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> bytes:
    data = asyncio.run(_played_bundle(tmp_path_factory.mktemp("rounds-bundle")))
    manifest, exports = load_rounds(data)
    assert verify_rounds(manifest, exports).ok
    return data


def _edited(data: bytes, edit) -> bytes:
    first, rest = data.split(b"\n", 1)
    manifest = json.loads(first)
    edit(manifest)
    return json.dumps(manifest).encode() + b"\n" + rest


def _seat_taken_garbled(data: bytes) -> bytes:
    lines = data.split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"type":"seat_taken"' in line)
    event = json.loads(lines[at])
    event["public"] = {"seat": "first", "type": "seat_taken"}
    lines[at] = json.dumps(event).encode()
    return b"\n".join(lines)


def _appended(key: str, value):
    return lambda m: m[key].append(value(m))


EDITS = {
    "server seed not hex": lambda d: _edited(d, lambda m: m.update(server_seed="zz" * 32)),
    "entrant's client seed not hex": lambda d: _edited(d, lambda m: m["entrants"][0].update(client_seed="not hex")),
    "a standing appended": lambda d: _edited(d, _appended("standings", lambda m: {**m["standings"][0], "player_id": "p_x"})),
    "a table's game moved to another round": lambda d: _edited(d, lambda m: m["games"][0].append(m["games"][1].pop(0))),
    "a round's draw left out": lambda d: _edited(d, lambda m: m["draws"].pop()),
    "tables of no seats": lambda d: _edited(d, lambda m: m.update(table_size=0)),
    "tables of a billion seats": lambda d: _edited(d, lambda m: m.update(table_size=10**9)),
    "an entrant listed twice": lambda d: _edited(d, lambda m: m["entrants"].insert(0, {**m["entrants"][0], "client_seed": "00" * 32, "seed_from": "player"})),
    "more rounds than were played": lambda d: _edited(d, lambda m: m.update(rounds=5)),
    "another kind of game": lambda d: _edited(d, lambda m: m.update(kind="monopoly")),
    "a log's seat_taken garbled": _seat_taken_garbled,
}


@pytest.mark.parametrize("edit", list(EDITS.values()), ids=list(EDITS))
def test_an_edited_bundle_is_refused_with_a_reason_never_an_exception_nor_an_ok(bundle, edit):
    try:
        manifest, exports = load_rounds(edit(bundle))
    except BundleError as e:  # refused as no rounds bundle, naming the line
        assert "line " in str(e)
        return
    verdict = verify_rounds(manifest, exports)
    assert not verdict.ok and verdict.lines()[-1].startswith("REJECTED"), verdict.lines()
    assert verdict.problems or not all(t.verdict.ok for t in verdict.logs)


@pytest.fixture
async def organised(store_kind, tmp_path):  # noqa: F811 (store_kind: the fixture imported above)
    async with served(make_settings(store_kind, tmp_path, allow_volatile=True, runner_interval_ms=20)) as api:
        yield api


async def test_an_entrant_who_enters_with_another_entrants_key_does_not_stall_the_table_or_move_its_seats(organised):
    """Ann registered her key; Bob enters with Ann's public key (public: her seats' events carry it). Seated by the
    draw at one table, the second of them was refused as "already seated" (the key keys one seat per game), taken
    for another worker's seating, and left out: the table never filled, its round never ended."""
    api = organised
    key = PlayerKey(34).public_key
    ann, _ = await register(api, "Ann", public_key=key)
    bob, bob_token = await register(api, "Bob")
    tid = (await api.post("/tournaments", headers=ADMIN_HEADERS,
                          json={**CARD_ROUNDS, "name": "Keys", "entrants": "open"})).json()["tournament_id"]
    assert (await api.post(f"/tournaments/{tid}/entries", json={"player_id": ann}, headers=ADMIN_HEADERS)).status_code == 201
    r = await api.post(f"/tournaments/{tid}/entries", json={"public_key": key}, headers=bearer(bob_token))
    if r.status_code != 201:  # refused at entry: nobody seated twice with one key
        assert r.status_code == 409, r.text
        return
    started = await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)
    assert started.status_code == 200, started.text
    table = started.json()["drawn"][0]["tables"][0]
    view = (await api.get(f"/games/{table['game_id']}", headers=ADMIN_HEADERS)).json()
    assert view["status"] == "playing", view["status"]
    assert [p["player_id"] for p in view["players"]] == [s["player_id"] for s in table["seats"]]


async def test_a_worker_making_a_table_another_worker_made_a_moment_ago_goes_on(organised):
    """Two workers find round 1's tables missing and both make them: the second's creation loses the race in the store
    (a conflict), which is no refusal — the table is there. It raised instead, out of every read that advanced."""
    api = organised
    players = [(await register(api, name))[0] for name in ("Ann", "Bob")]
    tid = (await api.post("/tournaments", headers=ADMIN_HEADERS,
                          json={**CARD_ROUNDS, "name": "Race", "entrants": players})).json()["tournament_id"]
    assert (await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).status_code == 200
    store = api.app.ctx.store
    record = decode_record(await store.tournament(tid))
    _, started, state = await entrants_of(store, tid)
    drawn = draws_of(state)[0]
    table, game_id = drawn.draw.tables[0], drawn.games[0]
    await round_tables._make(api.app, record, table, game_id, 1, bytes.fromhex(started.seed), frozenset(players))
    assert (await store.meta(game_id))["status"] == "playing"


async def _duplicate_round_of_two_tables(api) -> tuple[str, list[dict], dict[str, str]]:
    tokens = dict([await register(api, name) for name in ("Ann", "Bob", "Cy", "Di")])
    tid = (await api.post("/tournaments", headers=ADMIN_HEADERS, json={
        **CARD_ROUNDS, "name": "Dup", "entrants": list(tokens), "duplicate": True})).json()["tournament_id"]
    started = (await api.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).json()
    return tid, started["drawn"][0]["tables"], tokens


GAME_READS = ("", "/events", "/log", "/audit", "/scores")


async def test_nobody_at_another_table_of_a_duplicate_round_watches_a_table_while_its_round_plays(organised):
    """Every table of a duplicate round is dealt the same cards: what one table plays face up (a card from a hand, in
    `errand_run`, …) is a card of the same seat's hand at every other table. An entrant at table 1, or any spectator,
    reading table 0's public play learned the hands of table 1's opponents."""
    api = organised
    _, tables, tokens = await _duplicate_round_of_two_tables(api)
    watched, other = tables[0], tables[1]
    seated = tokens[watched["seats"][0]["player_id"]]
    elsewhere = tokens[other["seats"][0]["player_id"]]
    await play_out(api, watched["game_id"], [tokens[s["player_id"]] for s in watched["seats"]], random.Random(1))
    path = f"/games/{watched['game_id']}"
    for read in GAME_READS:
        for headers in ({}, bearer(elsewhere)):
            r = await api.get(path + read, headers=headers)
            assert r.status_code == 403, (read, headers, r.status_code)
        assert (await api.get(path + read, headers=bearer(seated))).status_code == 200, read
        assert (await api.get(path + read, headers=ADMIN_HEADERS)).status_code == 200, read
    async with api.stream("GET", path + "/events/stream", headers=bearer(elsewhere)) as r:
        assert r.status_code == 403


async def test_the_results_and_a_round_sheet_read_no_table_log(organised, monkeypatch):
    """The CSV of results and a round's sheets come from the standings and the draws: anyone may ask for them again
    and again, and each request read every table's whole log (and signed each one's header) for a bundle it threw
    away."""
    api = organised
    tid, _, _ = await _duplicate_round_of_two_tables(api)
    store = api.app.ctx.store
    reads = []
    real = store.read

    async def counted(game_id, after=0, count=None):
        if after == 0 and _under("round_export"):  # a whole log read for the export (the advancer and the bots' runner
            reads.append(game_id)  # of the same app read their tables' logs at their own pace: not counted)
        return await real(game_id, after, count)

    monkeypatch.setattr(store, "read", counted)
    for params in ({"format": "csv"}, {"format": "sheet-csv", "round": 1}, {"format": "sheet-html", "round": 1}):
        r = await api.get(f"/tournaments/{tid}/export", params=params)
        assert r.status_code == 200, r.text
    assert (await api.get(f"/tournaments/{tid}/export")).status_code == 403  # the bundle: refused before any read
    assert reads == []


def _under(function: str) -> bool:
    """Whether the running code was called, however deep, from ``function`` (a coroutine's awaiters are on the stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back
    return False


async def test_open_entry_stops_at_the_most_entrants(organised, monkeypatch):
    """Every read of a tournament walks its tables; open entry took every registered player who asked."""
    from service.store import rounds as stored

    monkeypatch.setattr(stored, "MOST_ENTRANTS", 2)
    api = organised
    tid = (await api.post("/tournaments", headers=ADMIN_HEADERS,
                          json={**CARD_ROUNDS, "name": "Full", "entrants": "open"})).json()["tournament_id"]
    for name in ("Ann", "Bob"):
        _, token = await register(api, name)
        assert (await api.post(f"/tournaments/{tid}/entries", json={}, headers=bearer(token))).status_code == 201
    _, token = await register(api, "Cy")
    r = await api.post(f"/tournaments/{tid}/entries", json={}, headers=bearer(token))
    assert r.status_code == 409 and r.json()["error"]["code"] == "entry_full", r.text
    assert len((await api.get(f"/tournaments/{tid}")).json()["entrants"]) == 2
