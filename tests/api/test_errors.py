"""Every failure in API.md's one shape, with its status, and none of them appends anything.

Each refused command is checked against the admin's log before and after: same version, same head, same
events. A server error (500) is a bug for any input, so a property test throws random JSON, random bytes and
random headers at every endpoint too.
"""

from __future__ import annotations

import contextlib
import json
import urllib.parse

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.conftest import ADMIN, ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import (
    TIME_EXPIRES_SEED,
    assert_error,
    card_of,
    log_of,
    new_game,
    seeded_game,
    time_expires_pending,
    view,
)
from tests.http import serving
from tests.servers import ALWAYS

SEED = TIME_EXPIRES_SEED()  # seat 1 plays first, holding a Feed the Meter, a Point card and a Time Expires


@pytest.fixture
async def table(api):
    """A dealt two-seat game: ``(game_id, tokens)``; seat 1 is to play."""
    return await seeded_game(api, 2, SEED)


@contextlib.asynccontextmanager
async def appends_nothing(api, game_id):
    before = await log_of(api, game_id)
    yield
    assert await log_of(api, game_id) == before, "a refused request changed the game's log"


async def command(api, game_id, token, body, **kw):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", **(bearer(token) if token else {}), **kw.pop("headers", {})}
    return await api.post(f"/games/{game_id}/commands", content=content, headers=headers, **kw)


# --- bodies: not JSON, not the schema, not an object, too deep, too big -------------------------------------

DEEP_ARRAY = b"[" * 30_000 + b"]" * 30_000  # under the 64 KiB limit, far deeper than any decoder recurses
DEEP_OBJECT = b'{"a":' * 10_000 + b"1" + b"}" * 10_000

