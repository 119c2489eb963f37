"""Live reads (issue 7): the events of a game as Server-Sent Events, a seat's own export, and the replay viewer's
table after event N.

- ``GET /games/{id}/events/stream``: every event once, in order, each with its seq as ``id``, redacted for the
  caller as ``GET /games/{id}/events`` redacts it; a reconnect with ``Last-Event-ID`` (or ``?after``) resumes with no
  gap and no repeat; the stream ends after a finished game's last event; errors before it starts in the one shape.
- ``GET /games/{id}/export?as=<seat>``: the log as that seat saw it, which verifies against the full log's chain.
- ``GET /games/{id}/replay?at=N``: the kind's view folded to N with every hand shown, and event N's audit line.
"""

from __future__ import annotations

import asyncio
import json
import time

import msgspec
import pytest

from replays.verify import verify
from service.events.envelope import has_secret, redacted
from service.events.export import dumps, load
from service.rules.engine import Game, rules_for
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, drive, find_seed, holds, seeded_game, view
from tests.api.test_privacy import assert_private, truth
from tests.http import serving
from tests.stores import drop_namespace_at

SEED = find_seed(holds("M"), seats=3)


# --- reading a stream ---------------------------------------------------------------------------------------


async def read_stream(api, game_id: str, headers: dict | None = None, *, params: dict | None = None, stop_after: int | None = None,
                      timeout: float = 60) -> tuple[list[dict], list[str]]:
    """The messages of one stream, until it ends (or after ``stop_after`` events): ``[{"id", "event", "data",
    "receipt"}]`` (``data`` the envelope, ``receipt`` the one it carried), and the comment lines seen."""
    messages: list[dict] = []
    comments: list[str] = []

    async def read() -> None:
        async with api.stream("GET", f"/games/{game_id}/events/stream", headers=headers or {}, params=params or {}) as r:
            assert r.status_code == 200, (await r.aread()).decode()
            assert r.headers["content-type"].startswith("text/event-stream"), r.headers["content-type"]
            message: dict = {}
            async for line in r.aiter_lines():
                if line.startswith(":"):
                    comments.append(line)
                elif line == "":
                    if message:
                        if "data" in message:
                            message["data"] = json.loads(message["data"])
                            if isinstance(message["data"], dict) and "receipt" in message["data"]:  # test_evidence.py
                                message["receipt"] = message["data"].pop("receipt")  # the rest is the envelope
                        messages.append(message)
                        message = {}
                        if stop_after is not None and sum("id" in m for m in messages) >= stop_after:
                            return
                else:
                    field, _, value = line.partition(":")
                    message[field] = value.removeprefix(" ")

    await asyncio.wait_for(read(), timeout)
    return messages, comments


def events_of(messages: list[dict]) -> list[dict]:
    return [m for m in messages if "id" in m]


async def admin_log(api, game_id: str) -> list[dict]:
    r = await api.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()["events"]


def without_secret(env: dict) -> dict:
    return {**env, "secret": None}


async def bot_game(api) -> str:
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2})
    assert r.status_code == 201, r.text
    return r.json()["game_id"]


async def seat_bots(api, game_id: str) -> None:
    for name in ("greedy", "random"):
        r = await api.post(f"/games/{game_id}/seats", json={"bot": name})
        assert r.status_code == 201, r.text


async def finished(api, game_id: str, within: float = 120) -> None:
    deadline = time.monotonic() + within
    while (await api.get(f"/games/{game_id}")).json()["status"] != "finished":
        assert time.monotonic() < deadline, f"{game_id} did not finish"
        await asyncio.sleep(0.05)


# --- the stream ---------------------------------------------------------------------------------------------


@pytest.fixture
async def bots_api(store_kind, tmp_path):
    """``api`` with bots that think 20 ms a move: a stream can keep up with them, as with people."""
    settings = make_settings(store_kind, tmp_path, bot_delay_ms=20, runner_interval_ms=20)
    app = fresh_app(settings)
    async with serving(app) as client:
        client.app = app
        yield client
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_a_bot_game_streams_every_event_once_in_order_then_ends(bots_api):
    """A spectator opens the stream before the game is dealt; two bots play it out; every event arrives once, in
    seq order, with its seq as id and its type as event name, its data the envelope /events gives — secrets withheld
    while the game was on (only what was read after the last command, when the game was over, shows them, as
    /events then does); then one ``end`` message and the stream closes."""
    api = bots_api
    game_id = await bot_game(api)
    reading = asyncio.create_task(read_stream(api, game_id, timeout=120))
    await asyncio.sleep(0.3)  # the stream is open and waiting before anything happens
    await seat_bots(api, game_id)
    messages, _ = await reading
    log = await admin_log(api, game_id)
    events = events_of(messages)
    assert [int(m["id"]) for m in events] == list(range(1, len(log) + 1))
    assert [m["event"] for m in events] == [e["type"] for e in log]
    assert [m["data"]["hash"] for m in events] == [e["hash"] for e in log]
    last_command = max(e["seq"] for e in log if e["command"] is not None)  # the batch that ended the game
    for m, full in zip(events, log, strict=True):
        if full["seq"] < last_command:
            assert m["data"] == without_secret(full), f"seq {full['seq']}: not redacted for a spectator"
        else:
            assert m["data"] in (full, without_secret(full))
    assert any(e["secret"] is not None for e in log)  # there was something to withhold
    assert messages[-1] == {"event": "end", "data": {"version": len(log)}}


