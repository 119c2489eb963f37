"""Attacks on commands signed by the player's own key (API.md "The player's own key: signed commands").

Service side: a keyed seat's command is appended only with its player's signature over exactly the bytes
``command_sig`` rebuilds, at exactly the version it is decided on; anything else is a clear 4xx and appends nothing.
Verifier side: ``replays verify`` refuses every move in a keyed player's name they did not sign, also in a log the
operator rewrote and re-chained throughout.

Found by this review, each failing before its fix:
- the signed bytes name no seat, and one key could key two seats of a table (a guest may join with anyone's public
  key, it is public): a signature then no longer says which seat moved, and a verifier accepted a log in which the
  operator attributes the player's signed moves to the other seat holding their key. A key now keys one seat per table
  (409 ``already_seated`` at the join; ``replays verify`` refuses a log with a key at two seats).
- an operator who writes ``seat_taken`` without the player's key (or with its own, and re-signs every move) is caught by
  the page's kept key, but an API client had no way to tell the verifier which key they joined with: receipts signed by
  a dishonest service during the game agree with such a log. ``verify(player_keys=)`` / ``--player-key SEAT:HEX`` now
  says it, as ``--client-seed`` does for the client seed.
- a log without its seed (a game going on) is not re-decided, and its signature check let through a ``sig`` on an
  envelope no seat's command opened, a keyed player's move rewritten as the server's, and crashed on an actor
  ``seat:x``; each is now refused.
- a ``command_id`` ending in a newline was accepted (``$`` matches before one); now 400.
"""

from __future__ import annotations

import msgspec
import pytest

from replays.verify import verify
from service.events import free_parking as ev
from service.events.base import Player
from service.events.command_sig import signed_command
from service.events.common import Create, TakeSeat
from service.events.envelope import body_of, canonical, chain_hash
from service.rules.engine import Game, export_header
from service.rules.free_parking import legal_commands
from tests.api.conftest import api, bearer  # noqa: F401 - the fixture
from tests.api.helpers import assert_error, log_of, trade_places, trade_places_seed, view
from tests.api.test_signed_commands import keyed_game, send, to_act
from tests.signing import PlayerKey

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])

L = 2**252 + 27742317777372353535851937790883648493  # the order of Ed25519's base point


# --- logs made with the project's own engine, for the verifier -----------------------------------------------------

GAME_ID = "g_00000000000a77ac"
SEED = bytes(range(32))


def _turn(game: Game) -> int:
    s = game.state
    return s.pending.seat if s.pending is not None else s.turn_seat


def keyed_log(keys: list[PlayerKey | None], moves: int = 6, *, sat: list[PlayerKey | None] | None = None):
    """A fixed-seed game whose seats are taken with ``sat`` (default ``keys``) and ``moves`` commands, each signed by
    the key in ``keys`` of the seat that sends it: the export's header and envelopes."""
    game = Game.new("free-parking", GAME_ID, ev.FreeParkingConfig(seats=len(keys)), SEED)
    at = 1_000
    envelopes = game.play(Create(seeding="fixed"), None, at)
    for i, key in enumerate(sat if sat is not None else keys):
        player = Player(name=f"P{i}", player_id=f"g_{i}", guest=True, public_key=key.public_key if key else None)
        envelopes += game.play(TakeSeat(player=player), None, at)
    for n in range(moves):
        seat = _turn(game)
        command = legal_commands(game.state, seat)[0]
        sig = None
        if keys[seat] is not None:
            message = signed_command(GAME_ID, game.version, f"c{n}", game.codec.command_body(command))
            sig = keys[seat].private.sign(message).hex()
        envelopes += game.play(msgspec.structs.replace(command, sig=sig), seat, at + n, f"c{n}")
    return export_header(game, with_seed=True), envelopes


def rechained(header, envelopes):
    """The log after an operator's rewrite: every hash recomputed, the header naming the new head."""
    prev, out = "0" * 64, []
    for env in envelopes:
        env = msgspec.structs.replace(env, prev_hash=prev)
        env = msgspec.structs.replace(env, hash=chain_hash(prev, canonical(body_of(env))))
        out.append(env)
        prev = env.hash
    return msgspec.structs.replace(header, head=prev, version=len(out)), out


def public_of(env) -> dict:
    return msgspec.json.decode(env.public)


def with_public(env, public: dict):
    return msgspec.structs.replace(env, public=msgspec.Raw(canonical(public)))


# --- the service -----------------------------------------------------------------------------------------------------


