"""Commands signed by the player's own key (API.md "The player's own key: signed commands"; docs/signed-commands.md).

A seat taken with a ``public_key`` is keyed: every command of its player carries their signature over the bytes a
verifier rebuilds from the log, or it is 401 ``bad_signature`` and nothing is appended; the log keeps each signature,
and ``replays verify`` refuses a move in a keyed player's name that they did not sign — one the operator wrote
straight into the store included, whatever receipts the victim holds.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from replays.receipts import load_keys
from replays.verify import verify
from service.events.command_sig import signed_command
from service.events.envelope import canonical
from service.events.export import load
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import assert_error, log_of, pick, trade_places, trade_places_seed, view
from tests.signing import PlayerKey

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])  # the store fixture's two kinds

SMALL_ORDER = "01" + "00" * 31  # the identity: under it (R = identity, S = 0) "signs" every message


async def keyed_game(api, keys: list[PlayerKey | None], seed: str | None = None) -> tuple[str, list[str]]:
    """A two-seat (or more) game whose guests join with the given keys (``None``: unkeyed); tokens in seat order."""
    body = {"kind": "free-parking", "seats": len(keys), "options": {"response_seconds": 60}}
    headers = {}
    if seed is not None:
        body["seed"], headers = seed, ADMIN_HEADERS
    r = await api.post("/games", json=body, headers=headers)
    assert r.status_code == 201, r.text
    game_id, tokens = r.json()["game_id"], []
    for i, key in enumerate(keys):
        join = {"name": f"Player {i}", **({"public_key": key.public_key} if key else {})}
        r = await api.post(f"/games/{game_id}/seats", json=join)
        assert r.status_code == 201 and r.json()["seat"] == i, r.text
        tokens.append(r.json()["token"])
    return game_id, tokens


async def export(api, game_id: str):
    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return load(r.content)


async def send(api, game_id, token, command):
    return await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))


async def to_act(api, game_id, tokens) -> tuple[int, dict]:
    """The index of the token whose seat must act now, and that seat's view."""
    v = await view(api, game_id, tokens[0])
    seat = v["pending"]["seat"] if v["pending"] else v["turn"]
    for i, token in enumerate(tokens):
        mine = await view(api, game_id, token)
        if mine["seat"] == seat:
            return i, mine
    raise AssertionError(f"no token sits at seat {seat}")


async def test_keyed_players_play_a_whole_game_and_every_move_verifies_as_theirs(api):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    rnd = random.Random(7)
    for step in range(3000):
        i, v = await to_act(api, game_id, tokens)
        if v["status"] == "finished":
            break
        r = await send(api, game_id, tokens[i], keys[i].signed(game_id, v["version"], f"c{step}", pick(v["legal"], rnd)))
        assert r.status_code == 200, r.text
    header, envelopes = await export(api, game_id)
    taken = [msgspec.json.decode(e.public) for e in envelopes if e.type == "seat_taken"]
    assert [t["player"]["public_key"] for t in taken] == [k.public_key for k in keys]
    moved = [e for e in envelopes if e.actor.startswith("seat:") and e.command_id is not None]
    assert moved and all(e.sig is not None for e in moved)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert f"every move in a keyed player's name is one they signed ({len(moved)} commands" in verdict.signed


async def test_a_keyed_seats_command_without_its_signature_is_401_and_appends_nothing(api):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    command = v["legal"][0]
    before = await log_of(api, game_id)
    for body in (command, {**command, "expected_version": v["version"], "command_id": "c1"},
                 {**command, "sig": keys[i].signature(game_id, v["version"], "c1", command)}):
        assert_error(await send(api, game_id, tokens[i], body), 401, "bad_signature")
    assert await log_of(api, game_id) == before


@pytest.mark.parametrize("forgery", ["other key", "other version", "other command id", "other card", "other game"])
async def test_a_signature_over_anything_but_this_command_at_this_version_is_401(api, forgery):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    command, version = next(c for c in v["legal"] if c["type"] == "discard"), v["version"]
    other_card = next(c for c in v["legal"] if c["type"] == "discard" and c != command)
    signer, signed_as = keys[i], dict(game_id=game_id, version=version, command_id="c1", command=command)
    if forgery == "other key":
        signer = keys[1 - i]
    elif forgery == "other version":
        signed_as["version"] = version - 1
    elif forgery == "other command id":
        signed_as["command_id"] = "c2"
    elif forgery == "other card":
        signed_as["command"] = other_card
    else:
        signed_as["game_id"] = "g_0000000000000000"
    body = {**command, "command_id": "c1", "expected_version": version, "sig": signer.signature(**signed_as)}
    before = await log_of(api, game_id)
    error = assert_error(await send(api, game_id, tokens[i], body), 401, "bad_signature")
    assert error["detail"]["version"] == version
    rebuilt = signed_command(game_id, version, "c1", canonical(command))
    assert error["detail"]["signed"] == rebuilt.decode()  # what the service checked: the bytes a client must sign
    assert await log_of(api, game_id) == before
    signed = keys[i].signed(game_id, version, "c1", command)  # the same command, signed as it is: it goes through
    assert (await send(api, game_id, tokens[i], signed)).status_code == 200


