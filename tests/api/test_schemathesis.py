"""schemathesis against the service's ``/openapi.json``: what the document admits (and, in its negative mode, what
it does not) is sent to a live service on each store. Never a server error; every error in API.md's one shape;
every answer as documented (status, content type, body schema, ``Allow`` on a 405); schema-valid requests not
refused as malformed, schema-invalid ones not accepted.

The service runs in a thread of its own (schemathesis calls it with blocking ``requests``), with a small world made
first so that the stateful endpoints are reached, not only their 404s: a registered player, a game waiting for
players, a dealt game in play, a game two bots played to the end, and a solitaire the player is playing. Path parameters are drawn from those ids or
left as generated; the ``Authorization`` header from the admin's token, a seat's, a player's, a guest of another
game's, a made-up one, or none. A second test plays a whole game with commands taken from ``legal``, each sent
and checked as a schemathesis case, so that every success answer is checked against the document too.

``FREE_PARKING_SCHEMATHESIS_EXAMPLES`` sets the fuzzing examples per operation (default 30); schemathesis's
coverage phase (boundary values, missing parameters, undeclared methods) comes on top of them.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass, field

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from service.api.app import serving_here
from service.api.names import IN_WORDS as NAME_RULE
from service.api.openapi import spec
from tests.api.conftest import ADMIN, fresh_app, make_settings
from tests.api.helpers import TIME_EXPIRES_SEED, pick, playable
from tests.depth import count
from tests.stores import drop_namespace_at

EXAMPLES = count("FREE_PARKING_SCHEMATHESIS_EXAMPLES", 30, 300)


# --- a live service in a thread, and a small world in it ----------------------------------------------------


@dataclass
class World:
    url: str
    session: requests.Session = field(default_factory=requests.Session)
    player_id: str = ""
    player_token: str = ""
    waiting: str = ""  # a three-seat game with one seat taken
    waiting_token: str = ""
    playing: str = ""  # a dealt two-seat game
    seat_tokens: list[str] = field(default_factory=list)
    finished: str = ""  # two bots played it to the end
    tournament: str = ""  # two tables, one of them reserving a seat for the player
    solitaire: str = ""  # dealt to the registered player
    tokens: dict[str, str | None] = field(default_factory=dict)

    def ids(self, name: str) -> list[str]:
        return {"game_id": [self.waiting, self.playing, self.finished, self.solitaire], "player_id": [self.player_id],
                "tournament_id": [self.tournament]}.get(name, [])


class ServiceThread:
    """``serving_here(app)`` in an event loop of its own thread, so that the test's calls may block."""

    def __init__(self, app) -> None:
        self.app = app
        self.url = ""
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="service", daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            async with serving_here(self.app) as url:
                self.url = url
                self._ready.set()
                await self._stop.wait()

        try:
            asyncio.run(main())
        except BaseException as e:  # noqa: BLE001 - start() reports it
            self._error = e
            self._ready.set()

    def start(self) -> str:
        self._thread.start()
        if not self._ready.wait(30) or self._error is not None:
            raise RuntimeError(f"the service did not start: {self._error!r}")
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def _ok(r: httpx.Response, status: int = 201) -> dict:
    assert r.status_code == status, f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:300]}"
    return r.json()