async def test_a_spectator_stream_of_a_game_in_play_holds_no_secret(api):
    """Events sent while the game is on are redacted exactly as /events redacts them for a spectator: ``secret:
    null``; and no hand, deck order or seed shows anywhere in the stream."""
    game_id, tokens = await seeded_game(api, 3, SEED)
    await drive(api.app, game_id, until=lambda g: g.version >= 40)
    t = await truth(api, game_id)
    seats = {(await view(api, game_id, token))["seat"]: token for token in tokens}  # places may have been traded
    for who, headers in ((None, {}), (1, bearer(seats[1]))):
        messages, _ = await read_stream(api, game_id, headers, stop_after=40)
        r = await api.get(f"/games/{game_id}/events", params={"limit": 40}, headers=headers)
        assert [m["data"] for m in events_of(messages)] == r.json()["events"]
        assert all(m["data"]["secret"] is None for m in events_of(messages))
        body = json.dumps([m["data"] for m in messages], separators=(",", ":")).encode()
        assert_private(body, t, who, f"the stream of {'a spectator' if who is None else f'seat {who}'}")


async def test_the_stream_follows_a_game_as_it_is_played(api):
    """Open on a game in play, the stream delivers each command's events as they are appended (this worker's
    appends wake it), then the rest to the end."""
    game_id, _ = await seeded_game(api, 3, SEED)
    reading = asyncio.create_task(read_stream(api, game_id, timeout=120))
    await asyncio.sleep(0.3)
    await drive(api.app, game_id)
    messages, _ = await reading
    log = await admin_log(api, game_id)
    assert [int(m["id"]) for m in events_of(messages)] == [e["seq"] for e in log]
    assert messages[-1]["event"] == "end"


@pytest.mark.parametrize("store_kind", ["redis", "cluster"], indirect=True)
async def test_a_stream_on_one_worker_follows_the_appends_of_another(store_kind, tmp_path):
    """Two workers on one store, as ``--workers 2`` runs them: a stream served by the first follows a game another
    worker plays, woken by the first worker's change feed (one reader of the partition logs for all its watches)
    rather than by its safety poll — and gets every event once, in order, then the end."""
    settings = make_settings(store_kind, tmp_path, runner=False, projector=False)
    serving_app, playing_app = fresh_app(settings), fresh_app(settings)
    try:
        async with serving(serving_app) as api, serving(playing_app) as other:
            other.app = playing_app
            game_id, _ = await seeded_game(other, 3, SEED)
            woken: list[str] = []
            watches = serving_app.ctx.games.watches
            wake = watches.wake
            watches.wake = lambda g: (woken.append(g), wake(g))[1]
            watches.feed.wake = watches.wake
            reading = asyncio.create_task(read_stream(api, game_id, timeout=120))
            deadline = time.monotonic() + 30
            while not watches.feed.reading:  # the stream is open and its worker reads the logs
                assert time.monotonic() < deadline and not reading.done(), "the stream's worker never read the logs"
                await asyncio.sleep(0.01)
            await drive(playing_app, game_id)
            messages, _ = await reading
            log = await admin_log(other, game_id)
            assert [int(m["id"]) for m in events_of(messages)] == [e["seq"] for e in log]
            assert messages[-1]["event"] == "end" and game_id in woken
    finally:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_a_reconnect_resumes_after_last_event_id_without_gap_or_repeat(api):
    game_id = await bot_game(api)
    await seat_bots(api, game_id)
    first, _ = await read_stream(api, game_id, stop_after=7)
    assert [int(m["id"]) for m in events_of(first)] == list(range(1, 8))
    # the reconnect EventSource makes: the same URL, with the last id it saw as Last-Event-ID (which wins over ?after)
    rest, _ = await read_stream(api, game_id, {"last-event-id": first[-1]["id"]}, params={"after": 2}, timeout=120)
    ids = [int(m["id"]) for m in events_of(first) + events_of(rest)]
    await finished(api, game_id)
    log = await admin_log(api, game_id)
    assert ids == list(range(1, len(log) + 1))
    # and ?after alone, as /events takes it
    tail, _ = await read_stream(api, game_id, params={"after": len(log) - 3})
    assert [int(m["id"]) for m in events_of(tail)] == [len(log) - 2, len(log) - 1, len(log)]
    # once the game is over, every secret is shown to anyone, as /events shows it
    assert [m["data"] for m in events_of(tail)] == log[-3:]
    # past the end of a finished game there is nothing more to say: 204 stops an EventSource from reconnecting
    r = await api.get(f"/games/{game_id}/events/stream", headers={"last-event-id": str(len(log))})
    assert r.status_code == 204 and r.content == b""


