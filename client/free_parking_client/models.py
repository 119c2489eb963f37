"""The service's answers as typed structs: the fields a client acts on, loose enough that a field the service adds
later breaks nothing (unknown fields are ignored), and each view and event keeps the whole answer as ``raw``.

Views are per kind (``FreeParkingView``, ``MonopolyView``, ``SolitaireView``; another kind reads as ``View``); the
shapes are the service's (docs/api.md "The view", docs/rules-monopoly.md, docs/solitaire-api.md).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Struct(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Every answer: decoded leniently (unknown fields ignored)."""


class Receipt(Struct):
    """The service's Ed25519 signature over a game's ``version``, ``head`` and time (docs/fairness.md)."""

    game_id: str
    version: int
    head: str
    at: int
    key_id: str
    sig: str
    listing: str | None = None


class Card(Struct):
    id: str
    kind: str
    value: int | None = None


class View(Struct):
    """The caller's view of a game: what is common to every kind. ``legal`` lists every command the caller may send
    now, exactly as to send it; ``legal_forms`` the bounds of the open-ended ones (bids, trades)."""

    game_id: str
    kind: str
    status: str
    version: int
    head: str = ""
    seat: int | None = None
    legal: list[dict[str, Any]] = []
    legal_forms: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None
    winner: int | None = None
    receipt: dict[str, Any] | None = None
    raw: dict[str, Any] = {}
    """The view exactly as the service sent it."""

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def playable(self) -> list[dict[str, Any]]:
        """``legal`` less ``resign`` (listed whenever the seat is still in): non-empty when a move is awaited."""
        return [c for c in self.legal if c.get("type") != "resign"]

    @property
    def seat_key(self) -> str | None:
        """The public key the caller's seat is keyed with (its commands must then be signed), or ``None``."""
        return None


class FreeParkingPlayer(Struct):
    seat: int
    name: str | None = None
    player_id: str | None = None
    bot: str | None = None
    public_key: str | None = None
    meter: int = 0
    points: int = 0
    hand_size: int = 0
    point_cards: list[Card] = []


class FreeParkingHand(Struct):
    hand: list[Card] = []


class FreeParkingView(View, kw_only=True):
    turn: int | None = None
    phase: str | None = None
    round: int | None = None
    players: list[FreeParkingPlayer] = []
    you: FreeParkingHand | None = None

    @property
    def seat_key(self) -> str | None:
        return next((p.public_key for p in self.players if p.seat == self.seat), None)


class MonopolySeat(Struct):
    seat: int
    name: str | None = None
    player_id: str | None = None
    bot: str | None = None
    public_key: str | None = None
    cash: int = 0
    position: int = 0
    in_jail: bool = False
    jail_cards: list[str] = []
    bankrupt: bool = False


class MonopolyView(View, kw_only=True):
    turn_seat: int | None = None
    round: int | None = None
    step: str | None = None
    seats: list[MonopolySeat] = []
    board: list[dict[str, Any]] = []
    auction: dict[str, Any] | None = None
    trades: list[dict[str, Any]] = []
    offer: dict[str, Any] | None = None
    debts: list[dict[str, Any]] = []

    @property
    def seat_key(self) -> str | None:
        return next((s.public_key for s in self.seats if s.seat == self.seat), None)


class SolitaireView(View, kw_only=True):
    public_key: str | None = None
    hint: dict[str, Any] | None = None
    redeals_left: int | None = None
    can_undo: bool = False
    stuck: bool = False
    result: str | None = None

    @property
    def seat_key(self) -> str | None:
        return self.public_key


VIEWS: dict[str, type[View]] = {"free-parking": FreeParkingView, "monopoly": MonopolyView, "solitaire": SolitaireView}


def view_of(data: dict[str, Any]) -> View:
    """The typed view of ``data`` (a view's JSON), by its ``kind``; ``raw`` is ``data`` itself."""
    view = msgspec.convert(data, VIEWS.get(data.get("kind", ""), View))
    view.raw = data
    return view


