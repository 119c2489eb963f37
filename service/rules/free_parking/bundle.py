"""The offline tournament bundle: one NDJSON file holding a tournament's manifest and every table's full export.

Line 1 is the ``Manifest`` (``"type": "manifest"``); then, for each table in the manifest's order, that table's export
exactly as ``service.events.export.dump`` writes it: its header line (seed revealed), then its envelopes. An organiser
hands the file to anyone; ``python -m replays verify`` re-decides every table and recomputes the standings from the
logs alone, so the published standings need not be taken on trust.

It lives beside ``standings`` (not in ``service/events``) because the manifest carries ``TableStanding``, and the
events layer imports nothing from the rules (DESIGN.md, "Layers"). No I/O here: the service writes the bytes, the
replays tools read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from service.events.envelope import Envelope, canonical
from service.events.export import ExportError, ExportHeader, dump
from service.events.free_parking import FreeParkingConfig

from . import CODEC
from ..sheets import sheet, text
from .ranking import Ranked, ranking
from .standings import PlayerStanding, RoundScore, TableStanding, table_standing

FORMAT = "free-parking-tournament/1"

Export = tuple[ExportHeader, list[Envelope]]


class BundleTable(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the tournament says of one table; every field but ``table`` and ``status`` is checkable against its log."""

    table: int  # 0-based, the table's place in the manifest and in the file
    game_id: str
    seats: int
    config: msgspec.Raw
    seed: str | None = None  # hex, once the game is finished and its seed revealed
    seed_commitment: str
    events: int
    head: str
    status: str


class Manifest(msgspec.Struct, kw_only=True, tag="manifest", tag_field="type"):
    """The bundle's first line. Defaults are not omitted, so ``format`` is always written: a reader knows the
    bundle's layout from the file alone."""

    format: str = FORMAT
    tournament_id: str
    name: str
    kind: str
    options: msgspec.Raw
    created_at: int  # ms since the epoch
    status: str
    tables: list[BundleTable]
    standings: list[TableStanding]
    ranking: list[Ranked] | None = None
    """The players ranked across tables (``ranking_of``); ``None`` in a bundle written before it was published, which
    still loads and verifies: it is recomputed from the standings wherever it is shown."""


class BundleError(ExportError):
    """The file is not a tournament bundle; ``line`` (1-based) says where it stops making sense."""


class _Typed(msgspec.Struct):
    type: str | None = None


_manifest = msgspec.json.Decoder(Manifest)
_typed = msgspec.json.Decoder(_Typed)
_header = msgspec.json.Decoder(ExportHeader)
_envelope = msgspec.json.Decoder(Envelope)
_config = msgspec.json.Decoder(FreeParkingConfig)


def dump_bundle(manifest: Manifest, exports: Iterable[Export]) -> Iterator[bytes]:
    """Lines of the bundle, each ending in a newline: the manifest, then each table's export as it stands."""
    yield canonical(manifest) + b"\n"
    for header, envelopes in exports:
        yield from dump(header, envelopes)


def is_bundle(data: bytes) -> bool:
    """Whether the file's first line is a manifest (an exported game starts with its header instead)."""
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        return _typed.decode(first).type == "manifest"
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


def load_bundle(data: bytes) -> tuple[Manifest, list[Export]]:
    """The manifest and every export in file order. A table starts at each header line, whatever the manifest
    claims of its length, so a bundle whose logs disagree with its manifest still loads and can be checked."""
    lines = [(n, line) for n, line in enumerate(data.split(b"\n"), start=1) if line.strip()]
    if not lines:
        raise BundleError(1, "the file is empty; a bundle starts with its manifest line")
    n, first = lines[0]
    try:
        manifest = _manifest.decode(first)
    except msgspec.DecodeError as e:
        raise BundleError(n, f"not a tournament manifest ({e})") from None
    if manifest.format != FORMAT:
        raise BundleError(n, f"format {manifest.format!r}: these tools read {FORMAT!r}")
    exports: list[Export] = []
    for n, line in lines[1:]:
        try:
            envelope = _envelope.decode(line)
        except msgspec.DecodeError as not_envelope:
            exports.append((_header_at(n, line, not_envelope), []))
            continue
        if not exports:
            raise BundleError(n, "an event envelope before any table's header line")
        exports[-1][1].append(envelope)
    return manifest, exports