async def test_a_key_keys_one_seat_per_table_a_second_join_with_it_is_409(api):
    """Mallory joins with Ann's public key (it is public: every view shows it). Before the fix she got the seat, and the
    table had one key at two seats: its signatures no longer said which seat moved (see the verifier's test below)."""
    ann = PlayerKey(11)
    r = await api.post("/games", json={"kind": "free-parking", "seats": 3})
    game_id = r.json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={"name": "Ann", "public_key": ann.public_key})).status_code == 201
    before = await log_of(api, game_id)
    r = await api.post(f"/games/{game_id}/seats", json={"name": "Mallory", "public_key": ann.public_key})
    assert_error(r, 409, "already_seated")
    reg = await api.post("/players", json={"name": "Reg", "public_key": ann.public_key})  # her key, registered by another
    r = await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(reg.json()["token"]))
    assert_error(r, 409, "already_seated")
    assert await log_of(api, game_id) == before
    assert (await api.post(f"/games/{game_id}/seats", json={"name": "Bob", "public_key": PlayerKey(12).public_key})).status_code == 201


async def test_a_signed_command_resent_after_a_trade_of_places_gets_its_first_answer_and_appends_nothing(api):
    """Bob's command signed at seat 1 before the trade, resent from seat 0 with the same id: the first answer, once; with
    a new id it is a stale version (409); Ann's key cannot move Bob's new seat."""
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys, seed=trade_places_seed())
    ann, bob = tokens
    v = await view(api, game_id, bob)
    first = keys[1].signed(game_id, v["version"], "b-first", {"type": "discard", "card": v["you"]["hand"][0]["id"]})
    answer = await send(api, game_id, bob, first)
    assert answer.status_code == 200, answer.text
    v = await view(api, game_id, bob)
    body = {"type": "draw_second_chance"}
    assert (await send(api, game_id, bob, keys[1].signed(game_id, v["version"], "b-draw", body))).status_code == 200
    for token, key in ((ann, keys[0]), (bob, keys[1])):  # each accepts the trade, signed
        v = await view(api, game_id, token)
        if v["pending"] and v["pending"]["seat"] == v["seat"]:
            r = await send(api, game_id, token, key.signed(game_id, v["version"], f"acc{v['seat']}", {"type": "accept"}))
            assert r.status_code == 200, r.text
    v = await view(api, game_id, bob)
    if v["seat"] != 0:  # the trade asks the drawer too in rules version 2
        r = await send(api, game_id, bob, keys[1].signed(game_id, v["version"], "acc-b", {"type": "accept"}))
        assert r.status_code == 200, r.text
        v = await view(api, game_id, bob)
    assert v["seat"] == 0 and v["players"][0]["public_key"] == keys[1].public_key
    before = await log_of(api, game_id)
    again = await send(api, game_id, bob, first)
    assert again.status_code == 200 and again.json()["version"] == answer.json()["version"], again.text
    assert_error(await send(api, game_id, bob, {**first, "command_id": "b-new"}), 409, "version_conflict")
    v = await view(api, game_id, bob)
    as_ann = keys[0].signed(game_id, v["version"], "x", {"type": "end_turn"})  # Ann's key on Bob's new seat
    assert_error(await send(api, game_id, bob, as_ann), 401, "bad_signature")
    assert await log_of(api, game_id) == before


@pytest.mark.parametrize("attack", ["S+L", "uppercase", "trailing newline", "short", "number", "R flipped"])
async def test_a_malleated_or_misencoded_signature_is_a_4xx_and_appends_nothing(api, attack):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    body = keys[i].signed(game_id, v["version"], "c1", v["legal"][0])
    raw = bytes.fromhex(body["sig"])
    if attack == "S+L":  # the same signature with S + L: verifies with a lax verifier, is another byte string
        s = int.from_bytes(raw[32:], "little") + L
        body["sig"] = (raw[:32] + s.to_bytes(32, "little")).hex()
    elif attack == "uppercase":
        body["sig"] = body["sig"].upper()
    elif attack == "trailing newline":
        body["sig"] += "\n"
    elif attack == "short":
        body["sig"] = body["sig"][:126]
    elif attack == "number":
        body["sig"] = int(body["sig"][:16], 16)
    else:
        body["sig"] = (bytes([raw[0] ^ 1]) + raw[1:]).hex()
    before = await log_of(api, game_id)
    r = await send(api, game_id, tokens[i], body)
    assert 400 <= r.status_code < 500 and r.status_code in (400, 401), r.text
    if attack in ("S+L", "R flipped"):
        assert_error(r, 401, "bad_signature")
    assert await log_of(api, game_id) == before