async def test_a_quiet_stream_is_kept_alive_with_comments(api, monkeypatch):
    from service.api import live

    monkeypatch.setattr(live, "PING_SECONDS", 0.3)
    game_id, _ = await seeded_game(api, 3, SEED)
    version = len(await admin_log(api, game_id))
    messages: list[str] = []

    async def read() -> None:
        async with api.stream("GET", f"/games/{game_id}/events/stream", params={"after": version}) as r:
            async for line in r.aiter_lines():
                messages.append(line)
                if line == ": ping" and messages.count(line) >= 2:
                    return

    await asyncio.wait_for(read(), 10)
    assert not any(line.startswith("id:") for line in messages)


async def test_stream_errors_come_before_the_stream_in_the_one_shape(api):
    assert_error(await api.get("/games/g_nope/events/stream"), 404, "not_found")
    game_id, _ = await seeded_game(api, 3, SEED)
    assert_error(await api.get(f"/games/{game_id}/events/stream", headers=bearer("fpt_not-a-token")), 401, "unauthorized")
    for bad in ("x", "-1", "1.5", "99999999999999999999"):
        assert_error(await api.get(f"/games/{game_id}/events/stream", headers={"last-event-id": bad}), 400, "invalid_request")
        assert_error(await api.get(f"/games/{game_id}/events/stream", params={"after": bad}), 400, "invalid_request")


async def test_the_stream_is_in_the_openapi_document(api):
    doc = (await api.get("/openapi.json")).json()
    op = doc["paths"]["/games/{game_id}/events/stream"]["get"]
    assert "text/event-stream" in op["responses"]["200"]["content"]
    assert {"after", "Last-Event-ID"} <= {p["name"] for p in op["parameters"]}
    assert {"400", "401", "404"} <= set(op["responses"])


# --- a seat's export ----------------------------------------------------------------------------------------


async def export_of(api, game_id: str, headers: dict | None = None, **params):
    r = await api.get(f"/games/{game_id}/export", params=params, headers=headers or {})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    return r.content


def own_draws(envelopes, seat: int) -> list[int]:
    """The seqs whose whole secret ``seat`` was shown: the cards drawn into its own hand."""
    return [e.seq for e in envelopes if e.type == "cards_drawn" and msgspec.json.decode(e.public)["seat"] == seat]


async def test_a_seats_export_while_the_game_is_on_is_its_own_and_verifies_the_chain(api):
    game_id, tokens = await seeded_game(api, 3, SEED)
    await drive(api.app, game_id, until=lambda g: g.version >= 30)
    t = await truth(api, game_id)
    full = load(await export_of(api, game_id, ADMIN_HEADERS))
    tokens = {(await view(api, game_id, token))["seat"]: token for token in tokens}  # places may have been traded
    for seat in range(3):
        for headers in (bearer(tokens[seat]), ADMIN_HEADERS):
            body = await export_of(api, game_id, headers, **{"as": seat})
            header, envelopes = load(body)
            assert_private(dumps(header, [redacted(e) for e in envelopes]), t, seat, f"seat {seat}'s export")
            assert header.viewer == f"seat {seat}" and header.seed is None
            assert [e.seq for e in envelopes if has_secret(e)] == own_draws(full[1], seat)
            assert all(e.secret == f.secret for e, f in zip(envelopes, full[1], strict=True) if has_secret(e))
            assert [(e.seq, e.hash, e.prev_hash) for e in envelopes] == [(e.seq, e.hash, e.prev_hash) for e in full[1]]
            verdict = verify(header, envelopes)
            assert verdict.ok, verdict.summary()
            assert not verdict.redecided  # no seed yet: the chain and the digests' places only
        for other in range(3):
            if other != seat:
                r = await api.get(f"/games/{game_id}/export", params={"as": other}, headers=bearer(tokens[seat]))
                assert_error(r, 403, "forbidden")
    assert_error(await api.get(f"/games/{game_id}/export", params={"as": 0}), 403, "forbidden")
    assert_error(await api.get(f"/games/{game_id}/export", params={"as": 0}, headers=bearer("fpt_nope")), 401)
    for bad in ("3", "-1", "x", ""):
        assert_error(await api.get(f"/games/{game_id}/export", params={"as": bad}, headers=ADMIN_HEADERS), 400, "invalid_request")
    assert_error(await api.get("/games/g_nope/export", params={"as": 0}, headers=ADMIN_HEADERS), 404, "not_found")


