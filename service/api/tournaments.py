"""Tournaments: tables of Free Parking in tournament mode, created together by the admin, ranked, exported as one bundle.

A tournament is a record written once (``Store.put_tournament``, journalled like a token) in the partition of its
id; its tables are games whose ids are chosen in that same partition (``keys.table_id``), so a tournament's record,
tables and standings share one hash tag. Each table's metadata names its tournament and the players its seats are
reserved for. Everything a request could get wrong is checked before the first write, and the record is written
after its tables: a tournament is never seen without them.
"""

from __future__ import annotations

import secrets
from typing import Any

import msgspec
from sanic import Blueprint, HTTPResponse, Request
from sanic.response import ResponseStream

from service.events.envelope import canonical
from service.store.keys import table_id
from service.projections import read_standings
from service.rules.engine import export_header
from service.rules.free_parking.bundle import (
    Export,
    Manifest,
    dump_bundle,
    ranking_csv,
    ranking_of,
    standings_csv,
    standings_of,
    table_of,
)
from service.rules.free_parking.ranking import ranking

from . import schemas as s
from .errors import ApiError, not_found
from .games import now_ms
from .kinds import config_for
from .openapi import doc, streamed
from .records import signed_header
from .routes import _answer, _arg, _caller, _decode, _games, _int_arg
from . import rounds
from .round_exports import FORMATS as ROUND_FORMATS, RoundsStandingsAnswer, round_export, round_standings
from .round_records import RoundsAnswer, decode_record, is_rounds
from .round_tables import advance, summary
from .tournament_common import load_raw, volatile_refusal

bp = Blueprint("tournaments")

TURN_SECONDS = 120
"""A tournament table's turn clock unless its options say otherwise (docs/tournaments.md); ``forfeit_after`` keeps
the game's default (3)."""


class TableRecord(msgspec.Struct, kw_only=True):
    table: int
    game_id: str
    seats: int
    players: list[str] = []


class Tournament(msgspec.Struct, kw_only=True):
    """The stored record (``ns:tournament:{pN}:<id>``); the tables' state lives in their games."""

    tournament_id: str
    name: str
    kind: str
    options: dict[str, Any]
    created_at: int
    tables: list[TableRecord]


_record = msgspec.json.Decoder(Tournament)


async def _checked_tables(request: Request, body: s.CreateTournament) -> dict[str, Any]:
    """The options every table is created with, once every table and reserved player has been checked (400)."""
    if body.tables is msgspec.UNSET or body.kind != "free-parking":
        raise ApiError(400, "invalid_request", "A tournament of tables is of `kind` free-parking, with its `tables` "
                       "named; for rounds drawn as they go (and Monopoly), send `format: \"rounds\"`")
    if not (body.rounds is msgspec.UNSET and body.table_size is msgspec.UNSET and body.entrants is msgspec.UNSET
            and not body.duplicate and body.bot is msgspec.UNSET):
        raise ApiError(400, "invalid_request", "`rounds`, `table_size`, `entrants`, `duplicate` and `bot` belong to "
                       "`format: \"rounds\"`", format="tables")
    if body.options.get("mode", "tournament") != "tournament":
        raise ApiError(400, "invalid_request", "A tournament's tables are played in tournament mode: leave `mode` out or set it to \"tournament\"")
    # a tournament's tables run a turn clock unless the organiser sets another (``null``: none): a seat nobody plays
    # would otherwise stall its table for ever
    options = {"turn_seconds": TURN_SECONDS, **body.options, "mode": "tournament"}
    seen: set[str] = set()
    for i, table in enumerate(body.tables):
        config_for(body.kind, table.seats, options)
        if len(table.players) > table.seats:
            raise ApiError(400, "invalid_request", f"Table {i} reserves {len(table.players)} seats but has {table.seats}", table=i)
        for player_id in table.players:
            if player_id in seen:
                raise ApiError(400, "invalid_request", f"Player {player_id!r} is reserved a seat twice: one seat per tournament", player_id=player_id)
            seen.add(player_id)
            if await request.app.ctx.store.player(player_id) is None:
                raise ApiError(400, "invalid_request", f"No registered player has the id {player_id!r}", player_id=player_id, table=i)
    return options