BAD_COMMANDS = [
    (b"{nope", "malformed_json"),
    (b"", "malformed_json"),
    (b'{"type": "feed_meter", "card": "M20-1"', "malformed_json"),
    (b'{"type": "feed_meter", "card": "\xff\xfe"}', "malformed_json"),
    (b'{"type": "choose", "position": NaN}', "malformed_json"),
    (DEEP_ARRAY, "invalid_command"),
    (DEEP_OBJECT, "malformed_json"),
    (b'{"type": "choose", "card": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", "invalid_command"),
    (b'{"type": "take_seat", "player": ' + DEEP_OBJECT + b"}", "malformed_json"),
    (b"[]", "invalid_command"),
    (b"null", "invalid_command"),
    (b'"feed_meter"', "invalid_command"),
    (b"17", "invalid_command"),
    (b"{}", "invalid_command"),
    (b'{"type": "castle"}', "invalid_command"),
    (b'{"type": "feed_meter"}', "invalid_command"),
    (b'{"type": "feed_meter", "card": 5}', "invalid_command"),
    (b'{"type": "feed_meter", "card": null}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "seat": 0}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "expected_version": "7"}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "expected_version": -1}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "expected_version": 1e400}', "invalid_command"),
    (b'{"type": "time_expires", "card": "TE-1", "target": 99999999999999999999999999}', "invalid_command"),
    (b'{"type": "time_expires", "card": "TE-1", "target": true}', "invalid_command"),
    (b'{"type": "swap_three", "cards": ["a", "b"]}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "' + b"x" * 5000 + b'"}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "command_id": ""}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "command_id": "has space"}', "invalid_command"),
    (b'{"type": "feed_meter", "card": "M20-1", "command_id": "' + b"c" * 129 + b'"}', "invalid_command"),
]


async def test_a_command_that_is_not_json_or_not_the_schema_is_400_and_appends_nothing(api, table):
    game_id, tokens = table
    async with appends_nothing(api, game_id):
        for body, code in BAD_COMMANDS:
            assert_error(await command(api, game_id, tokens[1], body), 400, code)


BAD_CREATES = [
    (b"{nope", "malformed_json"),
    (DEEP_ARRAY, "invalid_request"),
    (b'{"kind": "free-parking", "options": ' + DEEP_OBJECT + b"}", "malformed_json"),
    (b'{"kind": "free-parking", "options": {"mode": ' + DEEP_ARRAY + b"}}", "malformed_json"),
    (b"[]", "invalid_request"),
    (b'"free-parking"', "invalid_request"),
    (b"{}", "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "colour": "red"}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": "2"}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2.5}', "invalid_request"),
    (b'{"kind": 7}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 5000}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 0}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 1}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": ' + b"9" * 1000 + b"}", "invalid_request"),
    (b'{"kind": "free-parking", "seats": -99999999999999999999999}', "invalid_request"),
    (b'{"kind": "chess", "seats": 2}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": []}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"mode": "blitz"}}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"response_seconds": 0}}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"response_seconds": 1e400}}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"response_seconds": ' + b"9" * 40 + b"}}", "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"undo": true}}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "options": {"seats": 8}}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "seed": "zz"}', "invalid_request"),
    (b'{"kind": "free-parking", "seats": 2, "seed": 12}', "invalid_request"),
]


async def test_a_bad_game_creation_is_400_and_creates_nothing(api):
    before = (await api.get("/games")).json()["games"]
    for body, code in BAD_CREATES:
        r = await api.post("/games", content=body, headers={"content-type": "application/json", **ADMIN_HEADERS})
        assert_error(r, 400, code)
    assert (await api.get("/games")).json()["games"] == before


BAD_PLAYERS = [
    (b"{nope", "malformed_json"),
    (b'{"name": "\\ud800"}', "malformed_json"),
    (DEEP_OBJECT, "invalid_request"),
    (b"[]", "invalid_request"),
    (b"{}", "invalid_request"),
    (b'{"name": 5}', "invalid_request"),
    (b'{"name": null}', "invalid_request"),
    (b'{"name": "Ann", "admin": true}', "invalid_request"),
    (b'{"name": ""}', "invalid_request"),
    (b'{"name": "   "}', "invalid_request"),
    (b'{"name": "Ann\\nBob"}', "invalid_request"),
    (b'{"name": "Ann\\u0000"}', "invalid_request"),
    (json.dumps({"name": "x" * 41}).encode(), "invalid_request"),
    (json.dumps({"name": "\U0001f697" * 41}).encode(), "invalid_request"),
    # a name sits inside one line of the audit log and of every screen: no line breaks of any script (U+0085, U+2028,
    # U+2029), no C1 controls, no bidirectional overrides or isolates, and not only invisible characters
    (json.dumps({"name": "Ann\u2028Bob"}).encode(), "invalid_request"),
    (json.dumps({"name": "Ann\u2029"}).encode(), "invalid_request"),
    (json.dumps({"name": "Ann\x85Bob"}).encode(), "invalid_request"),
    (json.dumps({"name": "Ann\x9b"}).encode(), "invalid_request"),
    (json.dumps({"name": "\u202eevil.exe"}).encode(), "invalid_request"),
    (json.dumps({"name": "Ann\u2066"}).encode(), "invalid_request"),
    (json.dumps({"name": "\u200b"}).encode(), "invalid_request"),
    (json.dumps({"name": "\ufeff \u200d"}).encode(), "invalid_request"),
]


async def test_a_bad_registration_is_400(api):
    for body, code in BAD_PLAYERS:
        assert_error(await api.post("/players", content=body, headers={"content-type": "application/json"}), 400, code)


async def test_unicode_names_are_kept_exactly_and_forty_characters_is_the_limit(api):
    # joiners inside a name are letters' business: an emoji family (ZWJ), Persian (ZWNJ), a right-to-left mark
    for name in ("Zoë Ångström", "名前", "\U0001f697" * 40, "x" * 40, "Ann O'Neil-Smith (2)", "👨\u200d👩\u200d👧", "می\u200cخواهم", "\u200fשלום"):
        r = await api.post("/players", json={"name": name})
        assert r.status_code == 201, r.text
        assert r.json()["name"] == name
    game_id = await new_game(api, 2)
    for name in ("Łukasz", "\U0001f697" * 40):
        assert (await api.post(f"/games/{game_id}/seats", json={"name": name})).status_code == 201
    names = [p["name"] for p in (await view(api, game_id))["players"]]
    assert names == ["Łukasz", "\U0001f697" * 40]


BAD_JOINS = [
    (b"{nope", "malformed_json"),
    (b"[]", "invalid_request"),
    (b"{}", "invalid_request"),
    (b'{"name": "Ann", "bot": "greedy"}', "invalid_request"),
    (b'{"bot": "clever"}', "invalid_request"),
    (b'{"name": "Ann", "seat": 0}', "invalid_request"),
    (json.dumps({"name": "x" * 41}).encode(), "invalid_request"),
    (b'{"name": ""}', "invalid_request"),
    (json.dumps({"name": "Ann\u2028Bob"}).encode(), "invalid_request"),
    (DEEP_OBJECT, "invalid_request"),
    (b'{"name": ' + DEEP_ARRAY + b"}", "invalid_request"),
    (b'{"bot": ' + DEEP_OBJECT + b"}", "invalid_request"),
]


async def test_a_bad_join_is_400_and_seats_no_one(api):
    game_id = await new_game(api, 2)
    async with appends_nothing(api, game_id):
        for body, code in BAD_JOINS:
            r = await api.post(f"/games/{game_id}/seats", content=body, headers={"content-type": "application/json"})
            assert_error(r, 400, code)


async def test_a_guest_token_joining_without_a_name_is_400_not_a_crash(api):
    """A guest's token is not a registered player's: it must name the new seat (it used to crash: 500)."""
    game_id = await new_game(api, 2)
    guest = (await api.post(f"/games/{game_id}/seats", json={"name": "Ann"})).json()["token"]
    other = await new_game(api, 2)
    for target in (game_id, other):
        async with appends_nothing(api, target):
            assert_error(await api.post(f"/games/{target}/seats", json={}, headers=bearer(guest)), 400, "invalid_request")


async def test_a_body_over_the_limit_is_413_on_every_endpoint_and_appends_nothing(api, table):
    game_id, tokens = table
    limit = api.app.config.REQUEST_MAX_SIZE
    padding = "x" * (limit + 10)
    big_command = json.dumps({"type": "end_turn", "command_id": "c", "pad": padding}).encode()
    async with appends_nothing(api, game_id):
        error = assert_error(await command(api, game_id, tokens[1], big_command), 413, "body_too_large")
        assert error["detail"] == {"limit": limit}

        async def chunks():  # no Content-Length: the limit holds for a streamed body too
            for _ in range(limit // 1024 + 2):
                yield b"x" * 1024

        r = await api.post(f"/games/{game_id}/commands", content=chunks(), headers=bearer(tokens[1]))
        assert_error(r, 413, "body_too_large")
        for path in ("/players", "/games", f"/games/{game_id}/seats"):
            assert_error(await api.post(path, content=json.dumps({"name": padding}).encode()), 413, "body_too_large")
    # a body just under the limit is read and judged on its content
    fits = json.dumps({"type": "end_turn", "pad": "x" * (limit - 100)}).encode()
    assert len(fits) <= limit
    async with appends_nothing(api, game_id):
        assert_error(await command(api, game_id, tokens[1], fits), 400, "invalid_command")


async def test_headers_or_a_url_over_the_limit_are_431_and_append_nothing(api, table):
    """Sanic reads at most REQUEST_MAX_HEADER_SIZE bytes of request line and headers; past that the answer says so
    (it used to say that the body was too large)."""
    game_id, tokens = table
    limit = api.app.config.REQUEST_MAX_HEADER_SIZE
    pad = "a" * (limit + 10)
    async with appends_nothing(api, game_id):
        for method, path, headers in [
            ("GET", f"/games/{game_id}", {"x-padding": pad}),
            ("GET", f"/games/{game_id}/events?pad={pad}", {}),
            ("POST", f"/games/{game_id}/commands", {"authorization": f"Bearer {pad}"}),
            ("POST", f"/games/{game_id}/commands", {**bearer(tokens[1]), **{f"x-{i}": "b" * 100 for i in range(limit // 100)}}),
        ]:
            r = await api.request(method, path, headers=headers, json={"type": "end_turn"} if method == "POST" else None)
            error = assert_error(r, 431, "headers_too_large")
            assert error["detail"] == {"limit": limit} and str(limit) in error["message"]


# --- who: 401, 403, 404 -------------------------------------------------------------------------------------


async def test_an_unknown_game_is_404_everywhere(api, table):
    _, tokens = table
    for method, path, kw in [
        ("GET", "/games/g_nope", {}),
        ("GET", "/games/g_nope/events", {}),
        ("GET", "/games/g_nope/audit", {}),
        ("GET", "/games/g_nope/export", {"headers": ADMIN_HEADERS}),
        ("GET", "/games/g_nope/replay", {"headers": ADMIN_HEADERS}),
        ("POST", "/games/g_nope/seats", {"json": {"name": "Ann"}}),
        ("POST", "/games/g_nope/commands", {"json": {"type": "end_turn"}, "headers": bearer(tokens[0])}),
        ("GET", "/games/%E2%9C%93%00", {}),
        ("GET", "/games/" + "g" * 3000, {}),
    ]:
        error = assert_error(await api.request(method, path, **kw), 404, "not_found")
        assert "g_nope" in str(error) or method == "GET"
    assert_error(await api.get("/no/such/route"), 404, "not_found")
    r = await api.delete("/games")
    assert assert_error(r, 405, "method_not_allowed")["detail"] == {"allowed": ["GET", "HEAD", "POST"]}
    assert r.headers["allow"] == "GET, HEAD, POST"  # RFC 9110: a 405 names what is allowed


async def test_tokens_missing_malformed_or_unknown_are_401_and_append_nothing(api, table):
    game_id, tokens = table
    v = await view(api, game_id, tokens[1])
    legal = dict(v["legal"][0], expected_version=v["version"])
    unknown = [
        {"authorization": "Bearer fpt_not-a-token"},
        {"authorization": f"Bearer {tokens[1]}x"},
        {"authorization": "Bearer " + "t" * 5000},
        {"authorization": f"Basic {tokens[1]}"},
        {"authorization": "Bearer"},
        {"authorization": tokens[1]},
        {"authorization": ""},
    ]
    async with appends_nothing(api, game_id):
        assert_error(await command(api, game_id, None, legal), 401, "unauthorized")
        for headers in unknown:
            assert_error(await command(api, game_id, None, legal, headers=headers), 401, "unauthorized")
            for path in ("", "/events", "/audit", "/export", "/replay"):
                assert_error(await api.get(f"/games/{game_id}{path}", headers=headers), 401, "unauthorized")
            assert_error(await api.post(f"/games/{game_id}/seats", json={"name": "Eve"}, headers=headers), 401, "unauthorized")
            assert_error(await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=headers), 401, "unauthorized")
    assert (await command(api, game_id, tokens[1], legal)).status_code == 200  # the same command, with its token


async def test_a_token_without_a_seat_here_is_403_and_appends_nothing(api, table):
    """Commands carry no seat: a token acts only as its own. Another game's seat, a registered player who
    has no seat here and the admin (who sees everything but plays no seat) are all refused."""
    game_id, tokens = table
    other_game, other_tokens = await seeded_game(api, 2, SEED)
    player = (await api.post("/players", json={"name": "Ann"})).json()["token"]
    v = await view(api, game_id, tokens[1])
    legal = dict(v["legal"][0], expected_version=v["version"])
    async with appends_nothing(api, game_id), appends_nothing(api, other_game):
        for token in (other_tokens[1], other_tokens[0], player):
            assert_error(await command(api, game_id, token, legal), 403, "forbidden")
        assert_error(await command(api, game_id, None, legal, headers=ADMIN_HEADERS), 403, "forbidden")
        # before the end, the full log and the replay are the admin's alone: not a seat's, not a spectator's
        for path in ("/export", "/replay"):
            for headers in ({}, bearer(tokens[0]), bearer(tokens[1]), bearer(player)):
                assert_error(await api.get(f"/games/{game_id}{path}", headers=headers), 403, "forbidden")
    # another game's token reads this one as a spectator does: no seat, no hand, nothing to do
    spectator = await view(api, game_id, other_tokens[1])
    assert spectator["seat"] is None and spectator["you"] is None and spectator["legal"] == []


async def test_only_the_admin_may_fix_a_seed(api):
    seed = "ab" * 32
    player = (await api.post("/players", json={"name": "Ann"})).json()["token"]
    before = (await api.get("/games")).json()["games"]
    for headers in ({}, bearer(player)):
        r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": seed}, headers=headers)
        assert_error(r, 403, "forbidden")
    assert (await api.get("/games")).json()["games"] == before
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": seed}, headers=ADMIN_HEADERS)
    assert r.status_code == 201


# --- 409: versions, command ids, seats ----------------------------------------------------------------------


async def test_a_stale_expected_version_is_409_with_the_current_version(api, table):
    game_id, tokens = table
    v = await view(api, game_id, tokens[1])
    for stale in (v["version"] - 1, v["version"] + 1, 0, 10**15):
        async with appends_nothing(api, game_id):
            error = assert_error(await command(api, game_id, tokens[1], dict(v["legal"][0], expected_version=stale)), 409, "version_conflict")
            assert error["detail"]["version"] == v["version"]


async def test_huge_integers_are_refused_by_the_schema_or_as_a_stale_version(api, table):
    """Seats, positions and versions have bounds in the schema (400); a version in bounds that the game has not
    reached is simply stale (409)."""
    game_id, tokens = table
    v = await view(api, game_id, tokens[1])
    async with appends_nothing(api, game_id):
        error = assert_error(await command(api, game_id, tokens[1], dict(v["legal"][0], expected_version=2**62)), 409, "version_conflict")
        assert error["detail"]["version"] == v["version"]
        for big in (2**63, 2**64 + 1, 10**400):
            assert_error(await command(api, game_id, tokens[1], dict(v["legal"][0], expected_version=big)), 400, "invalid_command")
            for body in ({"type": "time_expires", "card": card_of(v, "TE-"), "target": big}, {"type": "choose", "position": big}):
                assert_error(await command(api, game_id, tokens[1], body), 400, "invalid_command")


async def test_a_command_id_reused_with_another_body_is_409_and_with_the_same_body_the_first_answer(api, table):
    game_id, tokens = table
    v = await view(api, game_id, tokens[1])
    feed = {"type": "feed_meter", "card": card_of(v, "M"), "command_id": "one"}
    first = await command(api, game_id, tokens[1], feed)
    assert first.status_code == 200, first.text
    async with appends_nothing(api, game_id):
        again = await command(api, game_id, tokens[1], feed)
        assert again.status_code == 200 and again.json()["events"] == first.json()["events"]
        assert (again.json()["version"], again.json()["head"]) == (first.json()["version"], first.json()["head"])
        assert_error(await command(api, game_id, tokens[1], dict(feed, type="discard")), 409, "command_id_reused")
        assert_error(await command(api, game_id, tokens[1], {"type": "end_turn", "command_id": "one"}), 409, "command_id_reused")


async def test_a_full_game_and_a_second_seat_for_one_player_are_409(api):
    game_id = await new_game(api, 2)
    player = (await api.post("/players", json={"name": "Ann"})).json()["token"]
    assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player))).status_code == 201
    async with appends_nothing(api, game_id):
        assert_error(await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player)), 409, "already_seated")
    assert (await api.post(f"/games/{game_id}/seats", json={"name": "Bob"})).status_code == 201
    async with appends_nothing(api, game_id):
        for body in ({"name": "Late"}, {"bot": "greedy"}):
            assert_error(await api.post(f"/games/{game_id}/seats", json=body), 409, "game_full")
        assert_error(await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player)), 409)


