"""Request and response bodies: one msgspec struct each, decoded at the edge, published in OpenAPI."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from service.events.base import CommandId
from service.events.envelope import Envelope
from service.events.free_parking import FreeParkingClientCommand
from service.projections.leaderboard import Leader
from service.projections.results import PlayerResults
from service.projections.scores import Scores
from service.rules.free_parking.standings import TableStanding
from service.rules.engine import GAMES
from service.rules.free_parking.view import FreeParkingView

from .errors import describe_pattern

ClientCommand = FreeParkingClientCommand
GameView = FreeParkingView

# No control character (C0, DEL, C1), line or paragraph separator (a name is shown inside one line of the audit
# log; str.splitlines breaks at U+0085, U+2028, U+2029) or bidirectional embedding, override or isolate (it would
# reorder the text after it) anywhere; and at least one character that is neither blank nor invisible (zero-width
# spaces and joiners, the word joiner, a byte-order mark), so that every name can be seen. (``\S`` alone would let
# one control character through: it is not whitespace.)
_NOT_IN_NAMES = r"\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_INVISIBLE = r"\s\u200b-\u200d\u2060\ufeff"
NAME_PATTERN = describe_pattern(
    rf"^[^{_NOT_IN_NAMES}]*[^{_INVISIBLE}{_NOT_IN_NAMES}][^{_NOT_IN_NAMES}]*$",
    "a name with at least one visible character, and no control, line-break or text-direction character",
)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=NAME_PATTERN)]
describe_pattern(CommandId.__metadata__[0].pattern, "printable ASCII characters without spaces")
SeedHex = Annotated[str, msgspec.Meta(pattern=describe_pattern("^[0-9a-fA-F]{64}$", "64 hexadecimal digits"))]


class Request(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Bodies the service accepts: unknown fields are refused, not ignored."""


class RegisterPlayer(Request):
    name: Name


class PlayerCreated(msgspec.Struct):
    player_id: str
    name: str
    token: str


def _configs() -> list[dict[str, Any]]:
    """Each kind's config as a JSON schema object (its options, and ``seats``)."""
    out = []
    for module in GAMES.values():
        _, components = msgspec.json.schema_components([module.CONFIG])
        schema = dict(components[module.CONFIG.__name__])
        assert "$ref" not in repr(schema), "a kind's config refers to other schemas: inline them here"
        out.append(schema)
    return out


def _options_schema() -> dict[str, Any]:
    """``options`` is decoded by the kind's config (``Games.create``); documented here as what that admits."""
    kinds = []
    for config in _configs():
        properties = {k: v for k, v in config["properties"].items() if k != "seats"}
        kinds.append({"type": "object", "properties": properties, "additionalProperties": False})
    return kinds[0] if len(kinds) == 1 else {"anyOf": kinds}


SEATS_MIN = min(c["properties"]["seats"].get("minimum", 1) for c in _configs())
SEATS_MAX = max(c["properties"]["seats"]["maximum"] for c in _configs())


class CreateGame(Request):
    kind: Annotated[str, msgspec.Meta(extra_json_schema={"enum": sorted(GAMES)})]  # checked by ``rules_for``: its message
    seats: Annotated[int, msgspec.Meta(ge=SEATS_MIN, le=SEATS_MAX)] = 4
    options: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=_options_schema())] = {}
    seed: SeedHex | None = None


class GameCreatedAnswer(msgspec.Struct):
    game_id: str
    kind: str
    seats: int
    seed_commitment: str
    version: int
    head: str


class GameSummary(msgspec.Struct):
    game_id: str
    kind: str
    seats: int
    taken: int
    status: str
    created_at: int


class GameList(msgspec.Struct):
    games: list[GameSummary]


class JoinSeat(Request):
    """A seat for a person (``name``; with a player token, the registered player) or a server bot (``bot``)."""

    name: Name | None = None
    bot: Literal["random", "greedy"] | None = None


class SeatAnswer(msgspec.Struct):
    seat: int
    token: str
    player_id: str


class CommandAnswer(msgspec.Struct):
    version: int
    head: str
    events: list[Envelope]
    view: GameView  # typed (not raw JSON) so that OpenAPI describes the view a command answers with


class EventsPage(msgspec.Struct):
    version: int
    head: str
    events: list[Envelope]


class Health(msgspec.Struct):
    ok: bool
    store: Literal["redis", "embedded"]


class ReplayAnswer(msgspec.Struct):
    """The table after event ``at``: every hand shown, and the decider's whole state (deck orders included)."""

    at: int
    head: str
    view: GameView
    state: msgspec.Raw


class ScoresAnswer(msgspec.Struct):
    version: int
    scores: Scores | None


class PlayerAnswer(msgspec.Struct):
    player_id: str
    name: str
    results: PlayerResults | None


# --- tournaments -----------------------------------------------------------------------------------

_FREE_PARKING = next(c for c in _configs() if c["title"] == "FreeParkingConfig")
PlayerId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class TournamentTable(Request):
    """A table to create: its seats, and the registered players (ids from ``POST /players``) it reserves seats for."""

    seats: Annotated[int, msgspec.Meta(ge=_FREE_PARKING["properties"]["seats"]["minimum"], le=_FREE_PARKING["properties"]["seats"]["maximum"])] = 4
    players: Annotated[list[PlayerId], msgspec.Meta(max_length=_FREE_PARKING["properties"]["seats"]["maximum"])] = []


_TOURNAMENT_OPTIONS = {
    "type": "object",
    "properties": {**{k: v for k, v in _FREE_PARKING["properties"].items() if k != "seats"}, "mode": {"enum": ["tournament"]}},
    "additionalProperties": False,
}


class CreateTournament(Request):
    """Every table is a Free Parking game in tournament mode (``options.mode``, if given, must say so)."""

    name: Name
    kind: Literal["free-parking"]
    tables: Annotated[list[TournamentTable], msgspec.Meta(min_length=1, max_length=64)]
    options: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=_TOURNAMENT_OPTIONS)] = {}


class TableSummary(msgspec.Struct, kw_only=True):
    table: int
    game_id: str
    seats: int
    taken: int
    reserved: list[str]
    status: Literal["waiting", "playing", "finished"]


class TournamentAnswer(msgspec.Struct, kw_only=True):
    tournament_id: str
    name: str
    kind: str
    options: dict[str, Any]
    created_at: int
    status: Literal["playing", "finished"]
    tables: list[TableSummary]


class TableStandingAnswer(msgspec.Struct, kw_only=True):
    table: int
    game_id: str
    version: int  # the table's version the standing reflects (the read model may lag the game)
    standing: TableStanding | None


class Ranked(msgspec.Struct, kw_only=True):
    """A player's place across the tournament: by tables won, then total points."""

    rank: int
    player_id: str | None
    name: str
    table: int
    total: int
    rounds: int
    winner: bool


class StandingsAnswer(msgspec.Struct, kw_only=True):
    tournament_id: str
    status: Literal["playing", "finished"]
    tables: list[TableStandingAnswer]
    ranking: list[Ranked]


class Leaderboard(msgspec.Struct, kw_only=True):
    """Registered players ranked by games won, then points (finished games only; a read model, it may lag)."""

    kind: str | None  # None: every kind together
    players: list[Leader]
