"""The play-now queue over HTTP (docs/queue.md): join, status, leave, and many players queueing at once — on one
worker of each store, and on two workers sharing one Redis (and one Cluster), where both run the matcher."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from service.api import matchmaker
from service.api import queue as queue_routes
from service.rules.ratings import MODEL, shown
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings, served
from tests.api.helpers import assert_error, wait_for
from tests.api.test_player_stream import of, read_player
from tests.http import serving
from tests.signing import PlayerKey
from tests.stores import drop_namespace_at

FAST = {"queue_fill_ms": 1500, "queue_interval_ms": 100}
SEED = "5e" * 32


async def _player(api, name: str) -> str:
    r = await api.post("/players", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()["token"]


async def test_join_read_and_leave_the_queue(api):
    token = await _player(api, "Quinn")
    assert (await api.get("/queue", headers=bearer(token))).json() == {"state": "none"}
    r = await api.post("/queue", json={"kind": "monopoly", "seats": 3}, headers=bearer(token))
    assert r.status_code == 202, r.text
    queued = r.json()
    status = (await api.get("/queue", headers=bearer(token))).json()
    assert status["state"] == "waiting" and status["queue_id"] == queued["queue_id"] and status["since"] == queued["since"]
    assert status["kind"] == "monopoly" and status["seats"] == 3 and status["gap"] > 0
    assert status["fill_at"] == queued["since"] + api.app.ctx.settings.queue_fill_ms
    assert_error(await api.post("/queue", json={"kind": "free-parking"}, headers=bearer(token)), 409, "already_queued")
    assert (await api.delete("/queue", headers=bearer(token))).json() == {"left": True}
    assert (await api.delete("/queue", headers=bearer(token))).json() == {"left": False}
    assert (await api.get("/queue", headers=bearer(token))).json() == {"state": "none"}


async def test_bad_queueing_is_refused_and_queues_nothing(api):
    token = await _player(api, "Rae")
    assert_error(await api.post("/queue", json={"kind": "solitaire"}, headers=bearer(token)), 400)
    assert_error(await api.post("/queue", json={"kind": "chess"}, headers=bearer(token)), 400)
    assert_error(await api.post("/queue", json={"kind": "free-parking", "seats": 99}, headers=bearer(token)), 400)
    assert_error(await api.post("/queue", json={"kind": "free-parking", "client_seed": "xyz"}, headers=bearer(token)), 400)
    assert_error(await api.post("/queue", json={"kind": "free-parking", "what": 1}, headers=bearer(token)), 400)
    assert_error(await api.post("/queue", json={"kind": "free-parking"}), 401)
    assert_error(await api.post("/queue", json={"kind": "free-parking"}, headers=ADMIN_HEADERS), 403)
    assert_error(await api.get("/queue"), 401)
    assert (await api.get("/queue", headers=bearer(token))).json() == {"state": "none"}


async def test_a_player_alone_is_seated_with_bots_and_their_client_seed_is_used(store_kind, tmp_path):
    async with served(make_settings(store_kind, tmp_path, **FAST)) as api:
        token = await _player(api, "Sol")
        r = await api.post("/queue", json={"kind": "free-parking", "seats": 3, "client_seed": SEED}, headers=bearer(token))
        assert r.status_code == 202, r.text
        status = await _seated(api, token)
        assert status["token"] == token  # a registered player's own token is the seat's
        view = (await api.get(f"/games/{status['game_id']}", headers=bearer(token))).json()
        assert view["seat"] == status["seat"] and view["status"] == "playing" and len(view["players"]) == 3
        events = (await api.get(f"/games/{status['game_id']}/events", headers=bearer(token))).json()["events"]
        assert events[0]["public"]["seeding"] == "combined"  # an ordinary game with a drawn seed: rated
        taken = [e["public"] for e in events if e["type"] == "seat_taken"]
        assert [(e["player"].get("bot") is None, e["client_seed_from"]) for e in taken] == [
            (True, "player"), (False, "server"), (False, "server")]
        assert taken[0]["client_seed"] == SEED and taken[0]["player"]["name"] == "Sol"


async def test_a_queued_seat_is_keyed_with_the_key_sent_or_else_the_registered_one(tmp_path):
    async with served(make_settings("embedded", tmp_path, **FAST)) as api:
        sent, registered = PlayerKey(1), PlayerKey(2)
        ann = await _player(api, "Ann")
        r = await api.post("/players", json={"name": "Bo", "public_key": registered.public_key})
        bo = r.json()["token"]
        assert (await api.post("/queue", json={"kind": "free-parking", "seats": 2, "public_key": sent.public_key},
                               headers=bearer(ann))).status_code == 202
        assert (await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(bo))).status_code == 202
        game_id = (await _seated(api, ann))["game_id"]
        assert (await _seated(api, bo))["game_id"] == game_id  # two unrated players: one table, no bots
        events = (await api.get(f"/games/{game_id}/events", headers=bearer(ann))).json()["events"]
        keys = {e["public"]["player"]["name"]: e["public"]["player"].get("public_key") for e in events
                if e["type"] == "seat_taken"}
        assert keys == {"Ann": sent.public_key, "Bo": registered.public_key}
        views = {t: (await api.get(f"/games/{game_id}", headers=bearer(t))).json() for t in (ann, bo)}
        token, view = next((t, v) for t, v in views.items() if v["legal"])  # whoever's turn it is
        # a keyed seat's command without its signature is refused
        assert_error(await api.post(f"/games/{game_id}/commands", json=view["legal"][0], headers=bearer(token)), 401,
                     "bad_signature")


async def _seated(api, token: str, seconds: float = 60) -> dict:
    async def seated() -> dict | None:
        status = (await api.get("/queue", headers=bearer(token))).json()
        assert status["state"] in ("waiting", "seating", "seated"), status
        return status if status["state"] == "seated" else None

    return await wait_for(seated, seconds, every=0.1)


def _banded(names: dict[str, str]):
    """Ratings the matcher reads, by player: two bands far apart (every other player), bots at the start."""

    async def ratings_of(store, kind: str) -> dict[str, float]:
        return {pid: 30.0 * (int(name[1:]) % 2) for pid, name in names.items()}

    return ratings_of


async def _sixty(apis, monkeypatch, drive: bool = False) -> None:
    """60 players queue at once (half for each kind, every other one far above the rest in rating), through the
    workers in turn; each is seated exactly once, at a full table of their kind with their own band only. With
    ``drive``, the test runs every worker's matcher pass at once, over and over (their own periodic passes idle), so
    that each pass reads the queue before the others claim from it: the race the store's claim must settle."""
    players = {}
    for n, api in zip(range(60), itertools.cycle(apis)):
        r = await api.post("/players", json={"name": f"q{n}"})
        players[f"q{n}"] = r.json()
    names = {p["player_id"]: name for name, p in players.items()}
    monkeypatch.setattr(matchmaker, "ratings_of", _banded(names))
    kinds = {f"q{n}": ("free-parking" if n < 30 else "monopoly") for n in range(60)}

    async def queue(name: str, api) -> None:
        r = await api.post("/queue", json={"kind": kinds[name], "seats": 4}, headers=bearer(players[name]["token"]))
        assert r.status_code == 202, r.text

    await asyncio.gather(*(queue(name, api) for name, api in zip(players, itertools.cycle(apis))))
    driver = asyncio.ensure_future(_drive([api.app.ctx.matchmaker for api in apis])) if drive else None
    try:
        statuses = {name: await _seated(api, players[name]["token"], 120) for name, api in zip(players, itertools.cycle(apis))}
    finally:
        if driver is not None:
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
    tables: dict[str, list[str]] = {}
    for name, st in statuses.items():
        tables.setdefault(st["game_id"], []).append(name)
    for game_id, people in tables.items():
        view = (await apis[0].get(f"/games/{game_id}", headers=ADMIN_HEADERS)).json()
        assert view["kind"] == kinds[people[0]] and {kinds[p] for p in people} == {view["kind"]}
        events = (await apis[0].get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["events"]
        taken = {e["public"]["seat"]: e["public"]["player"] for e in events if e["type"] == "seat_taken"}
        assert view["status"] != "waiting" and sorted(taken) == [0, 1, 2, 3]
        seated = [p["name"] for p in taken.values() if not p.get("bot")]
        assert sorted(seated) == sorted(people), (game_id, seated, people)  # each player once, at this table only
        assert len({int(p[1:]) % 2 for p in people}) == 1, people  # ratings close: one band a table
        for p in people:
            assert taken[statuses[p]["seat"]]["name"] == p
    assert sum(len(p) for p in tables.values()) == 60
    listed = (await apis[0].get("/games", params={"limit": 200})).json()["games"]
    assert sorted(g["game_id"] for g in listed) == sorted(tables)  # no game made for a player seated elsewhere
    assert any(len(p) < 4 for p in tables.values()) and any(len(p) == 4 for p in tables.values())


async def _drive(matchers) -> None:
    while True:
        await asyncio.gather(*(m.pass_once() for m in matchers))
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("store_kind", ["embedded"])  # one process; Redis and the Cluster: two workers, below
async def test_sixty_players_queue_at_once_on_one_worker(store_kind, tmp_path, monkeypatch):
    async with served(make_settings(store_kind, tmp_path, **FAST)) as api:
        await _sixty([api], monkeypatch)


@pytest.mark.parametrize("kind", ["redis", "cluster"])
async def test_sixty_players_queue_at_once_on_two_workers(kind, tmp_path, request, monkeypatch):
    """Both workers run the matcher over the one queue in the store: their claims keep any player from two tables."""
    if kind == "cluster":
        request.getfixturevalue("redis_cluster")
    config = make_settings(kind, tmp_path, **{**FAST, "queue_interval_ms": 600_000})
    apps = [fresh_app(config), fresh_app(config)]
    try:
        async with serving(apps[0]) as one, serving(apps[1]) as two:
            one.app, two.app = apps
            await _sixty([one, two], monkeypatch, drive=True)
    finally:
        await drop_namespace_at(config.redis_url, config.namespace)


def test_an_unrated_player_has_the_default_rating():
    assert matchmaker.DEFAULT_RATING == shown(MODEL.mu, MODEL.sigma) == 0


async def test_queueing_is_charged_to_the_seats_limit(tmp_path):
    async with served(make_settings("embedded", tmp_path, rate_limits=True, seats_burst=2, seats_per_minute=1,
                                    players_burst=20)) as api:
        token = await _player(api, "Lim")
        for _ in range(2):
            assert (await api.post("/queue", json={"kind": "free-parking"}, headers=bearer(token))).status_code == 202
            assert (await api.delete("/queue", headers=bearer(token))).json() == {"left": True}
        assert_error(await api.post("/queue", json={"kind": "free-parking"}, headers=bearer(token)), 429, "rate_limited")
        assert (await api.get("/queue", headers=bearer(token))).json() == {"state": "none"}


async def test_the_players_stream_tells_the_queue_from_waiting_to_seated_and_a_leave(store_kind, tmp_path):
    """The player's stream (docs/player-stream.md) says each change of the player's queue entry: waiting, then seated
    at the game ``GET /queue`` names (and seated there, as the game's own seat_taken says); a leave is told too."""
    async with served(make_settings(store_kind, tmp_path, **FAST)) as api:
        token = await _player(api, "Tess")
        r = await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(token))
        assert r.status_code == 202, r.text
        status = await _seated(api, token)
        told = of(await read_player(api, token, lambda m: len(of(m, "queue")) >= 2 and of(m, "seated")), "queue")
        assert [e["status"] for e in told] == ["waiting", "seated"]
        assert (told[1]["game_id"], told[1]["seat"]) == (status["game_id"], status["seat"])
        other = await _player(api, "Uma")
        assert (await api.post("/queue", json={"kind": "monopoly"}, headers=bearer(other))).status_code == 202
        assert (await api.delete("/queue", headers=bearer(other))).json() == {"left": True}
        told = of(await read_player(api, other, lambda m: len(of(m, "queue")) >= 2), "queue")
        assert [e["status"] for e in told] == ["waiting", "left"]


