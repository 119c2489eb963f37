"""Clients that play through the HTTP API only."""

from __future__ import annotations

import asyncio
import hashlib
import random
import time

import httpx

from replays.verify import verify
from service.events.export import load
from tests.api.conftest import ADMIN_HEADERS, bearer


async def new_game(api: httpx.AsyncClient, seats: int, **options) -> str:
    r = await api.post("/games", json={"kind": "free-parking", "seats": seats, "options": options})
    assert r.status_code == 201, r.text
    return r.json()["game_id"]


async def fill(api: httpx.AsyncClient, game_id: str, seats: int) -> list[str]:
    """Seat ``seats`` guests; their tokens in seat order."""
    tokens = []
    for i in range(seats):
        r = await api.post(f"/games/{game_id}/seats", json={"name": f"Player {i}"})
        assert r.status_code == 201, r.text
        assert r.json()["seat"] == i
        tokens.append(r.json()["token"])
    return tokens


async def view(api: httpx.AsyncClient, game_id: str, token: str | None = None) -> dict:
    r = await api.get(f"/games/{game_id}", headers=bearer(token) if token else {})
    assert r.status_code == 200, r.text
    return r.json()


WEIGHTS = {"free_parking": 8, "run_errand": 8, "feed_meter": 4, "officer_jones": 4, "talk_out": 4, "end_turn": 3,
           "time_expires": 1, "draw_second_chance": 1, "swap_three": 0.5, "discard": 0.5}


def playable(legal: list[dict]) -> list[dict]:
    """``legal`` less ``resign``: what a seat may do to play the game on (every seat still in may resign at any
    moment, so a non-empty ``legal`` no longer says that a seat has a move; these tests never resign by chance)."""
    return [c for c in legal if c["type"] != "resign"]


def pick(legal: list[dict], rnd: random.Random) -> dict:
    """A command from ``legal`` other than ``resign``: a kind of command first (scoring kinds more often, so games end
    sooner), then one of that kind at random."""
    legal = playable(legal)
    kinds = sorted({c["type"] for c in legal})
    kind = rnd.choices(kinds, [WEIGHTS.get(k, 1) for k in kinds])[0]
    return rnd.choice([c for c in legal if c["type"] == kind])


async def play_from_legal(api: httpx.AsyncClient, game_id: str, tokens: list[str], rnd: random.Random, max_commands: int = 3000) -> dict:
    """Play to the end sending only commands taken from a seat's ``legal``, each with ``expected_version``.

    The awaited seat acts, else now and then another seat that may interrupt, else the seat whose turn it
    is. Returns counts of answers by status; any 4xx but 409 fails the test at once.
    """
    statuses: dict[int, int] = {}
    seat_token = dict(enumerate(tokens))  # a token is a player's: after a trade of places, seats move
    v = await view(api, game_id, tokens[0])
    for step in range(max_commands):
        if v["status"] == "finished":
            return statuses
        actor = v["pending"]["seat"] if v["pending"] else v["turn"]
        v = await view(api, game_id, seat_token[actor])
        if v["pending"] is None and step % 5 == 0:
            others = [await view(api, game_id, t) for s, t in seat_token.items() if s != actor]
            interrupts = [o for o in others if playable(o["legal"])]
            if interrupts and rnd.random() < 0.5:
                v = rnd.choice(interrupts)
        assert playable(v["legal"]), f"seat {v['seat']} has no legal command at version {v['version']}"
        command = dict(pick(v["legal"], rnd), expected_version=v["version"])
        r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(seat_token[v["seat"]]))
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code in (200, 409), f"{command} → {r.status_code} {r.text}"
        if r.status_code == 200 and any(e["type"] == "places_traded" for e in r.json()["events"]):
            seat_token = {(await view(api, game_id, t))["seat"]: t for t in tokens}
        v = r.json()["view"] if r.status_code == 200 else await view(api, game_id, tokens[0])
    raise AssertionError(f"game {game_id} did not finish within {max_commands} commands")


