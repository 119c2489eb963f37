"""Live reads: a game's events as Server-Sent Events (``GET /games/{id}/events/stream``).

The stream is ``GET /games/{id}/events`` kept open: the same envelopes, redacted for the caller by the same rule
(everything to the admin, and to anyone once the game is over; ``secret: null`` otherwise), one SSE message each::

    id: <seq>
    event: <type>
    data: <the envelope's JSON, exactly as /events returns it>

It starts after ``Last-Event-ID`` (the header a browser's ``EventSource`` sends when it reconnects), else after
``?after=`` (default 0: from the first event), so a reconnect misses no event and repeats none. The worker's one
watch of the game (``watch.py``) reads its new events for every stream open on it, when this worker or another
appends to it; a waiting stream holds no store connection. A comment line
(``: ping``) every ``PING_SECONDS`` keeps proxies and the server's response timeout from closing a quiet stream.
Once the game is over and its last event sent, one ``event: end`` message (no ``id``; ``data: {"version": N}``)
closes the stream; asking again past the end is ``204 No Content``, which tells an ``EventSource`` to stop
reconnecting.
"""

from __future__ import annotations

import asyncio
import logging
import re

import msgspec
from sanic import Blueprint, HTTPResponse, Request

from service.events.envelope import Envelope, redacted
from service.events.receipt import Receipt

from . import metrics
from .errors import ApiError
from .openapi import REF, component, doc, streamed
from .routes import (
    EVENTS_AFTER,
    _caller,
    _finished,
    refuse_unwatched,
    withheld,
    _games,
    _int_arg,
    _int_query,
)

bp = Blueprint("live")
log = logging.getLogger("free_parking")
_json = msgspec.json.Encoder()

PING_SECONDS = 15.0
BATCH = 500  # events read (and sent) per round trip


def _message(env: Envelope, receipt: Receipt | None) -> bytes:
    """One event's message: its envelope's JSON with the receipt of the version it makes added as ``receipt``."""
    data = _json.encode(env)
    if receipt is not None:
        data = data[:-1] + b',"receipt":' + _json.encode(receipt) + b"}"
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (env.seq, env.type.encode(), data)


def _resume_after(request: Request) -> int:
    """``Last-Event-ID`` when the client sends one (a reconnect), else ``?after`` (checked either way)."""
    after = _int_arg(request, "after", EVENTS_AFTER[2], *EVENTS_AFTER[:2])
    header = request.headers.get("last-event-id")
    if header is None:
        return after
    if not re.fullmatch(LAST_EVENT_ID, header.strip()):
        raise ApiError(400, "invalid_request", "Last-Event-ID must be the seq of the last event you have (a whole number)")
    return int(header)


LAST_EVENT_ID = "[0-9]{1,18}"
SSE_EVENT = {
    "type": "object",
    "description": "One message of the stream, as an EventSource reads it: `event` the event's type, `id` its seq, `data` the "
    "envelope's JSON as GET /games/{game_id}/events gives it (redacted the same way), with `receipt`: the signed receipt of "
    "the version that event makes (docs/fairness.md); the last message of a finished "
    "game is `event: end` with `data: {\"version\": N}`.",
    "properties": {
        "id": {"type": "string", "pattern": f"^{LAST_EVENT_ID}$"},
        "event": {"type": "string"},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": {"anyOf": [{"$ref": REF.format(name="Envelope")},
                                             {"type": "object", "properties": {"version": {"type": "integer"}}, "required": ["version"]}]}},
        "retry": {"type": "integer"},
    },
    "required": ["event", "data"],
}
component(Envelope)


@bp.get("/games/<game_id:str>/events/stream")
@doc("get", "/games/<game_id:str>/events/stream", "The game's events as Server-Sent Events, redacted for the caller",
     answers={200: SSE_EVENT, 204: None}, errors=(400, 401, 403, 404, 503), content_type="text/event-stream",
     query={"after": _int_query(*EVENTS_AFTER, "the last seq you have (default 0); Last-Event-ID wins when both are sent")},
     headers={"Last-Event-ID": ({"type": "string", "pattern": f"^{LAST_EVENT_ID}$"}, "the last seq you have: a reconnect resumes after it")})
@streamed
async def stream(request: Request, game_id: str) -> HTTPResponse | None:
    """One message per event: `id: <seq>`, `event: <type>`, `data: <the envelope as GET /events gives it>`, redacted
    for the caller the same way. Resumes after `Last-Event-ID` (or `?after`), with no event missed or repeated.
    Comment lines (`: ping`) keep a quiet stream open. After a finished game's last event, one `event: end` message
    (no id, `data: {"version": N}`) and the stream closes; a request past the end of a finished game is 204."""
    who = await _caller(request)
    after = _resume_after(request)
    games = _games(request)
    store, receipts = request.app.ctx.store, request.app.ctx.receipts
    game = await games.fresh(game_id)  # 404 (and 503) before the stream starts, in the error shape
    refuse_unwatched(game, who)
    if _finished(game) and after >= game.version:
        return HTTPResponse(status=204)
    loop = asyncio.get_running_loop()
    ping_every = min(PING_SECONDS, float(request.app.config.RESPONSE_TIMEOUT) / 2)
    response = await request.respond(
        content_type="text/event-stream; charset=utf-8", headers={"cache-control": "no-cache", "x-accel-buffering": "no"}
    )
    await response.send(b": events of %s after %d\n\n" % (game_id.encode(), after))  # the headers go out now
    last_sent = loop.time()
    async with games.watches.follow(game_id) as watch, metrics.open_stream():
        while True:
            batch = watch.since(after)
            if batch is None:  # behind what the watch holds: a page from the store (a connection only meanwhile)
                try:
                    batch = await store.read(game_id, after=after, count=min(BATCH, watch.version - after))
                except Exception:  # the store went away mid-stream: end it; the client resumes from its Last-Event-ID
                    log.warning("event stream of %s ended early", game_id, exc_info=True)
                    break
                if not batch:  # the store no longer has what the watch read (Redis lost writes): start again
                    break
            if batch:
                reveal = who.admin or (watch.finished and not withheld(game))  # as GET /events: all once it is over
                signed = (receipts.of(game_id, e.seq, e.hash, e.at) if receipts else None for e in batch)  # once per seq
                await response.send(b"".join(_message(env if reveal else redacted(env), r) for env, r in zip(batch, signed)))
                after, last_sent = batch[-1].seq, loop.time()
                continue
            if watch.failed is not None:
                break
            if watch.finished and after >= watch.version:
                await response.send(b"event: end\ndata: %s\n\n" % _json.encode({"version": watch.version}))
                break
            await watch.changed(after, max(0.0, ping_every - (loop.time() - last_sent)))
            if loop.time() - last_sent >= ping_every:
                await response.send(b": ping\n\n")
                last_sent = loop.time()
    await response.eof()
    return None