async def _left_claimed(api, name: str, game_id: str | None, age_ms: int) -> str:
    """A player queued and a worker claimed a table for them ``age_ms`` ago, then stopped (``game_id`` None: the game
    made beforehand, the player seated at it — the worker stopped after the last seat): their token."""
    body = (await api.post("/players", json={"name": name})).json()
    player_id, token = body["player_id"], body["token"]
    if game_id is None:
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 3})).json()["game_id"]
        assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    store = api.app.ctx.store
    # queued now, not long ago: the running matcher would fill the table with bots before the claim below could take
    entry = matchmaker.Entry(queue_id="q_lost", player_id=player_id, name="Lou", kind="free-parking", seats=2,
                             since=matchmaker.now_ms())
    assert await store.queue_join(player_id, matchmaker.encode(entry))
    claim = matchmaker.Status(queue_id="q_lost", state="claimed", game_id=game_id,
                              at=matchmaker.now_ms() - age_ms)
    assert await store.queue_claim([(player_id, matchmaker.encode(entry), matchmaker.encode(claim))])
    return token


async def test_a_table_its_worker_never_finished_is_settled_from_the_game_itself(api):
    """A worker that died between its claim and the last seat: after SEATING_LOST_MS the queue's status says what the
    game says — cancelled when the player has no seat there, seated (with the seat) when they have one."""
    lou = await _left_claimed(api, "Lou", "g_never_made", age_ms=1_000)
    assert (await api.get("/queue", headers=bearer(lou))).json()["state"] == "seating"  # a worker may still be at it
    ann = await _left_claimed(api, "Ann", "g_never_made", age_ms=matchmaker.SEATING_LOST_MS + 1)
    status = (await api.get("/queue", headers=bearer(ann))).json()
    assert status["state"] == "cancelled" and "not finished" in status["reason"], status
    assert (await api.post("/queue", json={"kind": "free-parking"}, headers=bearer(ann))).status_code == 202
    assert (await api.delete("/queue", headers=bearer(ann))).json() == {"left": True}  # nobody waits for the matcher
    bea = await _left_claimed(api, "Bea", None, age_ms=matchmaker.SEATING_LOST_MS + 1)
    status = (await api.get("/queue", headers=bearer(bea))).json()
    assert (status["state"], status["seat"], status["token"]) == ("seated", 0, bea), status