def _header_at(n: int, line: bytes, not_envelope: msgspec.DecodeError) -> ExportHeader:
    try:
        return _header.decode(line)
    except msgspec.DecodeError as e:
        raise BundleError(n, f"neither a table's header ({e}) nor an event envelope ({not_envelope})") from None


def table_of(table: int, header: ExportHeader, envelopes: list[Envelope]) -> BundleTable:
    """The manifest's entry for a table, as its export shows it: what the service writes and what verify expects."""
    return BundleTable(
        table=table,
        game_id=header.game_id,
        seats=config_of(header).seats,
        config=header.config,
        seed=header.seed,
        seed_commitment=header.seed_commitment,
        events=len(envelopes),
        head=envelopes[-1].hash if envelopes else header.head,
        status=status_of_log(envelopes),
    )


def status_of_log(envelopes: list[Envelope]) -> str:
    """``waiting``, ``playing`` or ``finished``, as the game's view says it, read from the event types alone."""
    types = {env.type for env in envelopes}
    if "game_won" in types:
        return "finished"
    return "playing" if "round_dealt" in types else "waiting"


def config_of(header: ExportHeader) -> FreeParkingConfig:
    """The table's config, as its export header records it."""
    return _config.decode(header.config)


def standing_of(header: ExportHeader, envelopes: Iterable[Envelope]) -> TableStanding:
    """One table's standings from its log: the public part of each event is all the scores need."""
    return table_standing(header.game_id, config_of(header), (CODEC.join(env.public) for env in envelopes))


def standings_of(exports: Iterable[Export]) -> list[TableStanding]:
    """Every table's standings, recomputed from the logs alone, in the order given."""
    return [standing_of(header, envelopes) for header, envelopes in exports]


def ranking_of(tables: list[BundleTable], standings: list[TableStanding]) -> list[Ranked]:
    """The ranking of ``standings``, each numbered as the manifest's ``tables`` number its game (else by its place)."""
    numbers = {t.game_id: t.table for t in tables}
    return ranking((numbers.get(s.game_id, i), s) for i, s in enumerate(standings))


CSV_COLUMNS = ("tournament_id", "table", "game_id", "player_id", "name", "round", "seat", "score", "bonus", "total", "winner", "rank")
"""The per-round CSV's columns: ``rank`` (the player's overall rank) came last, so columns read by place keep their meaning."""

RANKING_COLUMNS = ("tournament_id", "rank", "name", "player_id", "table", "game_id", "total", "rounds", "rounds_won", "winner")

def standings_csv(manifest: Manifest) -> bytes:
    """The manifest's standings as RFC 4180 CSV, one row per player per round, with the player's overall rank, for a
    spreadsheet to open: UTF-8 with a BOM, every text cell safe to open there (``sheets.text``), the numbers as numbers."""
    out, writer = sheet(CSV_COLUMNS)
    tables = {t.game_id: t.table for t in manifest.tables}
    ranks = {(r.table, r.player_id or r.name): r.rank for r in ranking_of(manifest.tables, manifest.standings)}
    for i, standing in enumerate(manifest.standings):
        table = tables.get(standing.game_id, i)
        for player in standing.players:
            rank = ranks[(table, player.player_id or player.name)]
            for r in player.rounds:
                writer.writerow([*_row(manifest.tournament_id, table, standing.game_id, player, r), rank])
    return out.getvalue().encode()


def ranking_csv(manifest: Manifest) -> bytes:
    """The overall ranking as CSV, one row per player, in rank order, ties sharing a rank: the file an organiser
    prints. Recomputed from the manifest's standings (which ``verify`` checks against the logs), so a bundle written
    before the ranking was published has one too."""
    out, writer = sheet(RANKING_COLUMNS)
    games = {t.table: t.game_id for t in manifest.tables}
    for r in ranking_of(manifest.tables, manifest.standings):
        texts = [text(t) for t in (manifest.tournament_id, r.name, r.player_id or "", games.get(r.table, ""))]
        winner = "yes" if r.winner else "no"
        writer.writerow([texts[0], r.rank, texts[1], texts[2], r.table, texts[3], r.total, r.rounds, r.rounds_won, winner])
    return out.getvalue().encode()


def _row(tournament_id: str, table: int, game_id: str, player: PlayerStanding, r: RoundScore) -> list[object]:
    winner = "yes" if player.winner else "no"
    texts = [text(t) for t in (tournament_id, game_id, player.player_id or "", player.name)]
    return [texts[0], table, texts[1], texts[2], texts[3], r.round, r.seat, r.score, r.bonus, r.total, winner]
