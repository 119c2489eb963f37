"""``GET /players/me/stream`` (issue 32, docs/player-stream.md): one stream of what a registered player must act on
across all their games — ``seated``, ``turn``, ``game_over``, ``queue`` — resumable with ``Last-Event-ID``, the same
from any worker, never another player's events, and idle streams hold no store connection.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from service.api.player_events import notify
from service.rules.engine import Game
from service.rules.resign import playing_on
from tests.api.conftest import bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, wait_for
from tests.depth import count
from tests.http import serving
from tests.stores import drop_namespace_at

FIELDS = {"type", "game_id", "seat", "kind", "version", "deadline_at", "result", "rated", "ratings", "status"}


async def read_player(api, token: str, until, headers: dict | None = None, timeout: float = 90) -> list[dict]:
    """The player's messages (``{"id", "event", "data"}``) until ``until(messages)`` holds."""
    messages: list[dict] = []

    async def read() -> None:
        async with api.stream("GET", "/players/me/stream", headers={**bearer(token), **(headers or {})}) as r:
            assert r.status_code == 200, (await r.aread()).decode()
            assert r.headers["content-type"].startswith("text/event-stream")
            message: dict = {}
            if until(messages):
                return
            async for line in r.aiter_lines():
                if line.startswith(":"):
                    continue
                if line == "":
                    if message:
                        message["data"] = json.loads(message["data"])
                        messages.append(message)
                        message = {}
                        if until(messages):
                            return
                else:
                    field, _, value = line.partition(":")
                    message[field] = value.removeprefix(" ")

    await asyncio.wait_for(read(), timeout)
    return messages


def of(messages: list[dict], event: str, game_id: str | None = None) -> list[dict]:
    return [m["data"] for m in messages if m["event"] == event and (game_id is None or m["data"]["game_id"] == game_id)]


async def register(api, name: str) -> tuple[str, str]:
    body = (await api.post("/players", json={"name": name})).json()
    return body["player_id"], body["token"]


async def table_with_a_bot(api, token: str) -> str:
    """A two-seat card game: the player first, then a bot (which deals it)."""
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    return game_id


async def awaited_at(app, game_id: str, seat: int) -> list[int]:
    """The reference, from the game's own log: the versions (ends of a command's batch) at which ``seat``'s playing
    moves went from none to some."""
    meta = await app.ctx.store.meta(game_id)
    game = Game.recorded(meta["kind"], game_id, meta["config"], meta["seed"])
    envelopes = await app.ctx.store.read(game_id)
    ends = [e.seq - 1 for e in envelopes[1:] if bytes(e.command) != b"null"] + [envelopes[-1].seq]
    out, was, done = [], False, 0
    for end in ends:
        game.fold(envelopes[done:end])
        done = end
        now = game.rules.status_of(game.state) == "playing" and bool(playing_on(game.rules.legal_commands(game.state, seat)))
        if now and not was:
            out.append(end)
        was = now
    return out


