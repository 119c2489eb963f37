"""Request and response bodies: one msgspec struct each, decoded at the edge, published in OpenAPI."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from service.events.envelope import Envelope
from service.events.free_parking import FreeParkingClientCommand
from service.projections.results import PlayerResults
from service.projections.scores import Scores
from service.rules.free_parking.view import FreeParkingView

ClientCommand = FreeParkingClientCommand
GameView = FreeParkingView

# no control character anywhere, and at least one character that is not blank (``\S`` alone would let one
# control character through: it is not whitespace)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$")]
SeedHex = Annotated[str, msgspec.Meta(pattern="^[0-9a-fA-F]{64}$")]


class Request(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Bodies the service accepts: unknown fields are refused, not ignored."""


class RegisterPlayer(Request):
    name: Name


class PlayerCreated(msgspec.Struct):
    player_id: str
    name: str
    token: str


class CreateGame(Request):
    kind: str
    seats: Annotated[int, msgspec.Meta(ge=1, le=8)] = 4
    options: dict[str, Any] = {}
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
