"""Client seeds over HTTP (docs/rng.md, API.md "Evidence a player keeps"): a person's seat brings one, a bot's is derived
from the committed server seed, the log and the view show each, a malformed one is refused and changes nothing, and a
game on a fixed seed records a client seed but deals what its seed deals."""

from __future__ import annotations

import msgspec
import pytest

from replays.bundle import verify_bundle
from replays.verify import verify
from service.events.export import load
from service.rules import rng
from service.rules.free_parking.bundle import load_bundle
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, log_of, view
from tests.http import serving
from tests.stores import drop_namespace_at

ANN = "a1" * 32
CAT = "0123456789abcdef" * 4

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])  # the store fixture's two kinds


async def export(api, game_id: str):
    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return load(r.content)


def seats_of(envelopes) -> dict[int, dict]:
    out = {}
    for env in envelopes:
        if env.type == "seat_taken":
            taken = msgspec.json.decode(env.public)
            out[taken["seat"]] = taken
    return out


async def test_a_person_brings_a_client_seed_a_bot_gets_a_derived_one_and_the_deal_is_drawn_from_both(api):
    r = await api.post("/games", json={"kind": "free-parking", "seats": 3, "options": {"response_seconds": 60}})
    assert r.status_code == 201 and r.json()["seeding"] == "combined", r.text
    game_id = r.json()["game_id"]
    ann = await api.post(f"/games/{game_id}/seats", json={"name": "Ann", "client_seed": ANN})
    assert ann.status_code == 201 and ann.json()["seat"] == 0, ann.text
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "random"})).status_code == 201
    cat_token = (await api.post("/players", json={"name": "Cat"})).json()["token"]
    cat = await api.post(f"/games/{game_id}/seats", json={"client_seed": CAT}, headers=bearer(cat_token))
    assert cat.status_code == 201 and cat.json()["seat"] == 2, cat.text

    header, envelopes = await export(api, game_id)
    server_seed = bytes.fromhex(header.seed)
    taken = seats_of(envelopes)
    assert [(taken[i]["client_seed"], taken[i]["client_seed_from"]) for i in range(3)] == [
        (ANN, "player"), (rng.client_seed_for(server_seed, 1).hex(), "server"), (CAT, "player")]
    assert header.seeding == "combined" and msgspec.json.decode(envelopes[0].public)["seeding"] == "combined"
    derived = rng.game_seed(server_seed, [bytes.fromhex(taken[i]["client_seed"]) for i in range(3)])
    game = await api.app.ctx.games.fresh(game_id)
    assert game.state.game_seed == derived and game.state.seed == server_seed

    seen = await view(api, game_id, ann.json()["token"])
    assert seen["seeding"] == "combined" and seen["client_seeds"] == [taken[i]["client_seed"] for i in range(3)]
    spectator = await view(api, game_id)
    assert spectator["client_seeds"] == seen["client_seeds"] and server_seed.hex() not in str(spectator)

    verdict = verify(header, envelopes, client_seeds={0: ANN, 2: CAT})
    assert verdict.ok and verdict.redecided and verdict.game_seed == derived.hex(), verdict.summary()
    assert verdict.seeding == "combined: seats 0,2 brought client seeds, seat 1 derived (bot)"
    assert not verify(header, envelopes, client_seeds={0: CAT}).ok


async def test_a_person_who_sends_no_client_seed_gets_one_derived_too(api):
    r = await api.post("/games", json={"kind": "solitaire"})
    game_id = r.json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={"name": "Ann"})).status_code == 201
    header, envelopes = await export(api, game_id)
    (taken,) = seats_of(envelopes).values()
    assert taken["client_seed"] == rng.client_seed_for(bytes.fromhex(header.seed), 0).hex()
    assert taken["client_seed_from"] == "server"
    assert verify(header, envelopes).seeding == "combined: seat 0 derived (a person who sent none) (no player brought one: " \
        "the server's committed seed alone made the deal)"


