"""The card game's vocabulary: its config, every event, every command (RULES.md §1, API.md)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .base import Command, Config, Event, Player, Secret
from .common import (
    CardId,
    Close,
    Create,
    GameClosed,
    GameCreatedBase,
    Resign,
    Seat,
    SeatTaken,
    SeedRevealed,
    TakeSeat,
    Timeout,
    TurnClockRestarted,
    TurnClockStopped,
)

Position = Annotated[int, msgspec.Meta(ge=0, le=255)]


class FreeParkingConfig(Config):
    seats: Annotated[int, msgspec.Meta(ge=2, le=8)]
    mode: Literal["standard", "tournament"] = "standard"
    response_seconds: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 15
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=86400)] | None = None
    """The turn clock: a turn not played by then is played by the server (``TurnTimedOut``); none: no clock."""
    forfeit_after: Annotated[int, msgspec.Meta(ge=1, le=100)] = 3
    """Missed turns in a row after which a seat forfeits (``SeatForfeited``); only with a turn clock."""


# --- events -------------------------------------------------------------------------------------


class GameCreated(GameCreatedBase, tag="game_created"):
    config: FreeParkingConfig


class DealSecret(Secret):
    hands: tuple[tuple[str, ...], ...]
    deck: tuple[str, ...]
    second_chance: tuple[str, ...]


class RoundDealt(Event, tag="round_dealt"):
    """Both decks shuffled (streams ``deal:<round>:playing`` and ``deal:<round>:second_chance``), five cards each."""

    round: int
    dealer: int
    hand_size: int
    secret: DealSecret | None = None


class TurnBegan(Event, tag="turn_began"):
    """``deadline_at``: when the turn clock runs out (the game's ``turn_seconds``); absent without one."""

    seat: int
    turn: int
    deadline_at: int | None = None


class CardsSecret(Secret):
    cards: tuple[str, ...]


class CardsDrawn(Event, tag="cards_drawn"):
    """Cards from the top of the playing deck into a hand: the turn's draw to six, a swap, or a Second Chance."""

    seat: int
    count: int
    reason: Literal["turn", "swap", "second_chance"]
    secret: CardsSecret | None = None


class OrderSecret(Secret):
    order: tuple[str, ...]


class DeckReshuffled(Event, tag="deck_reshuffled"):
    """An exhausted deck's discards shuffled and placed under what is left of it."""

    deck: Literal["playing", "second_chance"]
    count: int
    reshuffle: int
    secret: OrderSecret | None = None


class MeterFed(Event, tag="meter_fed"):
    seat: int
    card: str
    minutes: int
    meter: int


class ErrandRun(Event, tag="errand_run"):
    """A Point card played face up; with ``free_parking`` set, no time was deducted."""

    seat: int
    card: str
    value: int
    meter: int
    points: int
    free_parking: str | None = None


class ThreeSwapped(Event, tag="three_swapped"):
    seat: int
    cards: tuple[str, str, str]


class CardDiscarded(Event, tag="card_discarded"):
    seat: int
    card: str


class TimeExpiresPlayed(Event, tag="time_expires_played"):
    seat: int
    card: str
    target: int


class OfficerJonesPlayed(Event, tag="officer_jones_played"):
    """An interrupt: any seat, any time no one's answer is awaited."""

    seat: int
    card: str
    target: int
    out_of_turn: bool


class SecondChanceDrawn(Event, tag="second_chance_drawn"):
    seat: int
    card: str
    effect: str


class ResponseAwaited(Event, tag="response_awaited"):
    """The game waits for ``seat`` to accept an action against them or talk their way out of it."""

    seat: int
    action: str
    by: int
    card: str
    deadline_at: int


class ChoiceAwaited(Event, tag="choice_awaited"):
    """The game waits for ``seat`` to choose a target, one of their Point cards, or an unseen position."""

    seat: int
    choice: Literal["target", "card", "position"]
    options: tuple[int | str, ...]
    deadline_at: int


class TalkedOut(Event, tag="talked_out"):
    """Talk Your Way Out of It: the action against ``seat`` is cancelled; both cards are discarded."""

    seat: int
    card: str
    cancelled: str


class Accepted(Event, tag="accepted"):
    seat: int
    by_server: bool = False


class Chosen(Event, tag="chosen"):
    """A choice made: by the seat, by the server on timeout or for a seat that resigned, or forced when only one
    option existed."""

    seat: int
    choice: Literal["target", "card", "position"]
    value: int | str
    how: Literal["seat", "timeout", "only_option", "resigned"] = "seat"
    """``resigned``: the seat resigned while the choice was its to make, and the server made it (its default)."""


class MeterSet(Event, tag="meter_set"):
    seat: int
    meter: int
    cause: str


class PointCardsFanned(Event, tag="point_cards_fanned"):
    """A target's Point cards turned face down in an order of the RNG (stream ``unseen:<seq>``)."""

    seat: int
    count: int
    secret: OrderSecret | None = None


class PointCardMoved(Event, tag="point_card_moved"):
    """A Point card leaves ``seat``'s table: to another seat's, or (``to`` absent) to the discard pile."""

    seat: int
    card: str
    cause: str
    to: int | None = None


class PlacesTraded(Event, tag="places_traded"):
    """The players at the two seats exchange places; the seats keep meters, hands and Point cards."""

    seat: int
    other: int


class ActionResolved(Event, tag="action_resolved"):
    """The card that started an action goes to its discard pile."""

    card: str
    cancelled: bool = False


class TurnEnded(Event, tag="turn_ended"):
    seat: int


class TurnTimedOut(Event, tag="turn_timed_out"):
    """The turn clock ran out: the server played the seat's turn — discarded ``card``, its lowest (none: the main play
    was made, or the hand was empty), then ends the turn. ``missed``: the seat's missed turns in a row, this one too."""

    seat: int
    missed: int
    card: str | None = None


class SeatForfeited(Event, tag="seat_forfeited"):
    """After ``missed`` turns in a row timed out, the seat is out: its turns are skipped, it is no one's target, its
    hand stays face down out of play, and its Point cards (and total) stay as they are."""

    seat: int
    player: Player
    missed: int


class SeatResigned(Event, tag="seat_resigned"):
    """The player resigned (``resign``): the seat is out exactly as a forfeited one is — its turns are skipped, it is
    no one's target, its hand stays face down out of play and its Point cards (and total) stay as they are. Never
    undone."""

    seat: int
    player: Player


class RoundEnded(Event, tag="round_ended"):
    """Tournament mode: a seat reached 150; each seat's round score (its Point cards, +25 for ``seat``) is added to
    its player's cumulative total. Per seat, in seat order."""

    round: int
    seat: int
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class GameWon(Event, tag="game_won"):
    """The game's winner: at 200 points, or in tournament mode with the highest cumulative total (``points``)."""

    seat: int
    player: Player
    points: int


FreeParkingEvent = (
    GameCreated
    | SeatTaken
    | RoundDealt
    | TurnBegan
    | CardsDrawn
    | DeckReshuffled
    | MeterFed
    | ErrandRun
    | ThreeSwapped
    | CardDiscarded
    | TimeExpiresPlayed
    | OfficerJonesPlayed
    | SecondChanceDrawn
    | ResponseAwaited
    | ChoiceAwaited
    | TalkedOut
    | Accepted
    | Chosen
    | MeterSet
    | PointCardsFanned
    | PointCardMoved
    | PlacesTraded
    | ActionResolved
    | TurnEnded
    | TurnTimedOut
    | SeatForfeited
    | SeatResigned
    | RoundEnded
    | GameWon
    | SeedRevealed
    | GameClosed
    | TurnClockStopped
    | TurnClockRestarted
)


# --- commands -----------------------------------------------------------------------------------


class FeedMeter(Command, tag="feed_meter"):
    card: CardId


class RunErrand(Command, tag="run_errand"):
    card: CardId


class FreeParking(Command, tag="free_parking"):
    card: CardId
    errand: CardId


class TimeExpires(Command, tag="time_expires"):
    card: CardId
    target: Seat


class SwapThree(Command, tag="swap_three"):
    cards: tuple[CardId, CardId, CardId]


class Discard(Command, tag="discard"):
    card: CardId


class DrawSecondChance(Command, tag="draw_second_chance"):
    pass


class EndTurn(Command, tag="end_turn"):
    pass


class OfficerJones(Command, tag="officer_jones"):
    card: CardId
    target: Seat


class TalkOut(Command, tag="talk_out"):
    card: CardId


class Accept(Command, tag="accept"):
    pass


class Choose(Command, tag="choose"):
    """Exactly one of the fields, the one the awaited choice asks for."""

    card: CardId | None = None
    target: Seat | None = None
    position: Position | None = None


FreeParkingClientCommand = (
    FeedMeter
    | RunErrand
    | FreeParking
    | TimeExpires
    | SwapThree
    | Discard
    | DrawSecondChance
    | EndTurn
    | OfficerJones
    | TalkOut
    | Accept
    | Choose
    | Resign
)
"""What a seat may send (the request body of ``POST /games/{id}/commands``)."""

SERVER_COMMANDS = (Create, TakeSeat, Timeout, Close)

FreeParkingCommand = FreeParkingClientCommand | Create | TakeSeat | Timeout | Close
"""Every command the rules decide: a seat's, or the server's own."""
