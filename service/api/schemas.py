"""Request and response bodies: one msgspec struct each, decoded at the edge, published in OpenAPI."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

from service.events.base import Account, CommandId, CommandSig
from service.events.common import Seeding
from service.events.envelope import Envelope
from service.events.receipt import Receipt
from service.projections.leaderboard import Leader
from service.rules.ratings import RatingChange, RatingRow
from service.projections.results import PlayerResults
from service.projections.scores import Scores
from service.projections.solitaire_stats import SolitaireStats
from service.rules.free_parking.ranking import Ranked
from service.rules.free_parking.standings import TableStanding
from service.rules.setup import SeedChosenBy

from .errors import describe_pattern
from .kinds import ALL_COMMANDS, BOT_NAMES, KINDS
from .names import NAME_PATTERN
from .openapi import REF, component, extend

ClientCommand = Union[ALL_COMMANDS]  # noqa: UP007 - every kind's commands, each by its tag: one documented body


def _views() -> Any:
    """The view a game answers with: its kind's. One kind: that struct; several: any of them (each names its ``kind``)."""
    views = [k.view for k in KINDS.values()]
    if len(views) == 1:
        return views[0]
    component(*views)
    return Annotated[Any, msgspec.Meta(extra_json_schema={"anyOf": [{"$ref": REF.format(name=v.__name__)} for v in views]})]


GameView = _views()

# A name: what docs/limits.md says, decoded at the edge like every other bound (service/api/names.py: the rule, and
# the simpler pattern OpenAPI publishes in its place)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=NAME_PATTERN)]
describe_pattern(CommandId.__metadata__[0].pattern, "printable ASCII characters without spaces")
describe_pattern(CommandSig.__metadata__[0].pattern, "128 lowercase hexadecimal digits (an Ed25519 signature)")
SeedHex = Annotated[str, msgspec.Meta(pattern=describe_pattern("^[0-9a-fA-F]{64}$", "64 hexadecimal digits"))]
ClientSeed = Annotated[str, msgspec.Meta(
    # (?!\n): Python's `$` (msgspec's patterns are re.search) also matches before a final newline, ECMA's does not
    pattern=describe_pattern(r"^[0-9a-f]{64}(?!\n)$", "64 lowercase hexadecimal digits (32 bytes)"),
    description="32 random bytes of the player's own, as 64 lowercase hex digits: mixed into the game's seed when the "
                "last seat is taken (docs/rng.md). Keep it: `python -m replays verify LOG --client-seed SEAT:HEX` checks it.")]


PublicKeyHex = Annotated[str, msgspec.Meta(
    pattern=describe_pattern(r"^[0-9a-f]{64}(?!\n)$", "64 lowercase hexadecimal digits (an Ed25519 public key's 32 bytes)"),
    description="The player's own Ed25519 public key: every command of the seat must then be signed by it "
                "(`sig`; docs/signed-commands.md). A key cannot be replaced once a seat is taken with it.")]


class Request(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Bodies the service accepts: unknown fields are refused, not ignored."""


AccountField = Annotated[Account, msgspec.Meta(
    description="`person` (the default) or `bot`: a bot account, a program playing through the API. It is shown as a "
                "bot at every table and in the ratings, the server's bots do not wait a person's pace for it, and it "
                "has rate limits of its own (docs/bots.md, docs/limits.md). Not `bot` of a seat, which seats a server "
                "bot. Fixed at registration.")]


class RegisterPlayer(Request):
    name: Name
    public_key: PublicKeyHex | None = None  # the key every seat this player takes is keyed with, unless a join brings one
    account: AccountField = "person"


class PlayerCreated(msgspec.Struct):
    player_id: str
    name: str
    token: str
    account: Account = "person"


def _options_schema() -> dict[str, Any]:
    """``options`` is decoded by the kind's config (``Games.create``); documented here as what any kind admits
    (``CreateGame``'s own schema then ties each kind to its options)."""
    kinds = [k.options_ref() for k in KINDS.values()]
    return kinds[0] if len(kinds) == 1 else {"anyOf": kinds}


SEATS_MIN = min(k.seats[0] for k in KINDS.values())
SEATS_MAX = max(k.seats[1] for k in KINDS.values())


class CreateGame(Request):
    """``seats`` left out: four, or the nearest the kind admits (a solitaire has one). ``seed``: the admin's, or the
    player's own choice where the kind allows it (solitaire: "play deal N again"; such games are counted apart)."""

    kind: Annotated[str, msgspec.Meta(extra_json_schema={"enum": sorted(KINDS)})]  # checked by ``rules_for``: its message
    seats: Annotated[int, msgspec.Meta(ge=SEATS_MIN, le=SEATS_MAX)] | msgspec.UnsetType = msgspec.UNSET
    options: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=_options_schema())] = {}
    seed: SeedHex | None = None