@bp.post("/tournaments")
@doc("post", "/tournaments", "Create a tournament: its tables, or its rounds (admin only)", body=s.CreateTournament,
     answers={201: s.TournamentAnswer | RoundsAnswer}, errors=(400, 401, 403, 413, 503), auth="required")
async def create(request: Request) -> HTTPResponse:
    who = await _caller(request)
    if not who.admin:
        raise ApiError(401 if who.anonymous else 403, "unauthorized" if who.anonymous else "forbidden",
                       "Only the admin creates tournaments")
    body = _decode(request, s.CreateTournament)
    if body.format == "rounds":
        return await rounds.create(request, body)
    options = await _checked_tables(request, body)
    refusal = volatile_refusal(request)
    if refusal is not None:
        raise refusal
    tournament_id = "t_" + secrets.token_hex(8)
    # each reserved player's one seat in the tournament is claimed before any table exists: no join can race it
    claims = {player_id: table_id(tournament_id, i) for i, table in enumerate(body.tables) for player_id in table.players}
    await request.app.ctx.store.claim_seats(tournament_id, claims)
    tables = []
    for i, table in enumerate(body.tables):
        game_id = table_id(tournament_id, i)
        meta = {"tournament": tournament_id, "table": str(i), "reserved": msgspec.json.encode(table.players).decode()}
        await _games(request).create(body.kind, table.seats, options, None, game_id=game_id, meta=meta)
        tables.append(TableRecord(table=i, game_id=game_id, seats=table.seats, players=table.players))
    record = Tournament(tournament_id=tournament_id, name=body.name, kind=body.kind, options=options, created_at=now_ms(), tables=tables)
    await request.app.ctx.store.put_tournament(tournament_id, msgspec.json.encode(record))
    return _answer(await _summary(request, record), 201)


async def _statuses(request: Request, record: Tournament) -> list[dict[str, str]]:
    store = request.app.ctx.store
    return [await store.meta(t.game_id) or {} for t in record.tables]


def _overall(statuses: list[str]) -> str:
    return "finished" if all(st == "finished" for st in statuses) else "playing"


async def _summary(request: Request, record: Tournament) -> s.TournamentAnswer:
    metas = await _statuses(request, record)
    tables = [
        s.TableSummary(table=t.table, game_id=t.game_id, seats=t.seats, taken=int(m.get("taken", 0)), reserved=t.players,
                       status=m.get("status", "waiting"))  # type: ignore[arg-type]
        for t, m in zip(record.tables, metas, strict=True)
    ]
    return s.TournamentAnswer(tournament_id=record.tournament_id, name=record.name, kind=record.kind, options=record.options,
                              created_at=record.created_at, status=_overall([t.status for t in tables]), tables=tables)  # type: ignore[arg-type]


@bp.get("/tournaments/<tournament_id:str>")
@doc("get", "/tournaments/<tournament_id:str>", "A tournament, its tables and their status", answers={200: s.TournamentAnswer | RoundsAnswer},
     errors=(401, 404, 503))
async def get_tournament(request: Request, tournament_id: str) -> HTTPResponse:
    await _caller(request)  # an unknown token is refused, as everywhere
    raw = await load_raw(request, tournament_id)
    if is_rounds(raw):
        record = decode_record(raw)
        await advance(request.app, record)  # a read moves it on too: no worker's advancer needs to be the one
        return _answer(await summary(request.app, record))
    return _answer(await _summary(request, _record.decode(raw)))


@bp.get("/tournaments/<tournament_id:str>/standings")
@doc("get", "/tournaments/<tournament_id:str>/standings",
     "Each table's standing and the players ranked across tables (a read model: each table says the version it reflects)",
     answers={200: s.StandingsAnswer | RoundsStandingsAnswer}, errors=(401, 404, 503))
async def standings(request: Request, tournament_id: str) -> HTTPResponse:
    await _caller(request)
    raw = await load_raw(request, tournament_id)
    if is_rounds(raw):
        return _answer(await round_standings(request.app, decode_record(raw)))
    record = _record.decode(raw)
    rows = await read_standings(request.app.ctx.store, tournament_id, [t.game_id for t in record.tables])
    tables = [s.TableStandingAnswer(table=t.table, game_id=t.game_id, version=version, standing=standing)
              for t, (standing, version) in zip(record.tables, rows, strict=True)]
    finished = all(row.standing is not None and row.standing.finished for row in tables)
    return _answer(s.StandingsAnswer(tournament_id=tournament_id, status="finished" if finished else "playing", tables=tables,
                                     ranking=_ranking(tables)))