async def test_transport_fields_and_defaults_do_not_change_what_is_signed_and_never_500(api):
    """Explicit defaults (``null``) are signed as omitted; an extra field, a signed ``command_id`` with a newline or
    outside printable ASCII, or a duplicate key naming another card are each refused or checked against the decoded
    command — never appended unsigned, never a 500."""
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    discards = [c for c in v["legal"] if c["type"] == "discard"]
    a, b = discards[0], discards[1]
    before = await log_of(api, game_id)
    signed = keys[i].signed(game_id, v["version"], "c1", a)
    probes = [
        {**signed, "extra": 1},
        {**keys[i].signed(game_id, v["version"], "c\n", a)},
        {**keys[i].signed(game_id, v["version"], "cé", a)},
        {**keys[i].signed(game_id, v["version"], "c 1", a)},
        {**signed, "expected_version": v["version"] + 1},
        {**signed, "expected_version": -1},
        {**signed, "sig": None},
    ]
    for probe in probes:
        r = await send(api, game_id, tokens[i], probe)
        assert r.status_code in (400, 401, 409, 422), (probe, r.text)
    # duplicate key: the signature is over the card as decoded (the last), so a signature over the first is refused
    dup = canonical({k: val for k, val in signed.items() if k != "card"})[:-1] + b',"card":"%s","card":"%s"}' % (
        a["card"].encode(), b["card"].encode())
    r = await api.post(f"/games/{game_id}/commands", content=dup, headers={**bearer(tokens[i]), "content-type": "application/json"})
    assert r.status_code in (400, 401), r.text
    assert await log_of(api, game_id) == before
    nulls = {**a, "command_id": "c2", "expected_version": v["version"],
             "sig": keys[i].signature(game_id, v["version"], "c2", a)}
    r = await send(api, game_id, tokens[i], nulls)
    assert r.status_code == 200, r.text


async def test_a_signed_server_only_command_from_a_keyed_seat_is_422_and_appends_nothing(api):
    keys = [PlayerKey(1), PlayerKey(2)]
    game_id, tokens = await keyed_game(api, keys)
    i, v = await to_act(api, game_id, tokens)
    before = await log_of(api, game_id)
    for body in ({"type": "timeout"}, {"type": "close", "idle_ms": 1, "since": 0},
                 {"type": "take_seat", "player": {"name": "x"}}):
        r = await send(api, game_id, tokens[i], keys[i].signed(game_id, v["version"], "s1", body))
        assert r.status_code in (400, 401, 422), r.text
    assert await log_of(api, game_id) == before


# --- the verifier ----------------------------------------------------------------------------------------------------


async def test_an_honest_keyed_log_and_an_old_log_without_keys_verify(store_kind):
    header, envelopes = keyed_log([PlayerKey(1), PlayerKey(2)])
    verdict = verify(header, envelopes)
    assert verdict.ok and "every move" in verdict.signed, verdict.summary()
    header, envelopes = keyed_log([None, None])
    verdict = verify(header, envelopes)
    assert verdict.ok and "no seat keyed" in verdict.signed, verdict.summary()


def _first_move(envelopes):
    return next(i for i, e in enumerate(envelopes) if e.actor.startswith("seat:"))


@pytest.mark.parametrize("forgery", ["sig stripped", "sig moved to the next event", "actor made server",
                                     "two moves swapped", "key stripped, sigs kept", "seat moved to other key"])
async def test_an_operators_rewrite_of_a_keyed_log_is_refused(store_kind, forgery):
    keys = [PlayerKey(1), PlayerKey(2)]
    header, envelopes = keyed_log(keys, moves=8)
    i = _first_move(envelopes)
    env = envelopes[i]
    if forgery == "sig stripped":
        envelopes[i] = msgspec.structs.replace(env, sig=None)
    elif forgery == "sig moved to the next event":
        batch_next = envelopes[i + 1]
        if batch_next.command != msgspec.Raw(b"null"):
            i = next(k for k in range(i, len(envelopes) - 1) if bytes(envelopes[k + 1].command) == b"null")
            env, batch_next = envelopes[i], envelopes[i + 1]
        envelopes[i], envelopes[i + 1] = msgspec.structs.replace(env, sig=None), msgspec.structs.replace(batch_next, sig=env.sig)
    elif forgery == "actor made server":
        envelopes[i] = msgspec.structs.replace(env, actor="server", sig=None)
    elif forgery == "two moves swapped":
        j = next(k for k in range(i + 1, len(envelopes)) if envelopes[k].actor.startswith("seat:"))
        a, b = envelopes[i], envelopes[j]
        envelopes[i] = msgspec.structs.replace(a, command=b.command, command_id=b.command_id, sig=b.sig, actor=b.actor)
        envelopes[j] = msgspec.structs.replace(b, command=a.command, command_id=a.command_id, sig=a.sig, actor=a.actor)
    elif forgery == "key stripped, sigs kept":
        k = next(k for k, e in enumerate(envelopes) if e.type == "seat_taken")
        public = public_of(envelopes[k])
        del public["player"]["public_key"]
        envelopes[k] = with_public(envelopes[k], public)
    else:  # seat 0's seat_taken names seat 1's key: seat 1's signatures then "hold" for seat 0's moves
        k = next(k for k, e in enumerate(envelopes) if e.type == "seat_taken")
        public = public_of(envelopes[k])
        public["player"]["public_key"] = keys[1].public_key
        envelopes[k] = with_public(envelopes[k], public)
    header, envelopes = rechained(header, envelopes)
    verdict = verify(header, envelopes)
    assert not verdict.ok and verdict.status == "REJECTED", verdict.summary()


