"""A game's record over HTTP: its events, audit lines, move log, scores, export and replay — every route that reads
what happened rather than changes it. Who may see the secrets is decided once, in ``routes._sees_all``."""

from __future__ import annotations

from typing import Any

import msgspec
from sanic import Blueprint, HTTPResponse, Request
from sanic.response import ResponseStream

from service.events.envelope import Envelope, canonical
from service.events.export import ExportHeader, dump
from service.projections import read_audit, read_scores
from service.rules.engine import Game, audit_lines, export_header, log_lines, seat_record

from . import schemas as s
from .errors import ApiError
from .kinds import KINDS
from .openapi import doc, streamed
from .routes import (
    EVENTS_AFTER,
    EVENTS_LIMIT,
    _answer,
    _arg,
    _caller,
    _finished,
    _games,
    _int_arg,
    _int_query,
    _receipt,
    _seat_of,
    _sees_all,
    _shown,
    refuse_unwatched,
    withheld,
)

bp = Blueprint("records")


@bp.get("/games/<game_id:str>/events")
@doc("get", "/games/<game_id:str>/events", "Events after a seq, redacted for the caller", answers={200: s.EventsPage}, errors=(400, 401, 403, 404, 503),
     query={"after": _int_query(*EVENTS_AFTER, "the last seq you have (default 0)"), "limit": _int_query(*EVENTS_LIMIT, "1–5000, default 500")})
async def events(request: Request, game_id: str) -> HTTPResponse:
    who = await _caller(request)
    after = _int_arg(request, "after", EVENTS_AFTER[2], *EVENTS_AFTER[:2])
    limit = _int_arg(request, "limit", EVENTS_LIMIT[2], *EVENTS_LIMIT[:2])
    at, envelopes = await _games(request).events(game_id, after, limit, _shown(who))
    return _answer(s.EventsPage(at.version, at.head, envelopes, _receipt(request, game_id, at.version, at.head, at.at)))


@bp.get("/games/<game_id:str>/audit")
@doc("get", "/games/<game_id:str>/audit", "The audit log: one line per event", answers={200: str}, errors=(401, 403, 404, 503), content_type="text/plain")
async def audit(request: Request, game_id: str) -> HTTPResponse:
    """Public lines come from the audit read model, completed by the events it has not reached yet; a reader who
    may see everything (the admin, anyone once the game is over) gets every hidden part spelled out too."""
    who = await _caller(request)
    store = request.app.ctx.store
    game = await _games(request).fresh(game_id)
    refuse_unwatched(game, who)
    if _sees_all(game, who):
        lines = audit_lines(game.rules, await store.read(game_id), reveal=True)
    else:
        lines, projected = await read_audit(store, game_id)
        lines += audit_lines(game.rules, await store.read(game_id, after=projected))
    body = "".join(line + "\n" for line in lines)
    return HTTPResponse(body, content_type="text/plain; charset=utf-8", headers={"x-version": str(len(lines))})


@bp.get("/games/<game_id:str>/log")
@doc("get", "/games/<game_id:str>/log", "The move log in plain words, players by name, redacted for the caller", answers={200: s.LogPage},
     errors=(400, 401, 403, 404, 503), query={"after": _int_query(*EVENTS_AFTER, "the last seq you have (default 0)")})
async def move_log(request: Request, game_id: str) -> HTTPResponse:
    """One line per event after `after`, oldest first, to the game's `version` (docs/log.md): what each player and
    bot did, named as they sat at that event (a trade of places moves the names), each answer with what it answered
    and each deadline with whom it decided for. Written from the events as GET /events gives them to the caller, and
    from their public parts only: no line ever tells a hidden card. A line carries `notice`, words to the caller,
    where the event did something to the caller's player (their meter set to 0, a card taken, their place traded, a
    trade offer of theirs rejected)."""
    who = await _caller(request)
    after = _int_arg(request, "after", EVENTS_AFTER[2], *EVENTS_AFTER[:2])
    games = _games(request)
    # names are read from the seats taken: the page is written from seq 1, and only its lines after `after` are sent
    at, envelopes = await games.events(game_id, 0, EVENTS_AFTER[1], _shown(who))
    game = await games.load(game_id)
    lines = log_lines(game.rules, envelopes, player_id=who.player_id, after=after)
    return _answer(s.LogPage(at.version, [s.LogLine(seq, when, words, notice) for seq, when, words, notice in lines]))


@bp.get("/games/<game_id:str>/scores")
@doc("get", "/games/<game_id:str>/scores", "The scores read model (it may lag: `version` says how far it reflects)",
     answers={200: s.ScoresAnswer}, errors=(401, 403, 404, 503))
async def scores(request: Request, game_id: str) -> HTTPResponse:
    who = await _caller(request)
    model, version = await read_scores(request.app.ctx.store, game_id)
    meta = await request.app.ctx.store.meta(game_id) or {}
    if model is None or meta.get("seeding") == "duplicate":  # only then the game itself: a read model needs no archive
        refuse_unwatched(await _games(request).load(game_id), who)  # and 404 for a game that does not exist
    return _answer(s.ScoresAnswer(version, model))