def _ranking(tables: list[s.TableStandingAnswer]) -> list[s.Ranked]:
    """The read model's tables ranked by the bundle's own function: a tie here is the tie the export and audit show."""
    return ranking((t.table, t.standing) for t in tables if t.standing is not None)


_FORMATS = ("ndjson", "csv", "ranking-csv")


@bp.get("/tournaments/<tournament_id:str>/export")
@doc("get", "/tournaments/<tournament_id:str>/export",
     "The tournament bundle as NDJSON: a manifest, then every table's full export (`?format=csv`, `ranking-csv`: CSV)",
     answers={200: str}, errors=(400, 401, 403, 404, 409, 503), content_type="application/x-ndjson", also=("text/csv", "text/html"),
     query={"format": ({"enum": list(dict.fromkeys(_FORMATS + ROUND_FORMATS))},
                       "ndjson (default): the bundle; csv: the standings, one row per player per round with the player's "
                       "rank (rounds: the per-round results, with matchpoints); ranking-csv: the ranking, one row per "
                       "player (tables only); sheet-csv, sheet-html: a round's tables and seats, to print (rounds only, "
                       "with ?round=); CSVs in UTF-8 with a BOM"),
            "round": ({"type": "integer", "minimum": 1, "maximum": 10_000}, "the round of a sheet (sheet-csv, sheet-html)")})
@streamed
async def export(request: Request, tournament_id: str) -> HTTPResponse | ResponseStream:
    """Open to the admin, and to anyone once every table has finished: the exports reveal every seed and hand."""
    who = await _caller(request)
    form = _arg(request, "format")
    form = "ndjson" if form is None else form
    if _arg(request, "round") is not None:  # read only by a rounds tournament's sheets, and checked wherever it is sent
        _int_arg(request, "round", 1, 1, 10_000)
    raw = await load_raw(request, tournament_id)
    if is_rounds(raw):
        return await round_export(request, decode_record(raw), who, form)
    if form in ROUND_FORMATS and form not in _FORMATS:  # a format of the other kind of tournament: this one has none
        raise ApiError(409, "not_offered", f"{form} is a tournament over rounds' export; this one is one round of "
                       "tables (ndjson, csv, ranking-csv)", format=form)
    if form not in _FORMATS:
        raise ApiError(400, "invalid_request", "?format must be one of ndjson, csv, ranking-csv, sheet-csv, sheet-html")
    record = _record.decode(raw)
    games = _games(request)
    tables = [await games.fresh(t.game_id) for t in record.tables]
    finished = all(g.rules.status_of(g.state) == "finished" for g in tables)
    if not (who.admin or finished):
        raise ApiError(403, "forbidden", "The tournament's logs are published when every table has finished (or to the admin)")
    exports: list[Export] = []
    for game in tables:
        envelopes = await request.app.ctx.store.read(game.game_id, count=game.version)
        header = signed_header(request, export_header(game, with_seed=True), envelopes)
        exports.append((header, envelopes))
    entries = [table_of(i, header, envelopes) for i, (header, envelopes) in enumerate(exports)]
    standings = standings_of(exports)
    manifest = Manifest(
        tournament_id=record.tournament_id, name=record.name, kind=record.kind, options=msgspec.Raw(canonical(record.options)),
        created_at=record.created_at, status="finished" if finished else "playing",
        tables=entries, standings=standings, ranking=ranking_of(entries, standings),
    )
    if form != "ndjson":
        sheet, what = (standings_csv, "standings") if form == "csv" else (ranking_csv, "ranking")
        return HTTPResponse(sheet(manifest), content_type="text/csv; charset=utf-8",
                            headers={"content-disposition": f'attachment; filename="{tournament_id}-{what}.csv"'})

    async def write(response: Any) -> None:
        for line in dump_bundle(manifest, exports):
            await response.write(line)

    return ResponseStream(write, content_type="application/x-ndjson",
                          headers={"content-disposition": f'attachment; filename="{tournament_id}.ndjson"'})