def _build_world(url: str) -> World:
    admin = {"authorization": f"Bearer {ADMIN}"}
    w = World(url)
    with httpx.Client(base_url=url, timeout=30) as c:
        player = _ok(c.post("/players", json={"name": "Ann"}))
        w.player_id, w.player_token = player["player_id"], player["token"]

        w.waiting = _ok(c.post("/games", json={"kind": "free-parking", "seats": 3}))["game_id"]
        w.waiting_token = _ok(c.post(f"/games/{w.waiting}/seats", json={"name": "Early"}))["token"]

        w.playing = _ok(c.post("/games", json={"kind": "free-parking", "seats": 2, "seed": TIME_EXPIRES_SEED()}, headers=admin))["game_id"]
        w.seat_tokens = [_ok(c.post(f"/games/{w.playing}/seats", json={"name": f"Seat {i}"}))["token"] for i in range(2)]

        w.finished = _ok(c.post("/games", json={"kind": "free-parking", "seats": 2}))["game_id"]
        for bot in ("greedy", "random"):
            _ok(c.post(f"/games/{w.finished}/seats", json={"bot": bot}))
        w.solitaire = _ok(c.post("/games", json={"kind": "solitaire"}))["game_id"]
        _ok(c.post(f"/games/{w.solitaire}/seats", json={}, headers={"authorization": f"Bearer {w.player_token}"}))
        tables = [{"seats": 2, "players": [w.player_id]}, {"seats": 3}]
        w.tournament = _ok(c.post("/tournaments", json={"name": "Cup", "kind": "free-parking", "tables": tables}, headers=admin))["tournament_id"]
        deadline = time.monotonic() + 60
        while _ok(c.get(f"/games/{w.finished}"), 200)["status"] != "finished":
            assert time.monotonic() < deadline, "two bots did not finish a game within a minute"
            time.sleep(0.05)
    w.tokens = {
        "none": None,
        "admin": ADMIN,
        "seat 0": w.seat_tokens[0],
        "seat 1": w.seat_tokens[1],  # the seat to play first (TIME_EXPIRES_SEED)
        "player": w.player_token,
        "guest of another game": w.waiting_token,
        "unknown": "fpt_not-a-token-of-this-service",
    }
    return w


_current: dict[str, World] = {}  # the world of the module's running service, for the schema's hook


@pytest.fixture(scope="module", params=["embedded", "redis"])
def world(request, tmp_path_factory):
    config = make_settings(request.param, tmp_path_factory.mktemp(request.param), runner_interval_ms=50, allow_volatile=True)
    service = ServiceThread(fresh_app(config))
    url = service.start()
    try:
        _current["world"] = built = _build_world(url)
        yield built
    finally:
        _current.pop("world", None)
        service.stop()
        if config.redis_url:
            asyncio.run(drop_namespace_at(config.redis_url, config.namespace))


# --- the schema, with the world's ids and tokens mixed into what schemathesis generates ---------------------

# The document the service serves at /openapi.json is built in-process from the routes' declarations. schemathesis
# needs it when pytest collects (one test per operation), before any service runs, so it comes from the same
# builder here, and ``test_each_live_service_serves_the_document_tested`` checks that the live one is identical.
# (``schemathesis.pytest.from_fixture`` would load it from the live service at run time, but its runner breaks on
# pytest 9.2: it writes ``Node._nodeid``, which pytest no longer has.)
DOCUMENT = spec()
schema = schemathesis.openapi.from_dict(DOCUMENT)


@schema.hook
def flatmap_case(context, case):
    """Fuzzing phase: each path parameter one of the world's ids or as generated; the Authorization header one of
    the world's tokens (a seat's more often), none, or as generated."""
    world = _current["world"]
    params = {name: st.sampled_from([*world.ids(name), value]) for name, value in (case.path_parameters or {}).items()}
    auth = st.sampled_from(["seat 1", "seat 1", "seat 0", *sorted(world.tokens)])
    drawn = st.fixed_dictionaries({"path": st.fixed_dictionaries(params), "auth": auth, "keep": st.booleans()})
    return drawn.map(lambda d: _with(case, d, world))


def _with(case, drawn: dict, world: World):
    if case.path_parameters:
        case.path_parameters = drawn["path"]
    headers = dict(case.headers or {})
    if not (drawn["keep"] and any(k.lower() == "authorization" for k in headers)):
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        token = world.tokens[drawn["auth"]]
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
    case.headers = headers
    _finite(case, world)
    return case


STREAM = "/games/{game_id}/events/stream"
PLAYER_STREAM = "/players/me/stream"  # tests/api/test_player_stream.py covers it open