async def test_a_signature_from_a_seat_without_a_key_is_refused_not_kept(api):
    game_id, tokens = await keyed_game(api, [None, None])
    i, v = await to_act(api, game_id, tokens)
    body = PlayerKey(3).signed(game_id, v["version"], "c1", v["legal"][0])
    before = await log_of(api, game_id)
    assert_error(await send(api, game_id, tokens[i], body), 401, "bad_signature")
    assert await log_of(api, game_id) == before
    unsigned = {k: val for k, val in body.items() if k != "sig"}
    assert (await send(api, game_id, tokens[i], unsigned)).status_code == 200


async def test_after_a_conflict_the_player_signs_again_at_the_new_version(api):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    stale = keys[i].signed(game_id, v["version"] - 1, "c1", v["legal"][0])
    assert_error(await send(api, game_id, tokens[i], stale), 409, "version_conflict")
    fresh = keys[i].signed(game_id, v["version"], "c1", v["legal"][0])
    first = await send(api, game_id, tokens[i], fresh)
    assert first.status_code == 200, first.text
    again = await send(api, game_id, tokens[i], fresh)  # a resend of what went through: its first answer
    assert again.status_code == 200 and again.json()["version"] == first.json()["version"]


@pytest.mark.parametrize("where", ["join", "register"])
async def test_a_key_of_small_order_is_refused_where_it_is_given(api, where):
    if where == "register":
        r = await api.post("/players", json={"name": "Mallory", "public_key": SMALL_ORDER})
    else:
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
        r = await api.post(f"/games/{game_id}/seats", json={"name": "Mallory", "public_key": SMALL_ORDER})
    assert_error(r, 400, "invalid_request")
    assert_error(await api.post("/players", json={"name": "M", "public_key": "AB" * 32}), 400)


async def test_a_registered_players_key_keys_every_seat_they_take_and_a_join_may_name_another(api):
    home, travel = PlayerKey(4), PlayerKey(5)
    r = await api.post("/players", json={"name": "Ann", "public_key": home.public_key})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    keys_at = []
    for key in (None, travel):
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
        body = {"public_key": key.public_key} if key else {}
        assert (await api.post(f"/games/{game_id}/seats", json=body, headers=bearer(token))).status_code == 201
        v = await view(api, game_id, token)
        keys_at.append(v["players"][v["seat"]].get("public_key"))
    assert keys_at == [home.public_key, travel.public_key]


async def test_a_bot_seat_is_never_keyed(api):
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={"bot": "random", "public_key": PlayerKey(6).public_key})
    assert_error(r, 400, "invalid_request")


async def test_a_trade_of_places_takes_each_players_key_to_their_new_seat(api):
    """Bob (seat 1) trades places with Ann: he now sits at seat 0 and signs its moves with his key; Ann's key, which
    seat 0 was taken with, no longer moves it. The log verifies, following each player through the trade."""
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys, seed=trade_places_seed())
    signing = SigningClient(api, game_id, tokens, keys)
    await trade_places(signing, game_id, tokens)
    ann, bob = tokens
    v = await view(api, game_id, bob)
    assert v["seat"] == 0 and v["players"][0]["public_key"] == keys[1].public_key
    i, v = await to_act(api, game_id, tokens)
    command = v["legal"][0]
    as_other = keys[1 - i].signed(game_id, v["version"], "x1", command)
    assert_error(await send(api, game_id, tokens[i], as_other), 401, "bad_signature")
    assert (await send(api, game_id, tokens[i], keys[i].signed(game_id, v["version"], "x1", command))).status_code == 200
    header, envelopes = await export(api, game_id)
    verdict = verify(header, envelopes)
    assert verdict.ok, verdict.summary()


class SigningClient:
    """An ``api`` client whose commands each token's player signs at the version they read: for helpers written for
    unkeyed seats (``trade_places``)."""

    def __init__(self, api, game_id: str, tokens: list[str], keys: list[PlayerKey]) -> None:
        self.api, self.game_id, self.keys, self.n = api, game_id, dict(zip(tokens, keys, strict=True)), 0

    async def get(self, *args, **kwargs):
        return await self.api.get(*args, **kwargs)

    async def post(self, url, json, headers):
        token = headers["authorization"].partition(" ")[2]
        version = (await view(self.api, self.game_id, token))["version"]
        self.n += 1
        return await self.api.post(url, json=self.keys[token].signed(self.game_id, version, f"s{self.n}", json), headers=headers)


async def test_a_move_the_operator_wrote_in_a_keyed_players_name_is_refused_by_verify_with_every_receipt(api):
    """The operator appends a legal move for Ann's seat straight into the store (the service's own append, past the
    signature check). Her receipts, signed by the service after it, agree with the forged log — they prove what the
    log said, not who moved — and the chain and every re-decided command check out: her key is what refuses it."""
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    games = api.app.ctx.games
    game = await games.fresh(game_id)
    forged = game.codec.decode_command(msgspec.json.encode(v["legal"][0]))
    executed = await games._append(game, forged, v["seat"], "op-1", "")
    seq = executed.envelopes[0].seq
    receipts = [(await api.get(f"/games/{game_id}", headers=bearer(t))).json()["receipt"] for t in tokens]
    header, envelopes = await export(api, game_id)
    keys_listing = (await api.get("/keys")).content
    from service.events.receipt import Receipt

    verdict = verify(header, envelopes, receipts=[msgspec.convert(r, Receipt) for r in receipts],
                     keys=load_keys([keys_listing]))
    assert not verdict.ok and verdict.status == "REJECTED", verdict.summary()
    assert verdict.divergence.seq == seq, verdict.summary()
    assert f"Player {i}'s name" in verdict.divergence.what and "did not sign" in verdict.divergence.what