# --- 422: the rules say no ----------------------------------------------------------------------------------


async def test_each_kind_of_illegal_move_is_422_with_its_rule_code_and_appends_nothing(api, table):
    game_id, tokens = table
    first, second = await view(api, game_id, tokens[0]), await view(api, game_id, tokens[1])
    assert second["turn"] == 1 and second["seat"] == 1
    feed, point, expires = card_of(second, "M"), card_of(second, "P"), card_of(second, "TE-")
    theirs = first["you"]["hand"][0]["id"]
    refused = [
        (tokens[0], {"type": "feed_meter", "card": theirs}, "not_your_turn"),
        (tokens[0], {"type": "end_turn"}, "not_your_turn"),
        (tokens[1], {"type": "run_errand", "card": point}, "meter_too_low"),
        (tokens[1], {"type": "feed_meter", "card": theirs}, "card_not_in_hand"),
        (tokens[1], {"type": "feed_meter", "card": "M20-9"}, "card_not_in_hand"),
        (tokens[1], {"type": "feed_meter", "card": point}, "wrong_card_kind"),
        (tokens[1], {"type": "run_errand", "card": feed}, "wrong_card_kind"),
        (tokens[1], {"type": "time_expires", "card": expires, "target": 1}, "invalid_target"),
        (tokens[1], {"type": "time_expires", "card": expires, "target": 5}, "invalid_target"),
        (tokens[1], {"type": "end_turn"}, "main_play_required"),
        (tokens[1], {"type": "accept"}, "no_response_awaited"),
        (tokens[1], {"type": "choose", "target": 0}, "no_choice_awaited"),
        (tokens[1], {"type": "swap_three", "cards": [feed, feed, point]}, "duplicate_cards"),
        (tokens[1], {"type": "timeout"}, "server_only"),
        (tokens[1], {"type": "close"}, "server_only"),
        (tokens[1], {"type": "close", "idle_ms": 1, "since": 0}, "server_only"),
        (tokens[1], {"type": "create"}, "server_only"),
        (tokens[1], {"type": "take_seat", "player": {"name": "Mallory"}}, "server_only"),
        (tokens[0], {"type": "take_seat", "player": {"name": "Mallory", "bot": "greedy"}}, "server_only"),
    ]
    async with appends_nothing(api, game_id):
        for token, body, code in refused:
            assert_error(await command(api, game_id, token, body), 422, code)
    r = await command(api, game_id, tokens[1], {"type": "feed_meter", "card": feed})
    assert r.status_code == 200, r.text
    async with appends_nothing(api, game_id):
        assert_error(await command(api, game_id, tokens[1], {"type": "feed_meter", "card": feed}), 422, "main_play_done")
        assert_error(await command(api, game_id, tokens[1], {"type": "time_expires", "card": expires, "target": 0}), 422, "main_play_done")


