"""Monopoly's vocabulary: its config, every event, every command (RULES.md §3).

from .monopoly_commands import (  # noqa: F401 - one vocabulary: ev.Roll beside ev.DiceRolled
    AcceptTrade, Bid, Build, Buy, CardId, ChooseTax, ClaimBuildings, Deck, DeclareBankruptcy, Decline, Dollars,
    Holdings, Level, LiftMortgage, Lot, MonopolyClientCommand, MonopolyCommand, Mortgage, OfferTrade, PassBid,
    PayFine, RejectTrade, Roll, SeatNo, SellBuilding, Square, UseJailCard, WithdrawTrade,
)

Squares are numbered 0..39 from GO (``service/rules/monopoly/board.py``). Money is whole dollars. A seat of
``None`` in a payment is the bank. Dice are public the moment they are rolled; the only secret is the order of
the two card decks, shuffled once at the start (streams ``deck:chance`` and ``deck:chest``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .base import Config, Event, Player, Secret
from .common import (  # noqa: F401 - the commands every kind shares, read here as Monopoly's (ev.Resign)
    Close, Create, GameClosed, GameCreatedBase, Resign, SeatTaken, SeedRevealed, TakeSeat, Timeout, TurnClockRestarted,
    TurnClockStopped,
)
from .monopoly_commands import (  # noqa: F401 - the vocabulary is read as one module: ev.Roll beside ev.DiceRolled
    AcceptTrade,
    Bid,
    Build,
    Buy,
    CardId,
    ChooseTax,
    ClaimBuildings,
    Deck,
    DeclareBankruptcy,
    Decline,
    Dollars,
    Holdings,
    Level,
    LiftMortgage,
    Lot,
    MonopolyClientCommand,
    MonopolyCommand,
    Mortgage,
    OfferTrade,
    PassBid,
    PayFine,
    RejectTrade,
    Roll,
    SeatNo,
    SellBuilding,
    Square,
    UseJailCard,
    WithdrawTrade,
)

class MonopolyConfig(Config):
    """``max_rounds``: end after that many rounds, the largest worth winning (none: play until one is left).
    ``response_seconds``: every wait on a player (a purchase, a tax choice, a bid, a trade answer, a debt, a
    building claim) ends that long after it opens, or after the last bid."""

    seats: Annotated[int, msgspec.Meta(ge=2, le=8)]
    max_rounds: Annotated[int, msgspec.Meta(ge=1, le=10_000)] | None = None
    response_seconds: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 30
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=86400)] | None = None
    """The turn clock: a roll not made by then is made by the server (``TurnTimedOut``); none: no clock."""
    forfeit_after: Annotated[int, msgspec.Meta(ge=1, le=100)] = 3
    """Missed turns in a row after which a player forfeits (``SeatForfeited``, then bankrupt to the bank)."""


# --- events -------------------------------------------------------------------------------------


class GameCreated(GameCreatedBase, tag="game_created"):
    config: MonopolyConfig


class DeckOrder(Secret):
    chance: tuple[str, ...]
    chest: tuple[str, ...]


class GameStarted(Event, tag="game_started"):
    """Every seat taken: each player gets the starting cash, both decks are shuffled (the order is the secret)."""

    cash: int
    secret: DeckOrder | None = None


class TurnBegan(Event, tag="turn_began"):
    """``deadline_at``: when the turn clock runs out for the roll (the game's ``turn_seconds``); absent without one."""

    seat: int
    round: int
    deadline_at: int | None = None


class DiceRolled(Event, tag="dice_rolled"):
    """Roll ``n`` of the game (stream ``dice:<n>``). ``purpose``: a move, a try for doubles in jail, or the fresh
    throw a utility card asks for."""

    seat: int
    n: int
    dice: tuple[int, int]
    purpose: Literal["move", "jail", "utility"]


class Moved(Event, tag="moved"):
    """``salary``: $200 from the bank for passing (or landing on) GO on the way, else 0."""

    seat: int
    from_: int = msgspec.field(name="from")
    to: int
    salary: int = 0


class RollAgain(Event, tag="roll_again"):
    """The move from doubles is settled: the same player rolls again (by ``deadline_at`` with a turn clock)."""

    seat: int
    deadline_at: int | None = None


class SentToJail(Event, tag="sent_to_jail"):
    seat: int
    why: Literal["square", "card", "doubles"]


class JailRollFailed(Event, tag="jail_roll_failed"):
    seat: int
    attempt: int


class LeftJail(Event, tag="left_jail"):
    seat: int
    how: Literal["doubles", "card", "fine", "forced_fine"]
    card: str | None = None


class Paid(Event, tag="paid"):
    """Money from ``payer`` to ``payee`` (``None``: the bank)."""

    payer: int | None
    payee: int | None
    amount: int
    reason: Literal[
        "rent",
        "tax",
        "fine",
        "card",
        "salary",
        "interest",
        "debt",
        "trade",
        "bankruptcy",
    ]
    square: int | None = None


class CardDrawn(Event, tag="card_drawn"):
    """The top card of ``deck``; it goes to the bottom at once, except a Get Out of Jail Free card, which is kept."""

    seat: int
    deck: Deck
    card: str


class JailCardReturned(Event, tag="jail_card_returned"):
    """A Get Out of Jail Free card goes back to the bottom of its own deck (used, or its holder went bankrupt)."""

    seat: int
    card: str
    deck: Deck


class PurchaseOffered(Event, tag="purchase_offered"):
    seat: int
    square: int
    price: int
    deadline_at: int


class PropertyBought(Event, tag="property_bought"):
    seat: int
    square: int
    price: int


class TaxChoiceAwaited(Event, tag="tax_choice_awaited"):
    seat: int
    deadline_at: int


class IncomeTaxChosen(Event, tag="income_tax_chosen"):
    """The choice first, then the worth it is computed on (``None`` for the flat $200, which needs none)."""

    seat: int
    choice: Literal["flat", "percent"]
    worth: int | None
    amount: int


class AuctionOpened(Event, tag="auction_opened"):
    """A lot for the bidders: a property by square (declined, or a bankrupt's to the bank) or a scarce building."""

    lot: Lot
    bidders: tuple[int, ...]
    deadline_at: int


class BidPlaced(Event, tag="bid_placed"):
    seat: int
    amount: int
    deadline_at: int


class BidPassed(Event, tag="bid_passed"):
    seat: int


class AuctionClosed(Event, tag="auction_closed"):
    """To ``winner`` for ``amount`` (paid to the bank), or unsold (``winner`` ``None``)."""

    lot: Lot
    winner: int | None
    amount: int
    square: int | None = None
    """For a building lot: the site it went on."""


class Built(Event, tag="built"):
    """A house (``level`` 1–4) or the hotel (``level`` 5) bought from the bank for ``price``."""

    seat: int
    square: int
    level: int
    price: int


class BuildingSold(Event, tag="building_sold"):
    """Buildings sold back at half price: the site goes down to ``level``."""

    seat: int
    square: int
    level: int
    refund: int


class BuildingsSoldOff(Event, tag="buildings_sold_off"):
    """Several sites of one group brought down at once, so the group is never uneven in between: a hotel sold
    with the bank short of houses, or a bankrupt's buildings. ``levels`` are the sites' levels after."""

    seat: int
    squares: tuple[int, ...]
    levels: tuple[int, ...]
    refund: int


class ShortageDeclared(Event, tag="shortage_declared"):
    """A build asks for more ``kind`` than the bank holds: other owners of complete groups may claim theirs."""

    seat: int
    kind: Literal["house", "hotel"]
    sites: tuple[int, ...]
    bank: int
    claimants: tuple[int, ...]
    deadline_at: int


class BuildingsClaimed(Event, tag="buildings_claimed"):
    seat: int
    sites: tuple[int, ...]


class ShortageResolved(Event, tag="shortage_resolved"):
    """``auction``: the claims together exceed the bank, so the buildings go one at a time to the highest bidder."""

    auction: bool


class Mortgaged(Event, tag="mortgaged"):
    seat: int
    square: int
    amount: int


class MortgageLifted(Event, tag="mortgage_lifted"):
    seat: int
    square: int
    amount: int


class TradeOffered(Event, tag="trade_offered"):
    trade: int
    """The trade's id: the seq of this event."""
    seat: int
    to: int
    give: Holdings
    get: Holdings
    deadline_at: int


class TradeAccepted(Event, tag="trade_accepted"):
    """Each side gets what the other gave."""

    trade: int


class TradeClosed(Event, tag="trade_closed"):
    trade: int
    why: Literal["rejected", "withdrawn", "expired", "void"]


class DebtOwed(Event, tag="debt_owed"):
    """``seat`` owes ``amount`` it has not got in cash: it must raise it by ``deadline_at`` or go bankrupt. Debts
    are paid in the order they arose, each as soon as its debtor has the cash (a ``paid`` event, reason ``debt``)."""

    seat: int
    creditor: int | None
    amount: int
    reason: str
    deadline_at: int


class WentBankrupt(Event, tag="went_bankrupt"):
    """Everything left goes to ``creditor`` (a seat), or to the bank, which auctions the properties."""

    seat: int
    creditor: int | None


class PropertyTransferred(Event, tag="property_transferred"):
    """A bankrupt's property to its creditor, or to the bank (``to`` ``None``), mortgaged or not."""

    square: int
    to: int | None


class TurnEnded(Event, tag="turn_ended"):
    seat: int


class TurnTimedOut(Event, tag="turn_timed_out"):
    """The turn clock ran out before ``seat`` rolled: the server rolls for them (the events that follow), and counts
    a missed turn: ``missed`` in a row, this one too."""

    seat: int
    missed: int


class SeatForfeited(Event, tag="seat_forfeited"):
    """After ``missed`` timed-out turns in a row the player is out: bankrupt to the bank (``went_bankrupt`` follows)."""

    seat: int
    player: Player
    missed: int


class SeatResigned(Event, tag="seat_resigned"):
    """The player resigned (``resign``): out, bankrupt to the bank exactly as a forfeit (``went_bankrupt`` follows);
    what they were part of — their bids, trade offers, debts — lapses first. Never undone."""

    seat: int
    player: Player


class GameEnded(Event, tag="game_ended"):
    """Won by the last player left, or after ``max_rounds`` by the largest worth (ties: the most cash, then the
    earliest seat). ``worth`` per seat, 0 for the bankrupt."""

    winner: int
    reason: Literal["last_player", "max_rounds"]
    worth: tuple[int, ...]


MonopolyEvent = (
    GameCreated
    | SeatTaken
    | GameStarted
    | TurnBegan
    | DiceRolled
    | Moved
    | RollAgain
    | SentToJail
    | JailRollFailed
    | LeftJail
    | Paid
    | CardDrawn
    | JailCardReturned
    | PurchaseOffered
    | PropertyBought
    | TaxChoiceAwaited
    | IncomeTaxChosen
    | AuctionOpened
    | BidPlaced
    | BidPassed
    | AuctionClosed
    | Built
    | BuildingSold
    | BuildingsSoldOff
    | ShortageDeclared
    | BuildingsClaimed
    | ShortageResolved
    | Mortgaged
    | MortgageLifted
    | TradeOffered
    | TradeAccepted
    | TradeClosed
    | DebtOwed
    | WentBankrupt
    | PropertyTransferred
    | TurnEnded
    | TurnTimedOut
    | SeatForfeited
    | SeatResigned
    | GameEnded
    | SeedRevealed
    | GameClosed
    | TurnClockStopped
    | TurnClockRestarted
)