async def play_with_ids(api: httpx.AsyncClient, game_id: str, tokens: list[str], rnd: random.Random) -> list[tuple[str, dict, dict]]:
    """Play to the end, the seat to act sending a command of its ``legal`` with a command id; each accepted command
    with its sender's token and its answer."""
    sent = []
    seat_token = {(await view(api, game_id, t))["seat"]: t for t in tokens}  # a token is a player's: seats move
    v = await view(api, game_id, tokens[0])
    for step in range(3000):
        if v["status"] == "finished":
            return sent
        token = seat_token[v["pending"]["seat"] if v["pending"] else v["turn"]]
        v = await view(api, game_id, token)
        command = dict(pick(v["legal"], rnd), command_id=f"c{step}", expected_version=v["version"])
        r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))
        assert r.status_code == 200, r.text
        sent.append((token, command, r.json()))
        if any(e["type"] == "places_traded" for e in r.json()["events"]):
            seat_token = {(await view(api, game_id, t))["seat"]: t for t in tokens}
        v = r.json()["view"]
    raise AssertionError(f"game {game_id} did not finish within 3000 commands")


# --- for the API contract tests (errors, privacy, commands, deadlines, games) ---------------------------


def assert_error(r: httpx.Response, status: int, code: str | None = None) -> dict:
    """``r`` is an error of API.md's one shape, with ``status`` (and ``code``); its ``error`` object."""
    assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:500]}"
    assert r.headers["content-type"].startswith("application/json"), r.headers["content-type"]
    body = r.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "detail"}, error
    assert isinstance(error["code"], str) and error["code"].replace("_", "").isalpha() and error["code"].islower(), error
    assert isinstance(error["message"], str) and error["message"].strip(), error
    assert isinstance(error["detail"], dict), error
    if code is not None:
        assert error["code"] == code, f"expected {code}, got {error}"
    # every error names its request, as the answer's header does (docs/operating.md); the rest of detail is the error's
    assert error["detail"].pop("request_id") == r.headers["x-request-id"], (error, r.headers)
    return error


def find_seed(wanted, seats: int = 2, **options) -> str:
    """The hex of the first test seed whose deal satisfies ``wanted(state)`` (seat 1 plays first)."""
    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for

    config = rules_for("free-parking").CONFIG(seats=seats, **options)
    for i in range(10_000):
        seed = hashlib.sha256(b"free-parking-api-test-%d" % i).digest()
        game = Game.new("free-parking", "g_seed_search", config, seed)
        game.play(Create(), None, 1)
        for k in range(seats):
            game.play(TakeSeat(player=Player(name=f"p{k}", player_id=f"g_{k}")), None, 1)
        if wanted(game.state):
            return seed.hex()
    raise AssertionError("no test seed deals what the test needs")


def trade_places_seed() -> str:
    """The hex of the first test seed of a two-seat game in which seat 1 (who plays first) discards its first card,
    draws a Second Chance card and it is Trade Places (on seat 0, whose answer is then awaited): ``trade_places``."""
    from service.events import free_parking as ev
    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for

    config = rules_for("free-parking").CONFIG(seats=2)
    for i in range(10_000):
        seed = hashlib.sha256(b"free-parking-api-test-%d" % i).digest()
        game = Game.new("free-parking", "g_seed_search", config, seed)
        game.play(Create(), None, 1)
        for k in range(2):
            game.play(TakeSeat(player=Player(name=f"p{k}", player_id=f"g_{k}")), None, 1)
        game.play(ev.Discard(card=game.state.seats[1].hand[0]), 1, 1)
        drawn = game.play(ev.DrawSecondChance(), 1, 1)
        if any(e.type == "second_chance_drawn" and b'"trade_places"' in bytes(e.public) for e in drawn):
            return seed.hex()
    raise AssertionError("no test seed deals Trade Places at once")


async def trade_places(api: httpx.AsyncClient, game_id: str, tokens: list[str], *, before_accept=None) -> dict:
    """On a ``trade_places_seed`` game: seat 1 discards and draws Trade Places on seat 0, who accepts, then seat 1
    accepts its own trade (rules version 2 asks the drawer too); the players trade seats (the one who was at seat 1
    is now at seat 0) and the player now at seat 1 plays next. Returns the last accept's answer; ``before_accept``
    (an async callable) runs while the named player's answer is awaited."""
    v = await view(api, game_id, tokens[1])
    for body in ({"type": "discard", "card": v["you"]["hand"][0]["id"]}, {"type": "draw_second_chance"}):
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(tokens[1]))
        assert r.status_code == 200, r.text
    if before_accept is not None:
        await before_accept()
    for token in (tokens[0], tokens[1]):  # the named player, then the drawer
        r = await api.post(f"/games/{game_id}/commands", json={"type": "accept"}, headers=bearer(token))
        assert r.status_code == 200, r.text
    assert any(e["type"] == "places_traded" for e in r.json()["events"]), r.json()["events"]
    return r.json()