@pytest.mark.parametrize("kind", ["solitaire", "monopoly"])
async def test_the_servers_own_commands_are_422_server_only_in_every_kind(api, kind):
    """A kind with no use for one of the server's commands (a solitaire never waits: no ``timeout``) still answers
    it as the other kinds do, 422 ``server_only`` — not 400, as if it were malformed."""
    seats = 1 if kind == "solitaire" else 2
    game_id = (await api.post("/games", json={"kind": kind, "seats": seats})).json()["game_id"]
    tokens = [(await api.post(f"/games/{game_id}/seats", json={"name": f"P{i}"})).json()["token"] for i in range(seats)]
    async with appends_nothing(api, game_id):
        for body in ({"type": "timeout"}, {"type": "close"}, {"type": "create"}, {"type": "take_seat", "player": {"name": "M"}}):
            assert_error(await command(api, game_id, tokens[0], body), 422, "server_only")


async def test_while_an_answer_is_awaited_no_one_else_may_act(api, table):
    game_id, tokens = table
    await time_expires_pending(api, game_id, tokens)
    first = await view(api, game_id, tokens[0])
    async with appends_nothing(api, game_id):
        assert_error(await command(api, game_id, tokens[1], {"type": "end_turn"}), 422, "awaiting_response")
        assert_error(await command(api, game_id, tokens[1], {"type": "accept"}), 422, "awaiting_response")
        assert_error(await command(api, game_id, tokens[1], {"type": "draw_second_chance"}), 422, "awaiting_response")
        assert_error(await command(api, game_id, tokens[0], {"type": "feed_meter", "card": first["you"]["hand"][0]["id"]}), 422, "answer_owed")
        assert_error(await command(api, game_id, tokens[0], {"type": "timeout"}), 422, "server_only")
    assert {"type": "accept"} in first["legal"]
    assert (await command(api, game_id, tokens[0], {"type": "accept"})).status_code == 200