async def test_a_player_queueing_again_while_their_table_is_made_is_refused_and_seated_once(store_kind, tmp_path,
                                                                                          monkeypatch):
    """A client that sends ``POST /queue`` again while its table is being made (a retry, a second tab) must not
    queue them again: the claimed table seats them anyway, and the next pass would seat them at a second one."""
    async with served(make_settings(store_kind, tmp_path, queue_fill_ms=0, queue_interval_ms=3_600_000)) as api:
        token = await _player(api, "Twice")
        games, gate = api.app.ctx.games, asyncio.Event()
        seat = games.seat

        async def held(game_id, player, *args, **kwargs):
            if not player.bot:
                await gate.wait()  # the matcher's worker is between its claim and this seat
            return await seat(game_id, player, *args, **kwargs)

        monkeypatch.setattr(games, "seat", held)
        assert (await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(token))).status_code == 202
        table = asyncio.ensure_future(api.app.ctx.matchmaker.pass_once())
        await wait_for(lambda: _state(api, token, "seating"), 30, every=0.05)
        assert_error(await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(token)), 409,
                     "already_queued")
        gate.set()
        assert await table == 1
        assert await api.app.ctx.matchmaker.pass_once() == 0  # nobody waits: no second table
        status = await _seated(api, token)
        listed = (await api.get("/games", params={"limit": 50})).json()["games"]
        assert [g["game_id"] for g in listed] == [status["game_id"]]