def holds(*prefixes: str, seat: int = 1):
    """A ``find_seed`` condition: ``seat`` (seat 1 plays first) holds a card of each id prefix (``TE-``, ``P40-``…)."""
    return lambda s: all(any(c.startswith(p) for c in s.seats[seat].hand) for p in prefixes)


# seat 1 plays first holding a Feed the Meter, a Point card and a Time Expires; seat 0 holds a Feed the Meter
TIME_EXPIRES_SEED = lambda: find_seed(lambda s: holds("M", "P", "TE-")(s) and holds("M", seat=0)(s))


async def time_expires_pending(api: httpx.AsyncClient, game_id: str, tokens: list[str]) -> dict:
    """On a ``TIME_EXPIRES_SEED`` game: each seat feeds its meter and ends its turn, then seat 1 plays Time
    Expires on seat 0, whose answer is now awaited. Returns that command's answer."""
    for seat in (1, 0):
        v = await view(api, game_id, tokens[seat])
        for body in ({"type": "feed_meter", "card": card_of(v, "M")}, {"type": "end_turn"}):
            r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(tokens[seat]))
            assert r.status_code == 200, r.text
    v = await view(api, game_id, tokens[1])
    body = {"type": "time_expires", "card": card_of(v, "TE-"), "target": 0}
    r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(tokens[1]))
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["view"]["pending"]["seat"] == 0 and answer["view"]["pending"]["kind"] == "respond", answer["view"]
    return answer


async def seeded_game(api: httpx.AsyncClient, seats: int, seed: str, **options) -> tuple[str, list[str]]:
    """A game the admin created with ``seed``, every seat taken by a guest: its id and the tokens in seat order."""
    from tests.api.conftest import ADMIN_HEADERS

    r = await api.post("/games", json={"kind": "free-parking", "seats": seats, "seed": seed, "options": options}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    return game_id, await fill(api, game_id, seats)


async def log_of(api: httpx.AsyncClient, game_id: str) -> tuple[int, str, list[dict]]:
    """The admin's ``(version, head, events)`` of a game: to show that a refused request appended nothing."""
    from tests.api.conftest import ADMIN_HEADERS

    r = await api.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    page = r.json()
    return page["version"], page["head"], page["events"]


def card_of(v: dict, prefix: str) -> str:
    """The id of the first card in the view's own hand whose id starts with ``prefix``."""
    return next(c["id"] for c in v["you"]["hand"] if c["id"].startswith(prefix))


async def drive(app, game_id: str, until=None, *, bots: str = "greedy", rnd_seed: int = 0, max_commands: int = 5000):
    """Play a game in the service's own process (no HTTP: fast) with bots' moves for every seat, until
    ``until(game)`` holds or the game is over. Returns the game."""
    from service.bots import bot, next_move

    games = app.ctx.games
    rnd = random.Random(rnd_seed)
    game = await games.fresh(game_id)
    players = [bot(game.rules.KIND, bots) for _ in range(game.state.n)]
    for _ in range(max_commands):
        game = await games.fresh(game_id)
        if game.rules.status_of(game.state) == "finished" or (until is not None and until(game)):
            return game
        seat, command = next_move(game.rules, game.state, players, rnd)
        await games.execute(
            game_id, command, lambda _, seat=seat: seat, actor_key=f"seat:{seat}", command_id=None,
            expected_version=game.version,
        )
    raise AssertionError(f"game {game_id} did not get there within {max_commands} commands")


def plain_monopoly_move(legal: list) -> object | None:
    """Monopoly played plainly: buy what you land on, pass every auction, take the flat tax, refuse trades, roll."""
    from service.events import monopoly as ev

    kinds = (ev.Buy, ev.ChooseTax, ev.PassBid, ev.RejectTrade, ev.ClaimBuildings, ev.Roll, ev.DeclareBankruptcy, ev.Decline)
    return next((c for kind in kinds for c in legal if type(c) is kind), None)


async def wait_for(check, seconds: float = 5.0, every: float = 0.05):
    """Poll ``check()`` (async) until it returns something truthy; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = await check()
        if got:
            return got
        await asyncio.sleep(every)
    raise AssertionError(f"nothing happened within {seconds}s")


async def verified(api, game_id):
    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    header, envelopes = load(r.content)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    return envelopes