def _each_kind() -> dict[str, Any]:
    """What ties a body's ``kind`` to that kind's seats and options, so that a client (and a schema-driven fuzzer)
    learns from the document which combinations the service accepts."""
    alternatives = [
        {
            "properties": {
                "kind": {"enum": [k.name]},
                "seats": {"type": "integer", "minimum": k.seats[0], "maximum": k.seats[1]},
                "options": k.options_ref(),
            }
        }
        for k in KINDS.values()
    ]
    return {"anyOf": alternatives}


extend(CreateGame, _each_kind())


class GameCreatedAnswer(msgspec.Struct):
    game_id: str
    kind: str
    seats: int
    seed_commitment: str
    version: int
    head: str
    seeding: Literal["combined", "fixed", "duplicate", "tournament"] = "combined"
    """``combined``: the seed will be derived from the committed one and every seat's client seed; ``fixed``: the seed
    given at creation deals as is, and client seeds are recorded but change nothing (docs/rng.md); ``duplicate`` and
    ``tournament``: a tournament round's table, dealt from a seed derived from the tournament's (docs/tournaments.md)."""


class SeatedPlayer(msgspec.Struct, omit_defaults=True):
    """Who sat down at a table, as anyone watching it sees them (``GET /games/{id}``): a name, a server bot's kind, and
    ``account`` ``bot`` for any bot (a server bot, or a bot account: ``bot`` absent); absent for a person."""

    name: str
    bot: str | None = None
    account: Literal["bot"] | None = None


class GameSummary(msgspec.Struct):
    game_id: str
    kind: str
    seats: int
    taken: int
    status: str
    created_at: int
    turn_seconds: int | None = None
    """The game's turn clock (``null``: none), so a player sees it before joining; ``forfeit_after`` with it."""
    forfeit_after: int | None = None
    seeding: Seeding = "legacy"
    """How the game's seed is made, as its view says (docs/rng.md): ``combined`` (drawn from the committed server seed
    and every seat's client seed), ``fixed`` (given at creation: the deal was chosen) or ``legacy`` (before client
    seeds), so a player sees it before joining; ``seed_chosen_by`` with it."""
    seed_chosen_by: SeedChosenBy | None = None
    """Who chose a ``fixed`` game's seed: the ``admin``, or the game's ``creator`` (a solitaire's "play deal N again");
    ``null`` when nobody did."""
    players: list[SeatedPlayer] | None = None
    """Who sat down at the table, in the order they did (``taken`` of them): each one's name and, for a bot, its kind —
    what the table shows anyone watching it; never a player id or a key. ``null`` for an archived game (its log is not
    read to list it: its result is in ``GET /games/{id}/scores``)."""


class GameList(msgspec.Struct):
    games: list[GameSummary]


class JoinSeat(Request):
    """A seat for a person (``name``; with a player token, the registered player) or a server bot (``bot``)."""

    name: Name | None = None
    bot: Literal[BOT_NAMES] | None = None  # the game's kind decides which (``POST /games/{id}/seats``)
    client_seed: ClientSeed | None = None  # a person's contribution to the seed; a bot's is derived (docs/rng.md)
    public_key: PublicKeyHex | None = None  # a person's own key: the seat is keyed (a bot's never is)


class SeatAnswer(msgspec.Struct):
    seat: int
    token: str
    player_id: str


class CommandAnswer(msgspec.Struct):
    version: int
    head: str
    events: list[Envelope]
    view: GameView  # typed (not raw JSON) so that OpenAPI describes the view a command answers with
    receipt: Receipt | None = None  # signs ``version`` and ``head`` (docs/fairness.md); null when receipts are off


class EventsPage(msgspec.Struct):
    version: int
    head: str
    events: list[Envelope]
    receipt: Receipt | None = None


class LogLine(msgspec.Struct, omit_defaults=True):
    """One event of the move log in plain words, players by name as they sat at that event (docs/log.md)."""

    seq: int
    at: int  # ms since the epoch
    line: str
    notice: str | None = None  # words to the caller, when this event did something to them (their meter set to 0…)


class LogPage(msgspec.Struct):
    version: int  # the game's version the page is read at: ask again with ?after=<version>
    lines: list[LogLine]


class Health(msgspec.Struct):
    ok: bool
    store: Literal["redis", "embedded"]


class Readiness(msgspec.Struct):
    """``GET /readyz``: whether this worker should be sent traffic, and each check's finding."""

    ready: bool
    store: bool
    """The store answers (on a cluster, every primary)."""
    projector_lag: int
    """Partition log entries the projectors have not applied, over every partition (-1: not known, the store is down)."""
    lag_bound: int
    """The most ``projector_lag`` may be for the worker to be ready (``--ready-lag``)."""
    archive: bool
    """The archive's folder (or object store) can be reached, so archived games can be read."""


class ReplayEvent(msgspec.Struct):
    """Event ``seq`` of a replay: its type and its audit line (every hidden part spelled out)."""

    seq: int
    type: str
    line: str


