"""The play-now queue's routes (docs/queue.md): join it, read where you stand, leave it. The matcher seats players
(``matchmaker.py``); these only write the player's entry and read what became of it."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from sanic import Blueprint, HTTPResponse, Request

from service.rules.matching import gap

from .auth import Caller, new_id, require
from .bot_budget import BUCKET_META, bots_meta
from .errors import ApiError
from .games import now_ms
from .kinds import KINDS, config_for, default_seats
from .matchmaker import SEATING_LOST_MS, Entry, Status, decode_entry, decode_status, encode
from .openapi import doc, extend
from .player_events import tell_queue
from .routes import _answer, _caller, _decode
from .schemas import ClientSeed, PublicKeyHex, Request as Body
from .signed import registered_key, sound_key

bp = Blueprint("queue")
QUEUE_KINDS = sorted(k for k in KINDS if KINDS[k].seats[1] > 1 and KINDS[k].bots)
"""The kinds with a queue: tables of several seats, with bots to fill them (solitaire: one seat, no table to share)."""
QUEUE_SEATS = (min(KINDS[k].seats[0] for k in QUEUE_KINDS), max(KINDS[k].seats[1] for k in QUEUE_KINDS))


def _queue_options() -> dict[str, Any]:
    kinds = [KINDS[k].options_ref() for k in QUEUE_KINDS]
    return kinds[0] if len(kinds) == 1 else {"anyOf": kinds}


class JoinQueue(Body):
    """Play now: a seat at a new game of ``kind`` with players of close rating, or with bots after the fill wait."""

    kind: Annotated[str, msgspec.Meta(extra_json_schema={"enum": QUEUE_KINDS})]
    seats: Annotated[int, msgspec.Meta(ge=QUEUE_SEATS[0], le=QUEUE_SEATS[1])] | msgspec.UnsetType = msgspec.UNSET
    options: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=_queue_options())] = {}
    client_seed: ClientSeed | None = None  # used as joining a seat uses it (docs/rng.md)
    public_key: PublicKeyHex | None = None  # the seat is keyed with it (else the key the player registered, if any)


class Queued(msgspec.Struct):
    queue_id: str
    since: int


class QueueStatus(msgspec.Struct, omit_defaults=True):
    """``waiting`` (with ``since``, ``gap`` — the rating gap allowed now — and ``fill_at``, when bots fill the table),
    ``seating`` (a table was made: its ``game_id``, seats being taken), ``seated`` (``game_id``, ``seat`` and ``token``:
    your own player token is the seat's), ``cancelled`` (``reason``; queue again) or ``none``."""

    state: str
    queue_id: str | None = None
    kind: str | None = None
    seats: int | None = None
    since: int | None = None
    gap: float | None = None
    fill_at: int | None = None
    game_id: str | None = None
    seat: int | None = None
    token: str | None = None
    reason: str | None = None


class Left(msgspec.Struct):
    left: bool


def _player(who: Caller) -> Caller:
    require(who)
    if who.player_id is None or who.guest_of is not None:
        raise ApiError(403, "forbidden", "Only a registered player may queue: register with POST /players")
    return who


extend(JoinQueue, {"anyOf": [{"properties": {
    "kind": {"enum": [k]}, "seats": {"type": "integer", "minimum": KINDS[k].seats[0], "maximum": KINDS[k].seats[1]},
    "options": KINDS[k].options_ref()}} for k in QUEUE_KINDS]})
"""As ``CreateGame``'s: each kind tied to its own seats and options, for clients (and fuzzers) reading the document."""


@bp.post("/queue")
@doc("post", "/queue", "Play now: queue for a new game", body=JoinQueue, answers={202: Queued},
     errors=(400, 401, 403, 409, 413, 429, 503), auth="required")
async def join_queue(request: Request) -> HTTPResponse:
    """The player waits for a table of `kind` with players of close rating; after the fill wait bots of about their
    rating take the free seats. One queue at a time: 409 `already_queued` while waiting. Solitaire has no queue.
    Each queueing is charged to the seats limit, as a join is (docs/limits.md)."""
    body = _decode(request, JoinQueue)
    who = _player(await _caller(request))
    kind = KINDS.get(body.kind)
    if kind is not None and body.kind not in QUEUE_KINDS:
        raise ApiError(400, "invalid_request", f"{body.kind} has no queue: start one with POST /games", kind=body.kind)
    seats = body.seats if body.seats is not msgspec.UNSET else default_seats(kind) if kind else 0
    config_for(body.kind, seats, body.options)  # a bad kind, seats or options: 400, and nothing queued
    store = request.app.ctx.store
    public_key = sound_key(body.public_key) or await registered_key(store, who)
    _, status = await store.queue_of(who.player_id or "")
    if status is not None and _seating(decode_status(status)):
        raise ApiError(409, "already_queued", "Your table is being made: GET /queue says where you sit in a moment")
    if status is not None and decode_status(status).state == "claimed":  # a lost claim: fenced off before queueing anew
        await _settle_lost(request, who.player_id or "", status, decode_status(status))
        _, status = await store.queue_of(who.player_id or "")
    await request.app.ctx.limiter.charge("seats", request, who)  # a queueing is a seat to come: limited as one
    entry = Entry(queue_id=new_id("q"), player_id=who.player_id or "", name=who.name or "", kind=body.kind, seats=seats,
                  options=body.options, client_seed=body.client_seed, public_key=public_key, since=now_ms(),
                  account=who.account, bots_bucket=bots_meta(request.app.ctx.limiter, request, who).get(BUCKET_META))
    if not await store.queue_join(entry.player_id, encode(entry), status or b""):  # unless a claim came meanwhile
        raise ApiError(409, "already_queued", "You are in the queue already: leave it (DELETE /queue) to queue again")
    await tell_queue(store, entry.player_id, "waiting", kind=entry.kind, since=entry.since)
    return _answer(Queued(entry.queue_id, entry.since), 202)


@bp.get("/queue")
@doc("get", "/queue", "Where you stand in the play-now queue", answers={200: QueueStatus}, errors=(401, 403, 503),
     auth="required")
async def queue_status(request: Request) -> HTTPResponse:
    who = _player(await _caller(request))
    raw_entry, raw_status = await request.app.ctx.store.queue_of(who.player_id or "")
    if raw_entry is not None:
        e = decode_entry(raw_entry)
        fill_ms = request.app.ctx.settings.queue_fill_ms
        return _answer(QueueStatus("waiting", e.queue_id, e.kind, e.seats, e.since, gap(now_ms() - e.since),
                                   e.since + fill_ms))
    if raw_status is None:
        return _answer(QueueStatus("none"))
    st: Status = decode_status(raw_status)
    if st.state == "claimed" and not _seating(st):
        st = await _settle_lost(request, who.player_id or "", raw_status, st)
    if st.state == "seated":
        token = request.headers["authorization"].partition(" ")[2].strip()
        return _answer(QueueStatus("seated", st.queue_id, game_id=st.game_id, seat=st.seat, token=token))
    state = "seating" if st.state == "claimed" else st.state
    return _answer(QueueStatus(state, st.queue_id, game_id=st.game_id, reason=st.reason))


def _seating(st: Status) -> bool:
    """Whether a worker may still be making the player's table: a claim younger than ``SEATING_LOST_MS``. Queueing
    again meanwhile is refused — the table seats the player anyway, and the next pass would seat them at another."""
    return st.state == "claimed" and (st.at is None or now_ms() - st.at <= SEATING_LOST_MS)


async def _settle_lost(request: Request, player_id: str, raw: bytes, st: Status) -> Status:
    """A claim its worker never finished (it stopped between the claim and the last seat — or is stalled there, and
    may wake): the claim is fenced off in the game's slot first (``Store.queue_fence``), so no seat is taken under it
    from now on; then the game says what became of the player — seated there, or not (then the queueing is cancelled:
    queue again). Settled, and said on the player's stream, only if the status is still that claim."""
    store, game_id = request.app.ctx.store, st.game_id or ""
    await store.queue_fence(game_id, st.queue_id)
    seat = None
    if await store.meta(game_id) is not None:
        game = await request.app.ctx.games.fresh(game_id)
        seat = next((i for i, s in enumerate(game.state.seats) if s.player is not None and s.player.player_id == player_id),
                    None)
    settled = (Status(queue_id=st.queue_id, state="seated", game_id=game_id, seat=seat) if seat is not None else
               Status(queue_id=st.queue_id, state="cancelled", game_id=game_id,
                      reason="the table was not finished (the worker making it stopped); queue again"))
    if await store.queue_settle(player_id, raw, encode(settled)):
        if settled.state == "seated":
            await tell_queue(store, player_id, "seated", game_id=game_id, seat=seat)
        else:
            await tell_queue(store, player_id, "cancelled", game_id=game_id, reason=settled.reason)
        return settled
    _, now = await store.queue_of(player_id)
    return decode_status(now) if now is not None else Status(queue_id=st.queue_id, state="cancelled")


@bp.delete("/queue")
@doc("delete", "/queue", "Leave the play-now queue", answers={200: Left}, errors=(401, 403, 503), auth="required")
async def leave_queue(request: Request) -> HTTPResponse:
    """`left` is false when you were not waiting (never queued, or already given a table)."""
    who = _player(await _caller(request))
    store = request.app.ctx.store
    left = await store.queue_leave(who.player_id or "")
    if left:
        await tell_queue(store, who.player_id or "", "left")
    return _answer(Left(left))