def _finite(case, world: World) -> None:
    """``GET /games/{id}/events/stream`` ends only with its game: fuzzed on the finished game (whose stream ends after
    its last event, each event checked against the document's SSE schema), on unknown ids (404) and past the end
    (204), never on a game in play or waiting, whose stream stays open for as long as the game does (``requests``
    would wait on it for ever). tests/api/test_live.py covers the open streams. The player's own stream never ends:
    fuzzed with every token but a registered player's (401, 400)."""
    if case.operation.path == STREAM and case.path_parameters and case.path_parameters.get("game_id") in (
        world.waiting, world.playing, world.solitaire
    ):
        case.path_parameters = {**case.path_parameters, "game_id": world.finished}
    if case.operation.path == PLAYER_STREAM:  # never ends for a registered player: their token swapped for a guest's
        headers = dict(case.headers or {})
        for name in [k for k in headers if k.lower() == "authorization" and world.player_token in headers[k]]:
            headers[name] = f"Bearer {world.waiting_token}"
        case.headers = headers


_turn = [0]


def _rotate(case, world: World) -> None:
    """The other phases' cases (coverage, examples) bypass the hook: ids and tokens in turn instead, except where
    the case is about that very parameter (a missing Authorization header, an odd game id)."""
    _turn[0] += 1
    data = getattr(case.meta.phase, "data", None) if case.meta else None
    about = (getattr(data, "parameter", None) or "").lower()
    names = sorted(world.tokens)
    drawn = {"path": {}, "auth": names[_turn[0] % len(names)], "keep": about == "authorization" or _turn[0] % 2 == 0}
    for name, value in (case.path_parameters or {}).items():
        choices = [*world.ids(name), value]
        drawn["path"][name] = value if about == name.lower() else choices[_turn[0] % len(choices)]
    if about == "authorization":
        drawn["auth"] = "none"
    _with(case, drawn, world)


# --- checks -------------------------------------------------------------------------------------------------


def _error(response) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body.get("error", {}) if isinstance(body, dict) else {}


def error_shape(ctx, response, case) -> bool | None:
    """Every 4xx and 5xx is ``{"error": {"code": snake_case, "message": a sentence, "detail": {...}}}``."""
    if response.status_code < 400:
        return None
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    assert content_type.startswith("application/json"), f"an error answered as {content_type!r}: {response.text[:300]}"
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, f"not the error shape: {body!r}"[:500]
    error = body["error"]
    assert isinstance(error, dict) and set(error) == {"code", "message", "detail"}, f"not the error shape: {body!r}"[:500]
    code = error["code"]
    assert isinstance(code, str) and code.replace("_", "").isalpha() and code.islower(), f"code {code!r} is not snake_case"
    assert isinstance(error["message"], str) and error["message"].strip(), f"an empty message: {body!r}"[:500]
    assert isinstance(error["detail"], dict), f"detail is not an object: {body!r}"[:500]
    return True