class ReplayAnswer(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The table after event ``at`` of ``version`` events: every hand shown (the kind's view folded to ``at``, with
    ``reveal``), the decider's whole state (deck orders included), and event ``at`` itself (``null`` at 0).
    ``lines`` (with ``?lines=1`` only): the audit line of every event, 1 to ``version``, for a replay's slider."""

    game_id: str
    kind: str
    at: int
    version: int
    head: str
    view: GameView
    event: ReplayEvent | None
    state: msgspec.Raw
    lines: list[str] | None = None


class ScoresAnswer(msgspec.Struct):
    version: int
    scores: Scores | None


class StatsAnswer(msgspec.Struct, kw_only=True):
    """A registered player's statistics per kind that keeps them (a read model of games from their deal: ``as_of``
    says which games it reflects)."""

    player_id: str
    name: str
    solitaire: SolitaireStats


class KindRating(msgspec.Struct, kw_only=True):
    """A player's rating in one kind (RULES.md §4): ``rating`` is μ − 3σ, after ``games`` rated games."""

    rating: float
    mu: float
    sigma: float
    games: int


class PlayerAnswer(msgspec.Struct):
    player_id: str
    name: str
    results: PlayerResults | None
    ratings: dict[str, KindRating] = {}  # per kind the player has a rating in (a read model: rated games only)
    account: Account = "person"  # what the player registered as: ``bot`` for a bot account


class GameRatingsAnswer(msgspec.Struct, kw_only=True):
    """What a finished game did to its players' ratings: each rated seat's rating (μ − 3σ) before and after it.
    ``rated`` false: the game is not rated (RULES.md §4), or the read model has not reached it yet."""

    game_id: str
    kind: str
    rated: bool
    changes: list[RatingChange]


class RatingsAnswer(msgspec.Struct, kw_only=True):
    """One kind's ratings, best first: registered players and each bot kind as one player (``player_id``
    ``bot:<kind>``, as ``bot:greedy``); ``rating`` is μ − 3σ, equal ratings share a rank. A read model, it may lag."""

    kind: str
    players: list[RatingRow]


# --- tournaments -----------------------------------------------------------------------------------

_FREE_PARKING = KINDS["free-parking"]
PlayerId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class TournamentTable(Request):
    """A table to create: its seats, and the registered players (ids from ``POST /players``) it reserves seats for."""

    seats: Annotated[int, msgspec.Meta(ge=_FREE_PARKING.seats[0], le=_FREE_PARKING.seats[1])] = 4
    players: Annotated[list[PlayerId], msgspec.Meta(max_length=_FREE_PARKING.seats[1])] = []


_TOURNAMENT_OPTIONS = {
    "type": "object",
    "properties": {**_FREE_PARKING.options_schema()["properties"], "mode": {"enum": ["tournament"]}},
    "additionalProperties": False,
}


TOURNAMENT_OPTIONS = _TOURNAMENT_OPTIONS
_ROUNDS_OPTIONS = {"anyOf": [KINDS["free-parking"].options_ref(), KINDS["monopoly"].options_ref()]}


class CreateTournament(Request):
    """``format`` ``tables`` (the default): one round of tables named here, each a Free Parking game in tournament mode
    (``options.mode``, if given, must say so). ``rounds``: ``rounds`` rounds at tables of ``table_size``, drawn as each
    round ends, for the ``entrants`` named (registered player ids) or ``"open"`` to entry (``POST …/entries``); the
    card game (either mode) or Monopoly (``options.max_rounds`` required); ``duplicate`` deals (the card game): every
    table of a round dealt the same cards, ranked by matchpoints (docs/tournaments.md)."""

    name: Name
    kind: Literal["free-parking", "monopoly"]
    format: Literal["tables", "rounds"] = "tables"
    tables: Annotated[list[TournamentTable], msgspec.Meta(min_length=1, max_length=64)] | msgspec.UnsetType = msgspec.UNSET
    rounds: Annotated[int, msgspec.Meta(ge=1, le=12)] | msgspec.UnsetType = msgspec.UNSET
    table_size: Annotated[int, msgspec.Meta(ge=2, le=8)] | msgspec.UnsetType = msgspec.UNSET
    entrants: Annotated[list[PlayerId], msgspec.Meta(max_length=256)] | Literal["open"] | msgspec.UnsetType = msgspec.UNSET
    duplicate: bool = False
    bot: Literal["greedy", "expert", "random", "strategic"] | msgspec.UnsetType = msgspec.UNSET
    """The bot kind that fills a short table (default: ``greedy`` in the card game, ``strategic`` in Monopoly)."""
    options: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=_ROUNDS_OPTIONS)] = {}


class TableSummary(msgspec.Struct, kw_only=True):
    table: int
    game_id: str
    seats: int
    taken: int
    reserved: list[str]
    status: Literal["waiting", "playing", "finished"]


class TournamentAnswer(msgspec.Struct, kw_only=True, tag="tables", tag_field="format"):
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


class StandingsAnswer(msgspec.Struct, kw_only=True, tag="tables", tag_field="format"):
    tournament_id: str
    status: Literal["playing", "finished"]
    tables: list[TableStandingAnswer]
    ranking: list[Ranked]


class Leaderboard(msgspec.Struct, kw_only=True):
    """Registered players ranked by games won, then points (finished games only; a read model, it may lag)."""

    kind: str | None  # None: every kind together
    players: list[Leader]