async def test_commands_before_the_deal_are_422(api):
    game_id = await new_game(api, 3)
    token = (await api.post(f"/games/{game_id}/seats", json={"name": "Early"})).json()["token"]
    async with appends_nothing(api, game_id):
        assert_error(await command(api, game_id, token, {"type": "end_turn"}), 422, "game_not_started")


# --- query strings ------------------------------------------------------------------------------------------


async def test_query_numbers_out_of_range_or_not_numbers_are_400(api, table):
    game_id, _ = table
    v = await view(api, game_id)
    for bad in ("0", "-1", "201", "abc", "1.5", "9" * 5000, "1e3", "0x10"):
        assert_error(await api.get("/games", params={"limit": bad}), 400, "invalid_request")
    for bad in ("a", "b", "0"):
        assert_error(await api.get("/games", params={"status": bad}), 400, "invalid_request")
    for name, bad in [("limit", "0"), ("limit", "5001"), ("limit", "-5"), ("after", "-1"), ("after", "x"), ("after", "9" * 30)]:
        assert_error(await api.get(f"/games/{game_id}/events", params={name: bad}), 400, "invalid_request")
    for bad in ("-1", str(v["version"] + 1), "last"):
        assert_error(await api.get(f"/games/{game_id}/replay", params={"at": bad}, headers=ADMIN_HEADERS), 400, "invalid_request")
    for bad in ("", "+5", " 5", "1_0", "\uff15", "\u0665"):  # blank, or what int() reads but is no JSON-ish number
        assert_error(await api.get("/games", params={"limit": bad}), 400, "invalid_request")
        assert_error(await api.get(f"/games/{game_id}/events", params={"after": bad}), 400, "invalid_request")
    assert_error(await api.get("/games?status="), 400, "invalid_request")
    for good in ("1", "200"):
        assert (await api.get("/games", params={"limit": good})).status_code == 200
    assert (await api.get(f"/games/{game_id}/events", params={"after": 10**15, "limit": 5000})).json()["events"] == []