@pytest.fixture(params=["embedded", "redis"])
async def bots_api(request, tmp_path):
    settings = make_settings(request.param, tmp_path, bot_delay_ms=20, runner_interval_ms=20)
    app = fresh_app(settings)
    async with serving(app) as client:
        client.app = app
        yield client
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_seats_turns_and_ends_across_games_then_a_resume_gets_exactly_what_was_missed(bots_api):
    """Ann sits at two tables with bots while her stream is open: it says she is seated at both, that a move awaits
    her at each (her seat's playing moves are some at that version), and, once she resigns each, game_over with the
    result and where the rating change is read. Bob's table never shows in it. A reconnect with ``Last-Event-ID``
    gets exactly the events after that id, including those written while it was away."""
    api = bots_api
    ann, ann_token = await register(api, "Ann")
    _, bob_token = await register(api, "Bob")
    games: list[str] = []

    def turned(messages: list[dict]) -> bool:
        return len(games) == 2 and all(of(messages, "turn", g) for g in games)

    reading = asyncio.create_task(read_player(api, ann_token, turned))
    await asyncio.sleep(0.2)
    games += [await table_with_a_bot(api, ann_token), await table_with_a_bot(api, ann_token)]
    bobs = await table_with_a_bot(api, bob_token)
    messages = await reading
    for g in games:
        assert of(messages, "seated", g) == [{"type": "seated", "game_id": g, "seat": 0, "kind": "free-parking"}]
        turn = of(messages, "turn", g)[0]
        assert turn["seat"] == 0 and turn["version"] >= 1
        log = (await api.get(f"/games/{g}/events", params={"limit": 5000})).json()["events"]
        assert turn["version"] <= log[-1]["seq"]
    for g in games:
        r = await api.post(f"/games/{g}/commands", json={"type": "resign"}, headers=bearer(ann_token))
        assert r.status_code == 200, r.text

    def over(ms: list[dict]) -> bool:
        return all(of(ms, "game_over", g) for g in games)

    everything = await read_player(api, ann_token, over)
    assert everything[: len(messages)] == messages  # from the oldest kept: the same ids, the same order
    for g in games:
        end = of(everything, "game_over", g)[0]
        assert end["result"] == {"ended_by": "game_won", "winner_seat": 1, "won": False}
        assert end["rated"] is True and end["ratings"] == f"/games/{g}/ratings"
        assert [t["version"] for t in of(everything, "turn", g)] == await awaited_at(api.app, g, 0)
    assert {m["data"]["game_id"] for m in everything} == set(games)  # nothing of Bob's table
    assert bobs not in json.dumps(everything)
    assert all(set(m["data"]) <= FIELDS and m["event"] == m["data"]["type"] for m in everything)  # no hand, no card

    mark = everything[1]["id"]
    third = await table_with_a_bot(api, ann_token)  # while no stream is open
    resumed = await read_player(api, ann_token, lambda ms: bool(of(ms, "seated", third)), headers={"last-event-id": mark})
    assert resumed[: len(everything) - 2] == everything[2:]
    assert of(resumed, "seated", third)[0]["seat"] == 0
    ids = [m["id"] for m in resumed]
    assert len(set(ids)) == len(ids) and mark not in ids


async def test_notify_reaches_the_player_and_only_them(bots_api):
    """``notify`` (the queue's way in): the event arrives on the named player's open stream, with its type as the
    event name, and not on another player's."""
    api = bots_api
    ann, ann_token = await register(api, "Ann")
    bob, bob_token = await register(api, "Bob")
    reading = asyncio.create_task(read_player(api, ann_token, lambda ms: bool(of(ms, "queue"))))
    await asyncio.sleep(0.2)
    await notify(api.app.ctx.store, ann, {"type": "queue", "status": "waiting"})
    messages = await reading
    assert [(m["event"], m["data"]) for m in messages] == [("queue", {"type": "queue", "status": "waiting"})]
    await notify(api.app.ctx.store, bob, {"type": "queue", "status": "matched"})
    bobs = await read_player(api, bob_token, lambda ms: bool(ms))
    assert bobs[0]["data"]["status"] == "matched"
    with pytest.raises(ValueError):
        await notify(api.app.ctx.store, ann, {"status": "no type"})


async def test_who_may_open_it(api):
    """A registered player's token only: none, or a guest's, is 401 in the error shape; HEAD is 405 as on the other
    streamed routes; a Last-Event-ID that is not an event id is 400."""
    assert_error(await api.get("/players/me/stream"), 401, "unauthorized")
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    guest = (await api.post(f"/games/{game_id}/seats", json={"name": "Gus"})).json()["token"]
    assert_error(await api.get("/players/me/stream", headers=bearer(guest)), 401, "unauthorized")
    _, token = await register(api, "Ann")
    assert (await api.head("/players/me/stream", headers=bearer(token))).status_code == 405
    assert_error(await api.get("/players/me/stream", headers={**bearer(token), "last-event-id": "7"}), 400, "invalid_request")