MOST_SEATS = max(high for high in (k.seats[1] for k in KINDS.values()))


@bp.get("/games/<game_id:str>/export")
@doc("get", "/games/<game_id:str>/export", "The full log as NDJSON: a header, then every envelope", answers={200: str}, errors=(400, 401, 403, 404, 503),
     content_type="application/x-ndjson",
     query={"as": _int_query(0, MOST_SEATS - 1, None, "a seat: the log as that seat saw it (its header's `viewer` says `seat N`)")})
@streamed
async def export(request: Request, game_id: str) -> ResponseStream:
    """The full log: to the admin, or to anyone once the game is over. With `?as=<seat>`, that seat's record: every
    event with its hash and `prev_hash`, the secrets the seat was shown whole (the cards drawn into its hand) kept and
    every other withheld (`secret: null`, `secret_digest` kept), so it verifies against the full log's chain; to the
    admin, to that seat's own token, or to anyone once the game is over (its header then carries the seed, and every
    withheld secret can be re-derived)."""
    who = await _caller(request)
    game = await _games(request).fresh(game_id)
    seat = _arg(request, "as")
    # who may read what is decided on this one state, and the header written from it, before the store is read
    # (the cached game may move on meanwhile): the log is read up to its version, never past it
    version, finished = game.version, _finished(game)
    if seat is None:
        if not _sees_all(game, who):
            raise ApiError(403, "forbidden", "The full log is published when the game is over (or to the admin)")
        header = export_header(game, with_seed=True)
        envelopes = await request.app.ctx.store.read(game_id, count=version)
    else:
        seats = len(game.state.seats)
        viewer = _int_arg(request, "as", 0, 0, seats - 1) if seats else -1
        if viewer < 0:
            raise ApiError(400, "invalid_request", "?as must be a seat of this game, and it has none", name="as")
        if not (_sees_all(game, who) or _seat_of(game, who) == viewer):
            raise ApiError(403, "forbidden", "A seat's record is its own (and the admin's) until the game is over")
        header = export_header(game, with_seed=finished and not withheld(game), viewer=f"seat {viewer}")
        # the seat's record is the same whoever asks: its own secrets kept, every other withheld
        envelopes = seat_record(game.rules, await request.app.ctx.store.read(game_id, count=version), viewer)
    header = signed_header(request, header, envelopes)

    async def write(response: Any) -> None:
        for line in dump(header, envelopes):
            await response.write(line)

    return ResponseStream(write, content_type="application/x-ndjson")


def signed_header(request: Request, header: ExportHeader, envelopes: list[Envelope]) -> ExportHeader:
    """The header at the log's last envelope, with that version's receipt: the export's own proof of its end."""
    last = envelopes[-1] if envelopes else None
    version, head, at = (last.seq, last.hash, last.at) if last else (0, header.head, 0)
    return msgspec.structs.replace(header, version=version, head=head, receipt=_receipt(request, header.game_id, version, head, at))


@bp.get("/games/<game_id:str>/replay")
@doc("get", "/games/<game_id:str>/replay", "The full table after event ?at=<seq>", answers={200: s.ReplayAnswer}, errors=(400, 401, 403, 404, 503),
     query={"at": _int_query(0, 1 << 62, None, "a seq from 0 to the game's version, default the latest"),
            "lines": _int_query(0, 1, 0, "1: add `lines`, the audit line of every event (for a replay's slider)")})
async def replay(request: Request, game_id: str) -> HTTPResponse:
    """The table after event `at`: the kind's view with every hand shown, the decider's state, event `at`'s audit
    line, and with `?lines=1` every event's audit line. For the admin, or anyone once the game is over. Each request
    reads the log once (up to `at`, or all of it with `?lines=1`) and folds it from the start: cost linear in `at`
    (a few milliseconds for a game of a few thousand events); nothing is cached per `at`."""
    who = await _caller(request)
    game = await _games(request).fresh(game_id)
    if not _sees_all(game, who):
        raise ApiError(403, "forbidden", "Replays are open once the game is over (or to the admin)")
    at = _int_arg(request, "at", game.version, 0, game.version)
    with_lines = _int_arg(request, "lines", 0, 0, 1) == 1
    envelopes = await request.app.ctx.store.read(game_id, count=game.version if with_lines else at) if (at or with_lines) else []
    envelopes = envelopes[: game.version]  # the store may have gone on since ``fresh``: the answer is at ``version``
    past = Game.new(game.rules.KIND, game_id, game.state.config, game.seed, game.state.rules_version)
    past.fold(envelopes[:at])
    lines = audit_lines(game.rules, envelopes, reveal=True) if with_lines else None
    event = None
    if at:
        last = envelopes[at - 1]
        line = lines[at - 1] if lines is not None else audit_lines(game.rules, [last], reveal=True)[0]
        event = s.ReplayEvent(last.seq, last.type, line)
    return _answer(s.ReplayAnswer(game_id=game_id, kind=game.rules.KIND, at=at, version=game.version, head=past.head,
                                  view=past.view(None, reveal=True), event=event, state=msgspec.Raw(canonical(past.state)), lines=lines))
