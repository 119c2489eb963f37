"""The bundle of a tournament over rounds (``free-parking-rounds/1``): one NDJSON file, its manifest first, then every
table's export in the order of the draws (round by round, table by table), each as ``GET /games/{id}/export`` writes
it. ``python -m replays verify`` re-derives from it every seed, every draw, every deal and the standings
(``replays/rounds.py``), so nobody need take the organiser's word for any of them. No I/O here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import msgspec

from service.events.envelope import Envelope
from service.events.export import ExportError, ExportHeader, dump

from ..sheets import sheet, text
from .draw import Draw
from .standings import Standing

FORMAT = "free-parking-rounds/1"

Export = tuple[ExportHeader, list[Envelope]]


Seed = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?!\n)$")]
"""32 bytes as 64 lowercase hex digits: a bundle whose seed is anything else is refused as it is read, not half-way
through re-deriving the draws."""


class EntrantLine(msgspec.Struct, kw_only=True):
    player_id: str
    name: str
    client_seed: Seed
    seed_from: str


class RoundsManifest(msgspec.Struct, kw_only=True, tag="rounds-manifest", tag_field="type"):
    """The bundle's first line. ``server_seed`` and ``seed`` (the tournament's) are published once every round has
    finished; before, the bundle (the organiser's) holds the draws and logs so far, and no seed to re-derive them."""

    format: str = FORMAT
    tournament_id: str
    name: str
    kind: str
    options: msgspec.Raw
    rounds: Annotated[int, msgspec.Meta(ge=1, le=12)]  # the bounds a tournament is created within (CreateTournament)
    table_size: Annotated[int, msgspec.Meta(ge=2, le=8)]
    duplicate: bool
    bot: str
    created_at: int
    status: str
    seed_commitment: str
    server_seed: Seed | None = None
    seed: Seed | None = None
    entrants: list[EntrantLine]
    draws: list[Draw]
    games: list[list[str]]
    """Each round's tables' game ids, in the order of its draw's tables."""
    standings: list[Standing]
    rounds_finished: int


class BundleError(ExportError):
    pass


class _Typed(msgspec.Struct):
    type: str | None = None


class _Line(msgspec.Struct):
    """What tells a table's header from its events: every envelope has a ``seq``, no header does."""

    seq: int | None = None


_manifest = msgspec.json.Decoder(RoundsManifest)
_typed = msgspec.json.Decoder(_Typed)
_header = msgspec.json.Decoder(ExportHeader)
_envelope = msgspec.json.Decoder(Envelope)
_line = msgspec.json.Decoder(_Line)


def is_rounds_bundle(first_line: bytes) -> bool:
    try:
        return _typed.decode(first_line).type == "rounds-manifest"
    except msgspec.DecodeError:
        return False


def dump_rounds(manifest: RoundsManifest, exports: list[Export]) -> Iterator[bytes]:
    yield msgspec.json.encode(manifest) + b"\n"
    for header, envelopes in exports:
        yield from dump(header, envelopes)


def load_rounds(data: bytes) -> tuple[RoundsManifest, list[Export]]:
    """The manifest and each table's export; ``BundleError`` naming the line where the file stops being one."""
    lines = data.splitlines()
    if not lines:
        raise BundleError(1, "the file is empty: a rounds bundle starts with its manifest")
    try:
        manifest = _manifest.decode(lines[0])
    except msgspec.DecodeError as e:
        raise BundleError(1, f"not a rounds manifest ({e})") from None
    exports: list[Export] = []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            if _line.decode(line).seq is None:
                exports.append((_header.decode(line), []))
            elif not exports:
                raise BundleError(n, "an event before any table's header")
            else:
                exports[-1][1].append(_envelope.decode(line))
        except msgspec.DecodeError as e:
            raise BundleError(n, f"neither a table's header nor an event ({e})") from None
    return manifest, exports


RESULTS_COLUMNS = ("tournament_id", "round", "table", "game_id", "seat", "player_id", "name", "rank", "score", "points",
                   "matchpoints")


def results_csv(manifest: RoundsManifest) -> bytes:
    """One row per entrant per round played: table, dealt seat, place, score, the place's points, matchpoints (a
    duplicate round's; empty otherwise) — as the tables' CSVs are written (``sheets``)."""
    out, writer = sheet(RESULTS_COLUMNS)
    for s in sorted(manifest.standings, key=lambda s: (s.rank, s.name, s.player_id)):
        for line in s.rounds:
            writer.writerow([text(manifest.tournament_id), line.round, line.table, text(line.game_id), line.seat,
                             text(s.player_id), text(s.name), line.rank, line.score, _number(line.points),
                             "" if line.matchpoints is None else _number(line.matchpoints)])
    return out.getvalue().encode()


SHEET_COLUMNS = ("tournament_id", "round", "table", "game_id", "seat", "player_id", "name")


def sheet_rows(manifest: RoundsManifest, round_no: int) -> list[tuple]:
    """The round sheet: every seat of every table of the round (a bot's seat named as such)."""
    names = {e.player_id: e.name for e in manifest.entrants}
    draw, games = manifest.draws[round_no - 1], manifest.games[round_no - 1]
    return [(manifest.tournament_id, round_no, t.table, game_id, seat, p or "", names.get(p, "") if p else f"{manifest.bot} bot")
            for t, game_id in zip(draw.tables, games, strict=True) for seat, p in enumerate(t.seats)]


def sheet_csv(manifest: RoundsManifest, round_no: int) -> bytes:
    out, writer = sheet(SHEET_COLUMNS)
    for row in sheet_rows(manifest, round_no):
        writer.writerow([text(v) if isinstance(v, str) else v for v in row])
    return out.getvalue().encode()


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)