@pytest.mark.parametrize("bad", ["A1" * 32, "a1" * 31, "a1" * 33, "g" * 64, 12, None, ["a1" * 32]])
async def test_a_malformed_client_seed_is_refused_and_changes_nothing(api, bad):
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    before = await log_of(api, game_id)
    body = {"name": "Ann", "client_seed": bad} if bad is not None else {"name": "Ann", "client_seed": 5.5}
    error = assert_error(await api.post(f"/games/{game_id}/seats", json=body), 400, "invalid_request")
    assert "client_seed" in error["message"]
    if isinstance(bad, str):
        assert "64 lowercase hexadecimal digits" in error["message"]
    assert await log_of(api, game_id) == before
    assert (await view(api, game_id))["players"][0]["name"] is None


async def test_a_bot_brings_no_client_seed_of_the_callers_choosing(api):
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    before = await log_of(api, game_id)
    error = assert_error(await api.post(f"/games/{game_id}/seats", json={"bot": "greedy", "client_seed": ANN}), 400, "invalid_request")
    assert "derives" in error["message"]
    assert await log_of(api, game_id) == before


async def test_a_fixed_seed_records_a_client_seed_and_deals_what_the_seed_deals(api):
    seed = "5e" * 32
    deals = []
    for client_seed in (ANN, None):
        r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": seed}, headers=ADMIN_HEADERS)
        assert r.status_code == 201 and r.json()["seeding"] == "fixed", r.text
        game_id = r.json()["game_id"]
        for name in ("Ann", "Bob"):
            body = {"name": name, **({"client_seed": client_seed} if client_seed and name == "Ann" else {})}
            assert (await api.post(f"/games/{game_id}/seats", json=body)).status_code == 201
        header, envelopes = await export(api, game_id)
        taken = seats_of(envelopes)
        assert taken[0].get("client_seed") == client_seed and "client_seed" not in taken[1]
        deals.append(next(bytes(e.secret) for e in envelopes if e.type == "round_dealt"))
        assert (await view(api, game_id))["seeding"] == "fixed"
        assert verify(header, envelopes).seeding == "fixed seed (chosen by the admin): the deal was not drawn fairly"
    assert deals[0] == deals[1]


@pytest.fixture
async def tapi(store_kind, tmp_path):
    settings = make_settings(store_kind, tmp_path, allow_volatile=True)
    app = fresh_app(settings)
    async with serving(app) as client:
        client.app = app
        yield client
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_each_tournament_table_takes_its_seats_client_seeds_and_the_bundle_says_who_brought_one(tapi):
    r = await tapi.post("/tournaments", json={"name": "Seed Cup", "kind": "free-parking", "tables": [{"seats": 2}, {"seats": 2}]},
                        headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    tables = [t["game_id"] for t in r.json()["tables"]]
    assert (await tapi.post(f"/games/{tables[0]}/seats", json={"name": "Ann", "client_seed": ANN})).status_code == 201
    assert (await tapi.post(f"/games/{tables[0]}/seats", json={"bot": "greedy"})).status_code == 201
    assert (await tapi.post(f"/games/{tables[1]}/seats", json={"name": "Cat", "client_seed": CAT})).status_code == 201
    assert (await tapi.post(f"/games/{tables[1]}/seats", json={"name": "Dan"})).status_code == 201
    for game_id, (seed0, from1) in zip(tables, [(ANN, "server"), (CAT, "server")], strict=True):
        taken = seats_of((await export(tapi, game_id))[1])
        assert (taken[0]["client_seed"], taken[0]["client_seed_from"], taken[1]["client_seed_from"]) == (seed0, "player", from1)
    bundle = await tapi.get(f"/tournaments/{r.json()['tournament_id']}/export", headers=ADMIN_HEADERS)
    assert bundle.status_code == 200
    verdict = verify_bundle(*load_bundle(bundle.content))
    assert verdict.ok, verdict.lines()
    lines = verdict.lines()
    assert "every person's seat brought its own client seed (1 of 2 seats)" in lines[0]
    assert "not every person brought a client seed: seat 1 (Dan) sent none" in lines[1]