async def test_a_worker_that_wakes_after_its_claim_was_settled_seats_nobody(store_kind, tmp_path, monkeypatch):
    """A matcher's worker stalls between its claim and the player's seat (a paused VM, SIGSTOP) past SEATING_LOST_MS:
    ``GET /queue`` settles the claim cancelled, and the player queues again and is seated at another table. When the
    stalled worker wakes, its seat is refused (the claim was fenced off in the game's slot): seated once, not twice,
    and the player's stream says cancelled, then seated — nothing from the stalled table."""
    async with served(make_settings(store_kind, tmp_path, queue_fill_ms=0, queue_interval_ms=3_600_000)) as api:
        body = (await api.post("/players", json={"name": "Stalled"})).json()
        token, player_id = body["token"], body["player_id"]
        games, gate, stalled = api.app.ctx.games, asyncio.Event(), []
        seat = games.seat

        async def held(game_id, player, *args, **kwargs):
            if not player.bot and not stalled:
                stalled.append(game_id)
                await gate.wait()  # the worker is stopped between its claim and this seat
            return await seat(game_id, player, *args, **kwargs)

        monkeypatch.setattr(games, "seat", held)
        assert (await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(token))).status_code == 202
        first = asyncio.ensure_future(api.app.ctx.matchmaker.pass_once())
        async def stopped() -> bool:
            return bool(stalled)

        await wait_for(stopped, 30, every=0.05)
        real = queue_routes.now_ms
        monkeypatch.setattr(queue_routes, "now_ms", lambda: real() + matchmaker.SEATING_LOST_MS + 1)
        assert (await api.get("/queue", headers=bearer(token))).json()["state"] == "cancelled"
        monkeypatch.setattr(queue_routes, "now_ms", real)
        assert (await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(token))).status_code == 202
        assert await api.app.ctx.matchmaker.pass_once() == 1
        status = await _seated(api, token)
        gate.set()
        assert await first == 0  # woken: its seat refused, its table left unmade
        sat = [g for g in (stalled[0], status["game_id"])
               if any(s.player and s.player.player_id == player_id for s in (await games.fresh(g)).state.seats)]
        assert sat == [status["game_id"]]
        assert (await api.get("/queue", headers=bearer(token))).json()["game_id"] == status["game_id"]
        told = of(await read_player(api, token, lambda m: len(of(m, "queue")) >= 4), "queue")
        assert [(e["status"], e.get("game_id")) for e in told] == [
            ("waiting", None), ("cancelled", stalled[0]), ("waiting", None), ("seated", status["game_id"])]


async def _state(api, token: str, state: str) -> bool:
    return (await api.get("/queue", headers=bearer(token))).json()["state"] == state