class GameEvent(Struct):
    """One event envelope (docs/events.md), redacted for the caller (``secret`` null) until the game is over.
    ``receipt``: the receipt of the version it makes, as the event stream sends it."""

    seq: int
    type: str
    game_id: str
    at: int
    hash: str
    prev_hash: str = ""
    public: Any = None
    secret: Any = None
    command: Any = None
    actor: str = "server"
    command_id: str | None = None
    sig: str | None = None
    receipt: dict[str, Any] | None = None


class CommandAnswer(Struct):
    """What a command got: the events it appended, the caller's view after them, and their receipt."""

    version: int
    head: str
    events: list[GameEvent]
    view: View
    receipt: dict[str, Any] | None = None


class EventsPage(Struct):
    version: int
    head: str
    events: list[GameEvent]
    receipt: dict[str, Any] | None = None


class PlayerCreated(Struct):
    player_id: str
    name: str
    token: str
    account: str = "person"
    """``bot`` for a bot account."""


class GameCreated(Struct):
    game_id: str
    kind: str
    seats: int
    seed_commitment: str
    version: int
    head: str
    seeding: str = "combined"


class SeatTaken(Struct):
    seat: int
    token: str
    player_id: str


class Queued(Struct):
    queue_id: str
    since: int


class QueueStatus(Struct):
    """``state``: ``waiting``, ``seating``, ``seated`` (with ``game_id``, ``seat``, ``token``), ``cancelled``
    (``reason``: queue again) or ``none`` (docs/queue.md)."""

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


class KindRating(Struct):
    rating: float
    mu: float
    sigma: float
    games: int


class PlayerInfo(Struct):
    player_id: str
    name: str
    results: Any = None
    ratings: dict[str, KindRating] = {}
    account: str = "person"


class RatingRow(Struct):
    rank: int
    player_id: str
    name: str
    rating: float
    mu: float
    sigma: float
    games: int


class Ratings(Struct):
    kind: str
    players: list[RatingRow]


class RatingChange(Struct):
    seat: int
    player_id: str
    name: str
    before: float
    after: float


class GameRatings(Struct):
    game_id: str
    kind: str
    rated: bool
    changes: list[RatingChange] = []


class GameSummary(Struct):
    game_id: str
    kind: str
    seats: int
    taken: int
    status: str
    created_at: int


class PlayerEvent(Struct):
    """One message of the player's stream (docs/player-stream.md): ``id`` its position (the stream resumes after
    it), ``type`` the SSE event. An event type this client does not know arrives as a plain ``PlayerEvent``."""

    type: str
    id: str = ""
    raw: dict[str, Any] = {}


class Seated(PlayerEvent, kw_only=True):
    game_id: str
    seat: int
    kind: str = ""


class Turn(PlayerEvent, kw_only=True):
    """A move of the player's is awaited at ``game_id`` since ``version`` (read the game: its ``legal`` is the truth)."""

    game_id: str
    seat: int
    version: int
    deadline_at: int | None = None


class GameOver(PlayerEvent, kw_only=True):
    """``result``: ``{"ended_by", "winner_seat", "won"}``; ``ratings``: where the rating change is read."""

    game_id: str
    seat: int
    version: int
    result: dict[str, Any] = {}
    rated: bool = False
    ratings: str | None = None

    @property
    def won(self) -> bool:
        return bool(self.result.get("won"))


class QueueEvent(PlayerEvent, kw_only=True):
    """``status``: ``waiting``, ``seated`` (``game_id``, ``seat``), ``cancelled`` (``reason``) or ``left``."""

    status: str
    game_id: str | None = None
    seat: int | None = None
    kind: str | None = None
    reason: str | None = None


PLAYER_EVENTS: dict[str, type[PlayerEvent]] = {"seated": Seated, "turn": Turn, "game_over": GameOver, "queue": QueueEvent}


def player_event_of(event: str, event_id: str, data: dict[str, Any]) -> PlayerEvent:
    """The typed event of one message (its SSE ``event``, ``id`` and decoded ``data``)."""
    fields = {**data, "type": event, "id": event_id}
    typed = msgspec.convert(fields, PLAYER_EVENTS.get(event, PlayerEvent))
    typed.raw = data
    return typed