def schema_valid_requests_accepted(ctx, response, case) -> bool | None:
    """schemathesis's ``positive_data_acceptance``, less what a schema cannot say:

    - a command's fate is the rules' (422) once it is well formed;
    - ``POST /games/{id}/seats`` needs a name or a bot unless the token is a registered player's, a bot of the
      game's kind, and no ``client_seed`` with a bot (400);
    - ``?at`` of a replay goes up to the game's version, which no static schema knows (400); ``?as`` of an export
      names one of the game's seats (400);
    - a tournament may reserve seats only for registered players, each once, no more than a table seats, and its
      organiser enters registered players only, by id; each format of tournament takes its own fields only, and
      duplicate deals are the card game's (400, `detail.format`: what an ``anyOf`` without ``not`` cannot say, and a
      client generator cannot read ``not``);
    - JSON Schema counts ``2.0`` as an integer; the service wants integers written as integers (400, see
      docs/limits.md);
    - a name's published pattern is a necessary condition only (service/api/names.py): a generated name of, say,
      combining marks or unassigned code points matches it and is refused by the whole rule (400, its message);
    - a ``public_key`` of 64 hex digits must also be a point of the curve of large order (about half of random ones
      are not), and a bot's seat takes none (400).
    """
    error = _error(response)
    message = str(error.get("message", ""))
    if case.operation.path == "/games/{game_id}/commands" and response.status_code == 422:
        return None
    if case.operation.path == "/games/{game_id}/seats" and message.startswith((
            "Send either a name or a bot", "A solitaire game seats", "A free-parking game seats", "A bot brings no client seed")):
        return None
    if case.operation.path == "/games/{game_id}/replay" and message.startswith("?at must be between 0 and"):
        return None
    if case.operation.path == "/games/{game_id}/export" and message.startswith("?as must be between 0 and"):  # the game's seats
        return None
    if (case.operation.path in ("/tournaments", "/tournaments/{tournament_id}/entries") and response.status_code == 400
            and {"player_id", "table", "format"} & set(error.get("detail", {}))):
        return None
    if response.status_code == 400 and "Expected `int" in message and "got `float`" in message:
        return None
    if response.status_code == 400 and f"{NAME_RULE} - at `$.name`" in message:
        return None
    if response.status_code == 400 and message.startswith(("`public_key` is no Ed25519 public key", "A bot's seat is never keyed")):
        return None
    return positive_data_acceptance(ctx, response, case)


CHECKS = [
    not_a_server_error,
    error_shape,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    schema_valid_requests_accepted,
    negative_data_rejection,
    missing_required_header,
    unsupported_method,
    allow_header_conformance,
]


# --- the tests ----------------------------------------------------------------------------------------------


def test_each_live_service_serves_the_document_tested(world):
    assert httpx.get(f"{world.url}/openapi.json").json() == DOCUMENT


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
def test_every_operation_keeps_the_documented_contract(case, world):
    if case.meta is None or case.meta.phase.name.value != "fuzzing":
        _rotate(case, world)
    response = case.call(base_url=world.url, session=world.session, timeout=30)
    case.validate_response(response, checks=CHECKS)


def _call(world: World, method: str, path: str, token: str | None = None, status: int = 200, **kw):
    """One request as a schemathesis case of the document, checked like the fuzzed ones; its JSON (or text)."""
    op = schema[path][method]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    case = op.Case(headers=headers, **kw)
    response = case.call(base_url=world.url, session=world.session, timeout=30)
    case.validate_response(response, checks=[c for c in CHECKS if c is not schema_valid_requests_accepted])
    assert response.status_code == status, f"{method} {path} {kw}: {response.status_code} {response.text[:300]}"
    return response.json() if response.headers.get("content-type", [""])[0].startswith("application/json") else response.text


