"""``GET /players/me/stream``: a registered player's own events across all their games, as Server-Sent Events.

One message per event of the player's store stream (``player_events.py``)::

    id: <the stream entry's id, e.g. 1733356800000-0>
    event: <seated | turn | game_over | queue>
    data: <the event's JSON>

It starts after ``Last-Event-ID`` (a reconnect), else ``?after=`` (default: from the oldest event kept), so a
reconnect misses nothing kept and repeats nothing. A waiting stream holds no store connection: the worker's one
``PlayerFeed`` wakes it when another worker writes for this player, and this worker's own writes wake it at once.
A comment line (``: ping``) every ``PING_SECONDS`` keeps it open; each ping also reads the player's stream once, in
case a wake was missed. The stream never ends on its own.
"""

from __future__ import annotations

import asyncio
import logging
import re

from sanic import Blueprint, HTTPResponse, Request

from . import metrics, player_events
from .errors import ApiError
from .live import PING_SECONDS
from .openapi import doc, streamed
from .routes import _caller, _games

bp = Blueprint("player_stream")
log = logging.getLogger("free_parking")

BATCH = 200
ENTRY_ID = "[0-9]{1,18}-[0-9]{1,18}"
PLAYER_EVENT = {
    "type": "object",
    "description": "One message of the player's stream: `id` the event's position (resume after it with Last-Event-ID), "
    "`event` its type (seated, turn, game_over, queue), `data` its JSON (docs/player-stream.md).",
    "properties": {"id": {"type": "string", "pattern": f"^{ENTRY_ID}$"}, "event": {"type": "string"},
                   "data": {"type": "string", "contentMediaType": "application/json"}},
    "required": ["id", "event", "data"],
}


def _resume_after(request: Request) -> str:
    """``Last-Event-ID`` if sent, else ``?after``, else ``0-0`` (from the oldest kept): an entry id either way."""
    header = request.headers.get("last-event-id")
    given = header.strip() if header is not None else request.args.get("after")
    if given is None:
        return "0-0"
    if not re.fullmatch(ENTRY_ID, given):
        raise ApiError(400, "invalid_request", "Last-Event-ID (or ?after) must be the id of the last event you have, "
                       "like 1733356800000-0", after=given)
    return given


@bp.get("/players/me/stream")
@doc("get", "/players/me/stream", "What the calling player must act on across all their games, as Server-Sent Events",
     answers={200: PLAYER_EVENT}, errors=(400, 401, 503), content_type="text/event-stream", auth="required",
     query={"after": ({"type": "string", "pattern": f"^{ENTRY_ID}$"}, "the id of the last event you have (default: "
                      "from the oldest kept); Last-Event-ID wins when both are sent")},
     headers={"Last-Event-ID": ({"type": "string", "pattern": f"^{ENTRY_ID}$"}, "the id of the last event you have: "
                                "a reconnect resumes after it")})
@streamed
async def player_stream(request: Request) -> HTTPResponse | None:
    """A registered player's token only (a guest's token or none: 401). Events: `seated` {game_id, seat, kind},
    `turn` {game_id, seat, version, deadline_at}, `game_over` {game_id, seat, version, result, rated, ratings},
    `queue` {status, ...}. Resumes after `Last-Event-ID` (or `?after`) with nothing repeated; `: ping` comments
    keep it open."""
    who = await _caller(request)
    if who.player_id is None or who.guest_of is not None:
        raise ApiError(401, "unauthorized", "This needs a registered player's token")
    after = _resume_after(request)
    store, feed = request.app.ctx.store, _games(request).players
    first = await player_events.read(store, who.player_id, after, BATCH)  # a store away is 503 before the stream starts
    loop = asyncio.get_running_loop()
    ping_every = min(PING_SECONDS, float(request.app.config.RESPONSE_TIMEOUT) / 2)
    response = await request.respond(
        content_type="text/event-stream; charset=utf-8", headers={"cache-control": "no-cache", "x-accel-buffering": "no"}
    )
    await response.send(b": events of player %s after %s\n\n" % (who.player_id.encode(), after.encode()))
    last_sent = loop.time()
    async with feed.follow(who.player_id) as watch, metrics.open_stream():
        batch: list[tuple[str, bytes, bytes]] | None = first
        while True:
            if batch is None:
                try:
                    batch = await player_events.read(store, who.player_id, after, BATCH)
                except Exception:  # the store went away: end; the client resumes from its Last-Event-ID
                    log.warning("player stream of %s ended early", who.player_id, exc_info=True)
                    break
            if batch:
                await response.send(b"".join(b"id: %s\nevent: %s\ndata: %s\n\n" % (i.encode(), t, e) for i, t, e in batch))
                after, last_sent, batch = batch[-1][0], loop.time(), None
                continue
            wait = max(0.0, ping_every - (loop.time() - last_sent))
            await watch.changed(wait if feed.reading else min(wait, player_events.POLL_SECONDS))
            batch = None
            if loop.time() - last_sent >= ping_every:
                await response.send(b": ping\n\n")
                last_sent = loop.time()
    await response.eof()
    return None