async def test_two_workers_one_redis_a_write_on_one_reaches_a_stream_on_the_other(tmp_path):
    """Two services on one Redis namespace, as two workers: the stream open on the first hears of a seat taken and
    a notify made through the second at once (its players' feed), and both serve the same ids."""
    config = make_settings("redis", tmp_path, bot_delay_ms=20, runner_interval_ms=20)
    apps = [fresh_app(config), fresh_app(config)]
    try:
        async with serving(apps[0]) as one, serving(apps[1]) as two:
            ann, token = await register(one, "Ann")
            reading = asyncio.create_task(read_player(one, token, lambda ms: bool(of(ms, "queue"))))
            feed = apps[0].ctx.games.players

            async def following() -> bool:
                return ann in feed._by_player and feed.reading

            await wait_for(following, 10)
            game_id = await table_with_a_bot(two, token)
            await notify(apps[1].ctx.store, ann, {"type": "queue", "status": "matched", "game_id": game_id})
            messages = await reading
            assert of(messages, "seated", game_id) and of(messages, "queue")[0]["status"] == "matched"
            again = await read_player(two, token, lambda ms: len(ms) >= len(messages))
            assert [m["id"] for m in again[: len(messages)]] == [m["id"] for m in messages]
    finally:
        await drop_namespace_at(config.redis_url, config.namespace)


IDLE = count("FREE_PARKING_LOAD_PLAYER_STREAMS", 200, 500)


async def test_hundreds_of_idle_player_streams_hold_no_store_connection(tmp_path):
    """``IDLE`` players each open their stream on one worker (plain sockets: an HTTP client per stream would be the
    test's own bottleneck) and wait: the store's pool lends none of them a connection (a few at most, the worker's
    own background reads), the one players' feed reads for them all, and an event for one still reaches it."""
    config = make_settings("redis", tmp_path)
    app = fresh_app(config)
    try:
        async with serving(app) as api:
            players = [await register(api, f"P{n}") for n in range(IDLE)]
            port = int(str(api.base_url).rsplit(":", 1)[1].strip("/"))
            sockets = []
            for _, token in players:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(f"GET /players/me/stream HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
                assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
                sockets.append((reader, writer))
            feed, pool = app.ctx.games.players, app.ctx.store.r.connection_pool

            async def all_idle() -> bool:
                following = sum(w.streams for w in feed._by_player.values())
                return following == IDLE and feed.reading and len(pool._in_use_connections) <= 4

            await wait_for(all_idle, 30)
            first, token = players[0]
            await notify(app.ctx.store, first, {"type": "queue", "status": "waiting"})
            reader, _ = sockets[0]
            got = b""
            while b"event: queue" not in got:
                got += await asyncio.wait_for(reader.read(1 << 16), 10)
            for _, writer in sockets:
                writer.close()
    finally:
        await drop_namespace_at(config.redis_url, config.namespace)


async def test_a_game_on_a_chosen_seed_ends_unrated(bots_api):
    """A game dealt from a seed the admin chose is not rated (RULES.md §4): its game_over says so, and
    GET /games/{id}/ratings, where the change would be read, agrees once the projector has been there."""
    api = bots_api
    _, token = await register(api, "Ann")
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": "5e" * 32},
                              headers={"authorization": "Bearer " + api.app.ctx.settings.admin_token})).json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    await read_player(api, token, lambda ms: bool(of(ms, "turn", game_id)))
    assert (await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(token))).status_code == 200
    end = of(await read_player(api, token, lambda ms: bool(of(ms, "game_over", game_id))), "game_over", game_id)[0]
    assert end["rated"] is False and end["result"]["won"] is False
    assert (await api.get(end["ratings"])).json()["rated"] is False