def test_a_game_played_to_the_end_answers_as_documented_all_the_way(world):
    """Every command a seat's ``legal`` lists is accepted with an answer the document describes, from the deal to
    the end; then every read of the finished game, for each kind of caller."""
    admin = {"authorization": f"Bearer {ADMIN}"}
    game = _call(world, "POST", "/games", status=201, body={"kind": "free-parking", "seats": 2, "options": {"response_seconds": 60}})
    game_id = game["game_id"]
    at = {"game_id": game_id}
    player = _call(world, "POST", "/players", status=201, body={"name": "Zoë"})
    tokens = [
        _call(world, "POST", "/games/{game_id}/seats", status=201, path_parameters=at, body={}, token=player["token"])["token"],
        _call(world, "POST", "/games/{game_id}/seats", status=201, path_parameters=at, body={"name": "名前"})["token"],
    ]
    rnd = random.Random(4)
    seat_token = dict(enumerate(tokens))
    for _ in range(2000):
        views = [_call(world, "GET", "/games/{game_id}", path_parameters=at, token=t) for t in tokens]
        if views[0]["status"] == "finished":
            break
        acting = [v for v in views if playable(v["legal"])]
        assert acting, f"no seat may act at version {views[0]['version']}"
        v = rnd.choice(acting)
        body = dict(pick(v["legal"], rnd), expected_version=v["version"], command_id=f"c{v['version']}")
        answer = _call(world, "POST", "/games/{game_id}/commands", path_parameters=at, body=body, token=seat_token[v["seat"]])
        assert answer["version"] > v["version"]
        if any(e["type"] == "places_traded" for e in answer["events"]):
            seat_token = {_call(world, "GET", "/games/{game_id}", path_parameters=at, token=t)["seat"]: t for t in tokens}
    else:
        raise AssertionError(f"game {game_id} did not finish")
    _call(world, "GET", "/games/{game_id}", path_parameters=at, token=ADMIN)
    for token in (None, tokens[0], ADMIN):
        _call(world, "GET", "/games/{game_id}/events", path_parameters=at, token=token, query={"after": 3, "limit": 5000})
        _call(world, "GET", "/games/{game_id}/audit", path_parameters=at, token=token)
        _call(world, "GET", "/games/{game_id}/export", path_parameters=at, token=token)
        _call(world, "GET", "/games/{game_id}/replay", path_parameters=at, token=token, query={"at": 5})
    _call(world, "GET", "/games", query={"status": "finished", "kind": "free-parking", "limit": 200})
    deadline = time.monotonic() + 10  # read models lag: wait for the projector to reach the end
    while (scores := _call(world, "GET", "/games/{game_id}/scores", path_parameters=at))["scores"] is None or not _call(
        world, "GET", "/players/{player_id}", path_parameters={"player_id": player["player_id"]}
    )["results"]:
        assert time.monotonic() < deadline, f"the read models did not catch up: {scores}"
        time.sleep(0.05)
    assert httpx.get(f"{world.url}/games/{game_id}/events", headers=admin).status_code == 200


def test_a_solitaire_played_to_the_end_answers_as_documented_all_the_way(world):
    """The solitaire's view, its commands (the hint's, an undo, a redeal, the resignation) and its player's statistics,
    each answer checked against the document like a fuzzed one."""
    player = _call(world, "POST", "/players", status=201, body={"name": "Solo"})
    game = _call(world, "POST", "/games", status=201, body={"kind": "solitaire", "seed": "0" * 63 + "7"})
    at = {"game_id": game["game_id"]}
    _call(world, "POST", "/games/{game_id}/seats", status=201, path_parameters=at, body={}, token=player["token"])
    v = _call(world, "GET", "/games/{game_id}", path_parameters=at, token=player["token"])
    for step in range(40):
        command = {"type": "undo"} if step % 10 == 9 else {"type": "redeal"} if v["hint"] is None else v["hint"]
        assert command in v["legal"] or command["type"] == "undo"
        v = _call(world, "POST", "/games/{game_id}/commands", path_parameters=at, token=player["token"],
                  body=dict(command, expected_version=v["version"]))["view"]
        if v["status"] == "finished":
            break
    else:
        v = _call(world, "POST", "/games/{game_id}/commands", path_parameters=at, token=player["token"], body={"type": "resign"})["view"]
    assert v["status"] == "finished"
    for token in (None, player["token"], ADMIN):
        _call(world, "GET", "/games/{game_id}", path_parameters=at, token=token)
        _call(world, "GET", "/games/{game_id}/events", path_parameters=at, token=token)
        _call(world, "GET", "/games/{game_id}/export", path_parameters=at, token=token)
        _call(world, "GET", "/games/{game_id}/replay", path_parameters=at, token=token, query={"at": 3})
    deadline = time.monotonic() + 10
    while not (stats := _call(world, "GET", "/players/{player_id}/stats", path_parameters={"player_id": player["player_id"]}))["solitaire"]["games"]:
        assert time.monotonic() < deadline, f"the statistics did not count the game: {stats}"
        time.sleep(0.05)
    assert stats["solitaire"]["chosen_seed"]["played"] == 1
    _call(world, "GET", "/games/{game_id}/scores", path_parameters=at)
