"""What a tournament over rounds hands on (docs/tournaments.md): its standings, its bundle, the per-round results and
each round's sheet — as CSV, and the sheet as a plain page an organiser prints."""

from __future__ import annotations

import html
from typing import Any, Literal

import msgspec
from sanic import HTTPResponse, Request
from sanic.response import ResponseStream

from service.events.envelope import canonical
from service.rules.engine import export_header
from service.rules.rounds.bundle import EntrantLine, Export, RoundsManifest, dump_rounds, results_csv, sheet_csv, sheet_rows
from service.rules.rounds.standings import Standing

from .auth import Caller
from .errors import ApiError
from .round_records import RoundsRecord, draws_of, entrants_of
from .round_tables import advance, standings_now
from .records import signed_header
from .routes import _arg, _games

FORMATS = ("ndjson", "csv", "sheet-csv", "sheet-html")
"""A tournament over rounds' exports: its bundle, its per-round results, and a round's sheet (``?round=``)."""


class RoundsStandingsAnswer(msgspec.Struct, kw_only=True, tag="rounds", tag_field="format"):
    """The standings after every round that has finished (``rounds_finished`` of ``rounds``): by place points, or by
    matchpoints in a duplicate tournament, then by total score; level players share a rank. Each entrant's ``rounds``
    say their table, dealt seat, place, score and points round by round."""

    tournament_id: str
    status: Literal["entry", "playing", "finished"]
    rounds: int
    rounds_finished: int
    duplicate: bool
    standings: list[Standing]


async def round_standings(app: Any, record: RoundsRecord) -> RoundsStandingsAnswer:
    await advance(app, record)
    table, finished, started = await standings_now(app.ctx.store, record)
    status = "entry" if not started else "finished" if finished == record.rounds else "playing"
    return RoundsStandingsAnswer(tournament_id=record.tournament_id, status=status, rounds=record.rounds,  # type: ignore[arg-type]
                                 rounds_finished=finished, duplicate=record.duplicate, standings=table)


async def round_export(request: Request, record: RoundsRecord, who: Caller, form: str) -> HTTPResponse | ResponseStream:
    """The bundle to the admin, and to anyone once every round has finished (it reveals every seed and hand); the
    results and the round sheets to anyone (the standings and the draws are public as they are made)."""
    if form == "ranking-csv":
        raise ApiError(409, "not_offered", "ranking-csv is a tournament of tables' export; over rounds, the standings "
                       "rank (GET …/standings) and csv gives each round's results", format=form)
    if form not in FORMATS:
        raise ApiError(400, "invalid_request", f"?format must be one of {', '.join(FORMATS)}")
    manifest = await _manifest(request, record)
    if form == "ndjson":
        if not (who.admin or manifest.status == "finished"):
            raise ApiError(403, "forbidden", "The tournament's logs are published when every round has finished (or to the admin)")
        return _bundle(record, manifest, await _exports(request, manifest))
    if form == "csv":
        return _file(results_csv(manifest), "text/csv; charset=utf-8", f"{record.tournament_id}-results.csv")
    round_no = _round(request, manifest)
    if form == "sheet-csv":
        return _file(sheet_csv(manifest, round_no), "text/csv; charset=utf-8", f"{record.tournament_id}-round-{round_no}.csv")
    return HTTPResponse(_sheet_html(manifest, round_no), content_type="text/html; charset=utf-8")


def _round(request: Request, manifest: RoundsManifest) -> int:
    raw = _arg(request, "round")
    drawn = len(manifest.draws)
    if raw is None or not raw.isdecimal() or not 1 <= int(raw) <= drawn:
        raise ApiError(400, "invalid_request", f"?round must name a round drawn so far (1 to {drawn})" if drawn
                       else "No round is drawn yet: the tournament has not started", name="round")
    return int(raw)


async def _manifest(request: Request, record: RoundsRecord) -> RoundsManifest:
    store = request.app.ctx.store
    await advance(request.app, record)
    entrants, started, state = await entrants_of(store, record.tournament_id)
    draws = draws_of(state)
    table, finished_rounds, _ = await standings_now(store, record)
    finished = finished_rounds == record.rounds
    return RoundsManifest(
        tournament_id=record.tournament_id, name=record.name, kind=record.kind,
        options=msgspec.Raw(canonical(record.options)), rounds=record.rounds, table_size=record.table_size,
        duplicate=record.duplicate, bot=record.bot, created_at=record.created_at,
        status="entry" if started is None else "finished" if finished else "playing",
        seed_commitment=record.seed_commitment,
        server_seed=record.server_seed if finished else None, seed=started.seed if finished and started else None,
        entrants=[EntrantLine(player_id=p, name=e.name, client_seed=e.client_seed, seed_from=e.seed_from)
                  for p, e in sorted(entrants.items())],
        draws=[d.draw for d in draws], games=[d.games for d in draws], standings=table, rounds_finished=finished_rounds)


async def _exports(request: Request, manifest: RoundsManifest) -> list[Export]:
    """Every table's export in the draws' order: read for the bundle alone, and only once the caller may have it. The
    results and the sheets come from the manifest, so anyone asking for them again and again makes no worker read and
    sign every table's log each time."""
    store, games = request.app.ctx.store, _games(request)
    exports: list[Export] = []
    for game_id in (game_id for round_games in manifest.games for game_id in round_games):
        game = await games.fresh(game_id)
        envelopes = await store.read(game_id, count=game.version)
        exports.append((signed_header(request, export_header(game, with_seed=True), envelopes), envelopes))
    return exports


def _bundle(record: RoundsRecord, manifest: RoundsManifest, exports: list[Export]) -> ResponseStream:
    async def write(response: Any) -> None:
        for line in dump_rounds(manifest, exports):
            await response.write(line)

    return ResponseStream(write, content_type="application/x-ndjson",
                          headers={"content-disposition": f'attachment; filename="{record.tournament_id}.ndjson"'})


def _file(body: bytes, content_type: str, filename: str) -> HTTPResponse:
    return HTTPResponse(body, content_type=content_type, headers={"content-disposition": f'attachment; filename="{filename}"'})


def _sheet_html(manifest: RoundsManifest, round_no: int) -> str:
    """A round's tables and seats as a plain page, one table of the tournament to a block, to print and pin up."""
    e = html.escape
    blocks: dict[int, list[tuple]] = {}
    for row in sheet_rows(manifest, round_no):
        blocks.setdefault(row[2], []).append(row)
    parts = [f"<!doctype html><html lang=en><meta charset=utf-8><title>{e(manifest.name)} — round {round_no}</title>",
             "<style>body{font:14px system-ui,sans-serif;margin:2em}section{break-inside:avoid;margin:0 0 1.5em}"
             "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.3em .8em;text-align:left}"
             "h1{font-size:1.4em}h2{font-size:1.1em;margin:.2em 0}</style>",
             f"<h1>{e(manifest.name)}: round {round_no} of {manifest.rounds}</h1>"]
    for table_no, rows in blocks.items():
        parts.append(f"<section><h2>Table {table_no + 1}</h2><p>Game <code>{e(rows[0][3])}</code></p>"
                     "<table><tr><th>Seat</th><th>Player</th></tr>")
        parts += [f"<tr><td>{seat + 1}</td><td>{e(name)}</td></tr>" for _, _, _, _, seat, _, name in rows]
        parts.append("</table></section>")
    return "".join(parts) + "</html>\n"