# --- hostile input: each refusal says what was wrong, in words a person can act on ---------------------------


async def test_hostile_input_is_refused_with_a_message_that_names_the_limit(api, table):
    """Not only a 4xx: the message names the field and the limit (docs/limits.md), never a regular expression."""
    game_id, tokens = table
    other_game, other_tokens = await seeded_game(api, 2, SEED)
    limit = api.app.config.REQUEST_MAX_SIZE
    cases = [
        ("POST", "/players", {"name": "x" * 41}, None, 400, ["$.name", "40"]),
        ("POST", "/players", {"name": "Ann\u2028Bob"}, None, 400, ["$.name", "line-break"]),
        ("POST", "/players", {"name": "\u202eevil"}, None, 400, ["$.name", "text-direction"]),
        ("POST", "/players", {"name": "\u200b"}, None, 400, ["$.name", "visible"]),
        ("POST", "/games", {"kind": "free-parking", "seats": 5000}, None, 400, ["$.seats", "8"]),
        ("POST", "/games", {"kind": "free-parking", "seats": 1}, None, 400, ["$.seats", "2"]),
        ("POST", "/games", {"kind": "free-parking", "seats": 10**40}, None, 400, ["$.seats"]),
        ("POST", "/games", {"kind": "chess"}, None, 400, ["chess", "free-parking"]),
        ("POST", "/games", {"kind": "free-parking", "seed": "zz"}, ADMIN, 400, ["$.seed", "64 hexadecimal digits"]),
        ("POST", "/games", {"kind": "free-parking", "options": {"response_seconds": 10**6}}, None, 400, ["response_seconds", "3600"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn", "expected_version": 2**64}, tokens[1], 400, ["$.expected_version"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn", "command_id": "a b"}, tokens[1], 400, ["$.command_id", "printable ASCII"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn", "command_id": "c" * 129}, tokens[1], 400, ["$.command_id", "128"]),
        ("POST", f"/games/{game_id}/commands", DEEP_OBJECT, tokens[1], 400, ["nested too deeply"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn", "pad": "x" * limit}, tokens[1], 413, [str(limit), "bytes"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn"}, other_tokens[1], 403, ["no seat at this game"]),
        ("POST", f"/games/{game_id}/commands", {"type": "end_turn"}, "fpt_forged", 401, ["not known"]),
        ("GET", "/games?limit=100000", None, None, 400, ["?limit", "200"]),
        ("GET", f"/games/{game_id}/events?after=" + "9" * 40, None, None, 400, ["?after", "whole number"]),
    ]
    async with appends_nothing(api, game_id), appends_nothing(api, other_game):
        for method, path, body, token, status, words in cases:
            content = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
            headers = {"content-type": "application/json", **(bearer(token) if token else {})}
            message = assert_error(await api.request(method, path, content=content, headers=headers), status)["message"]
            for word in words:
                assert word in message, f"{method} {path}: {word!r} is not in {message!r}"
            assert "regex" not in message and not message[0].islower(), f"{method} {path}: {message!r}"


# --- the store down: 503, nothing half-written, and back by itself ------------------------------------------


async def _all_unavailable(api, game_id, tokens, legal):
    """Every read and write answers 503 store_unavailable (or, for /healthz, ok: false), saying what to do about that
    very request: a command is resent with its command_id, a read retried, another write looked for first."""
    for method, path, kw in [
        ("POST", f"/games/{game_id}/commands", {"json": legal, "headers": bearer(tokens[1])}),
        ("POST", f"/games/{game_id}/commands", {"json": dict(legal, command_id="retry-me"), "headers": bearer(tokens[1])}),
        ("GET", f"/games/{game_id}", {"headers": bearer(tokens[1])}),
        ("GET", f"/games/{game_id}", {}),
        ("GET", f"/games/{game_id}/events", {}),
        ("GET", f"/games/{game_id}/audit", {}),
        ("GET", f"/games/{game_id}/export", {"headers": ADMIN_HEADERS}),
        ("GET", "/games", {}),
        ("POST", "/games", {"json": {"kind": "free-parking", "seats": 2}}),
        ("POST", "/players", {"json": {"name": "Ann"}}),
    ]:
        message = assert_error(await api.request(method, path, **kw), 503, "store_unavailable")["message"]
        command = path.endswith("/commands")
        assert ("command_id" in message) == command, (method, path, message)
        assert ("retry shortly" in message) == (command or method == "GET"), (method, path, message)
        assert ("look before you retry" in message) == (method == "POST" and not command), (method, path, message)
    r = await api.get("/healthz")
    assert r.status_code == 503 and r.json()["ok"] is False


async def test_a_redis_that_goes_down_is_503_nothing_half_written_and_the_service_recovers_by_itself(servers, tmp_path, caplog):
    """…and the outage is said in one line for the requests (and one when the store is back), not one per request."""
    server = servers(*ALWAYS)
    settings = make_settings("embedded", tmp_path, redis_url=server.url, namespace="down")
    async with serving(fresh_app(settings)) as api:
        game_id, tokens = await seeded_game(api, 2, SEED)
        before = await log_of(api, game_id)
        v = await view(api, game_id, tokens[1])
        legal = dict(v["legal"][0], expected_version=v["version"])
        server.kill()
        await _all_unavailable(api, game_id, tokens, legal)
        server.restart()  # the same data: the append-only file was fsynced on every write
        assert await log_of(api, game_id) == before, "a refused command left something in the store"
        r = await api.post(f"/games/{game_id}/commands", json=dict(legal, command_id="retry-me"), headers=bearer(tokens[1]))
        assert r.status_code == 200, r.text
        assert r.json()["version"] == v["version"] + len(r.json()["events"])
        assert (await api.get("/healthz")).json() == {"ok": True, "store": "redis"}
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("requests: the store")]
    assert len(said) == 2 and "cannot be reached" in said[0] and "is back after" in said[1], said


async def test_an_embedded_store_whose_journal_fails_is_503_and_a_restart_has_nothing_of_it(tmp_path):
    """The embedded store is "down" when its journal cannot be written: the write that failed, and every
    later one, is refused; reads answer 503 rather than show what was never acknowledged; a restart on the
    same data has the game as it was before the failure."""
    settings = make_settings("embedded", tmp_path, projector=False)  # the command is the first write to fail
    app = fresh_app(settings)
    async with serving(app) as api:
        game_id, tokens = await seeded_game(api, 2, SEED)
        before = await log_of(api, game_id)
        v = await view(api, game_id, tokens[1])
        legal = dict(v["legal"][0], expected_version=v["version"])

        def full_disk(payload: bytes) -> None:
            raise OSError(28, "No space left on device")

        app.ctx.store._journal.write = full_disk
        await _all_unavailable(api, game_id, tokens, legal)
    async with serving(fresh_app(settings)) as api:
        assert await log_of(api, game_id) == before
        r = await api.post(f"/games/{game_id}/commands", json=dict(legal, command_id="retry-me"), headers=bearer(tokens[1]))
        assert r.status_code == 200, r.text


# --- no input is a 500 --------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
command_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["feed_meter", "run_errand", "free_parking", "time_expires", "swap_three", "discard",
                              "draw_second_chance", "end_turn", "officer_jones", "talk_out", "accept", "choose",
                              "timeout", "create", "take_seat", "nope"])},
    optional={
        "card": st.sampled_from(["M20-1", "P40-2", "TE-1", "OJ-1", "TW-1", "FP-1"]) | json_values,
        "errand": json_values,
        "target": st.integers(-3, 10) | json_values,
        "position": st.integers(-3, 300),
        "cards": st.lists(st.sampled_from(["M20-1", "P40-2", "TE-1"]), max_size=4) | json_values,
        "player": json_values,
        "command_id": st.text(max_size=140) | json_values,
        "expected_version": st.integers(-(2**70), 2**70) | json_values,
    },
)
bodies = json_values.map(lambda v: json.dumps(v).encode()) | command_like.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=300)
header_values = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
headers = st.dictionaries(
    st.sampled_from(["authorization", "content-type", "accept", "x-forwarded-for", "content-encoding", "expect"]),
    header_values,
    max_size=3,
)
ENDPOINTS = [
    ("POST", "/games/{game}/commands"),
    ("POST", "/games/{game}/seats"),
    ("POST", "/games"),
    ("POST", "/players"),
    ("GET", "/games/{game}"),
    ("GET", "/games/{game}/events?after={text}&limit={text}"),
    ("GET", "/games/{game}/audit"),
    ("GET", "/games/{game}/replay?at={text}"),
    ("GET", "/games/{game}/export"),
    ("GET", "/games?status={text}&kind={text}&limit={text}"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    body=bodies,
    headers=headers,
    text=st.text(max_size=12),
    token=st.sampled_from(["seat", "other", "admin", "none"]),
)
async def test_no_input_is_a_server_error(api, table, endpoint, body, headers, text, token):
    game_id, tokens = table
    method, path = endpoint
    path = path.replace("{game}", game_id).replace("{text}", urllib.parse.quote(text, safe=""))
    auth = {"seat": bearer(tokens[1]), "other": bearer(tokens[0]), "admin": ADMIN_HEADERS, "none": {}}[token]
    headers = {**auth, **headers} if "authorization" not in headers else headers
    headers.pop("content-encoding", None) if body == b"" else None
    try:
        r = await api.request(method, path, content=body if method == "POST" else None, headers=headers)
    except httpx.HTTPError:
        return  # the client refused to send it (an invalid header): nothing reached the server
    assert r.status_code < 500, f"{method} {path} {headers} {body[:200]!r} → {r.status_code} {r.text[:300]}"
    if r.status_code >= 400 and r.request.method != "HEAD":
        assert_error(r, r.status_code)