async def test_a_key_at_two_seats_is_refused_by_verify(store_kind):
    """Every move in this log is signed by the key of the seat that sent it, but both seats hold Ann's key: each of her
    signatures stands for a move of either seat (the signed bytes name none), so the operator who seated a second
    player with her key can attribute her moves to that seat. Before the fix this verified."""
    ann = PlayerKey(1)
    header, envelopes = keyed_log([ann, ann], moves=6)
    verdict = verify(header, envelopes)
    second = [e.seq for e in envelopes if e.type == "seat_taken"][1]
    assert not verdict.ok and verdict.divergence.seq == second, verdict.summary()


@pytest.mark.parametrize("forgery", ["key stripped", "operator's own key"])
async def test_a_players_key_claim_catches_a_seat_taken_without_their_key(store_kind, forgery):
    """A dishonest service writes Ann's ``seat_taken`` without her key (then no move of hers needs a signature), or with
    a key of its own (then it signs her moves itself). The log is consistent and every receipt it signed during the game
    agrees: only Ann's word on the key she joined with refuses it — the page's kept key says it; an API client says it
    with ``player_keys`` (``--player-key SEAT:HEX``)."""
    ann, bob, operator = PlayerKey(1), PlayerKey(2), PlayerKey(9)
    keys = [None if forgery == "key stripped" else operator, bob]
    header, envelopes = keyed_log(keys, moves=6)
    assert verify(header, envelopes).ok  # on its own the log is sound
    verdict = verify(header, envelopes, player_keys={0: ann.public_key})
    taken = next(e.seq for e in envelopes if e.type == "seat_taken")
    assert not verdict.ok and verdict.divergence.seq == taken, verdict.summary()
    honest_header, honest = keyed_log([ann, bob], moves=6)
    assert verify(honest_header, honest, player_keys={0: ann.public_key, 1: bob.public_key}).ok
    assert not verify(honest_header, honest, player_keys={5: ann.public_key}).ok  # no such seat in the log


async def test_the_cli_takes_the_players_key(store_kind, tmp_path, capsys):
    from replays.__main__ import main
    from service.events.export import dumps

    ann, operator = PlayerKey(1), PlayerKey(9)
    forged, honest = tmp_path / "forged.ndjson", tmp_path / "honest.ndjson"
    forged.write_bytes(dumps(*keyed_log([operator, PlayerKey(2)], moves=4)))
    honest.write_bytes(dumps(*keyed_log([ann, PlayerKey(2)], moves=4)))
    assert main(["verify", str(forged), "-q"]) == 0
    assert main(["verify", str(forged), "-q", "--player-key", f"0:{ann.public_key}"]) == 1
    assert "key of seat 0" in capsys.readouterr().out
    assert main(["verify", str(honest), "-q", "--player-key", f"0:{ann.public_key.upper()}"]) == 0


@pytest.mark.parametrize("forgery", ["actor seat:x", "move made the server's", "sig on the server's command",
                                     "sig on an event of a batch"])
async def test_a_log_without_its_seed_is_still_checked_for_whose_move_each_is(store_kind, forgery):
    """A game still going on is exported without its seed: nothing is re-decided, so the signature check is all that says
    whose each move is. Before the fix an actor ``seat:x`` crashed the verifier (ValueError), and a keyed player's move
    rewritten as the server's, or a ``sig`` on an envelope no seat's command opened, verified."""
    header, envelopes = keyed_log([PlayerKey(1), PlayerKey(2)], moves=8)
    header = msgspec.structs.replace(header, seed=None)
    assert verify(header, envelopes).ok
    i = _first_move(envelopes)
    if forgery == "actor seat:x":
        envelopes[i] = msgspec.structs.replace(envelopes[i], actor="seat:x")
    elif forgery == "move made the server's":
        envelopes[i] = msgspec.structs.replace(envelopes[i], actor="server", sig=None)
    elif forgery == "sig on the server's command":
        k = next(k for k, e in enumerate(envelopes) if e.type == "seat_taken")
        envelopes[k] = msgspec.structs.replace(envelopes[k], sig=envelopes[i].sig)
    else:
        k = next(k for k, e in enumerate(envelopes) if bytes(e.command) == b"null")
        envelopes[k] = msgspec.structs.replace(envelopes[k], sig=envelopes[i].sig)
    header, envelopes = rechained(header, envelopes)
    verdict = verify(header, envelopes)
    assert not verdict.ok and verdict.status == "REJECTED", verdict.summary()