async def test_a_finished_games_seat_export_is_anyones_and_verifies_against_the_full_log(api):
    game_id, _ = await seeded_game(api, 3, SEED)
    await drive(api.app, game_id)
    full_header, full = load(await export_of(api, game_id))
    assert verify(full_header, full).ok
    for seat in range(3):
        header, envelopes = load(await export_of(api, game_id, **{"as": seat}))
        assert header.viewer == f"seat {seat}"
        assert header.seed == full_header.seed and (header.version, header.head) == (full_header.version, full_header.head)
        assert [(e.seq, e.hash) for e in envelopes] == [(e.seq, e.hash) for e in full]
        assert [e.seq for e in envelopes if has_secret(e)] == own_draws(full, seat)  # only what the seat was shown
        assert any(e.secret_digest for e in envelopes)
        verdict = verify(header, envelopes, commitment=full_header.seed_commitment)
        assert verdict.ok and verdict.redecided, verdict.summary()  # the seed re-derives every withheld secret
        assert verdict.secrets_checked == sum(e.secret_digest is not None for e in full) and not verdict.secrets_unchecked


# --- the replay viewer --------------------------------------------------------------------------------------


def folded_view(header, envelopes, at: int) -> dict:
    rules = rules_for(header.kind)
    game = Game.new(header.kind, header.game_id, msgspec.json.decode(header.config, type=rules.CONFIG), bytes.fromhex(header.seed))
    game.fold(envelopes[:at])
    return json.loads(msgspec.json.encode(game.view(None, reveal=True)))


async def test_replay_at_n_is_the_game_folded_to_n_with_every_hand_shown(api):
    game_id, _ = await seeded_game(api, 3, SEED)
    await drive(api.app, game_id)
    header, envelopes = load(await export_of(api, game_id))
    audit = (await api.get(f"/games/{game_id}/audit")).text.splitlines()
    version = len(envelopes)
    for at in (0, 1, 4, version // 2, version - 1, version):
        r = await api.get(f"/games/{game_id}/replay", params={"at": at})
        assert r.status_code == 200, r.text
        answer = r.json()
        assert {k: answer[k] for k in ("game_id", "kind", "at", "version")} == {"game_id": game_id, "kind": "free-parking", "at": at, "version": version}
        assert answer["view"] == folded_view(header, envelopes, at)
        assert answer["head"] == (envelopes[at - 1].hash if at else "0" * 64)
        assert "lines" not in answer
        if at:
            assert answer["event"] == {"seq": at, "type": envelopes[at - 1].type, "line": audit[at - 1]}
        else:
            assert answer["event"] is None
    r = await api.get(f"/games/{game_id}/replay", params={"at": 3, "lines": 1})
    assert r.json()["lines"] == audit and r.json()["at"] == 3
    latest = (await api.get(f"/games/{game_id}/replay")).json()  # no ?at: the end
    assert latest["at"] == version and latest["view"]["status"] == "finished"


async def test_replay_is_refused_while_the_game_is_on_except_to_the_admin(api):
    game_id, tokens = await seeded_game(api, 3, SEED)
    await drive(api.app, game_id, until=lambda g: g.version >= 20)
    for headers in ({}, bearer(tokens[0])):
        assert_error(await api.get(f"/games/{game_id}/replay", params={"at": 5}, headers=headers), 403, "forbidden")
    r = await api.get(f"/games/{game_id}/replay", params={"at": 5, "lines": 1}, headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.json()["at"] == 5 and len(r.json()["lines"]) == r.json()["version"]
    version = r.json()["version"]
    for bad in (-1, version + 1, "x", "", "1.0"):
        assert_error(await api.get(f"/games/{game_id}/replay", params={"at": bad}, headers=ADMIN_HEADERS), 400, "invalid_request")
    for bad in (2, "x", ""):
        assert_error(await api.get(f"/games/{game_id}/replay", params={"lines": bad}, headers=ADMIN_HEADERS), 400, "invalid_request")
    assert_error(await api.get("/games/g_nope/replay", params={"at": 0}, headers=ADMIN_HEADERS), 404, "not_found")


@pytest.mark.parametrize("live_kind", ["embedded"])
async def test_the_stream_over_a_real_server_process(live):
    """The same through ``python -m service``: a bot game from a reconnecting reader's point of view."""
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2})
    game_id = r.json()["game_id"]
    await seat_bots(live, game_id)
    first, _ = await read_stream(live, game_id, stop_after=5)
    rest, _ = await read_stream(live, game_id, {"last-event-id": "5"}, timeout=120)
    log = await admin_log(live, game_id)
    assert [int(m["id"]) for m in events_of(first) + events_of(rest)] == list(range(1, len(log) + 1))
    assert rest[-1]["event"] == "end"
