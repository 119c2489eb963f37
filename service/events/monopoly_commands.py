"""Monopoly's commands and the value types its events share with them (RULES.md §3): what a player may send, as
``service/events/monopoly.py`` re-exports it beside the events.

Squares are numbered 0..39 from GO (``service/rules/monopoly/board.py``). Money is whole dollars.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .base import Command
from .common import Close, Create, Resign, TakeSeat, Timeout

Square = Annotated[int, msgspec.Meta(ge=0, le=39)]
Dollars = Annotated[int, msgspec.Meta(ge=0, le=10**9)]
SeatNo = Annotated[int, msgspec.Meta(ge=0, le=7)]
CardId = Annotated[str, msgspec.Meta(pattern="^(CH|CC)[0-9]{2}$")]
Deck = Literal["chance", "chest"]
Level = Annotated[int, msgspec.Meta(ge=0, le=5)]
"""Buildings on a site: 0–4 houses, 5 a hotel."""
Lot = Square | Literal["house", "hotel"]


class Holdings(
    msgspec.Struct,
    frozen=True,
    omit_defaults=True,
    kw_only=True,
    forbid_unknown_fields=True,
):
    """One side of a trade: cash, properties (by square) and Get Out of Jail Free cards (by id)."""

    cash: Dollars = 0
    squares: Annotated[tuple[Square, ...], msgspec.Meta(max_length=28)] = ()
    jail_cards: Annotated[tuple[CardId, ...], msgspec.Meta(max_length=2)] = ()


# --- commands ------------------------------------------------------------------------------------


class Roll(Command, tag="roll"):
    """Roll to move; in jail, roll for doubles."""


class PayFine(Command, tag="pay_fine"):
    """In jail, before rolling: pay $50 and roll as usual."""


class UseJailCard(Command, tag="use_jail_card"):
    """In jail, before rolling: use a Get Out of Jail Free card held."""


class Buy(Command, tag="buy"):
    """Buy the property just landed on at its price."""


class Decline(Command, tag="decline"):
    """Do not buy it: the bank auctions it."""


class ChooseTax(Command, tag="choose_tax"):
    choice: Literal["flat", "percent"]


class Bid(Command, tag="bid"):
    amount: Annotated[int, msgspec.Meta(ge=1, le=10**9)]


class PassBid(Command, tag="pass_bid"):
    """Leave the auction open now; a pass is final for that lot."""


class Build(Command, tag="build"):
    """Buy buildings in the order listed, one per entry (a site may be listed again): each must keep the group
    even. A site with four houses where the whole group has four takes the hotel."""

    sites: Annotated[tuple[Square, ...], msgspec.Meta(min_length=1, max_length=60)]


class ClaimBuildings(Command, tag="claim_buildings"):
    """In a shortage window: the buildings this owner wants too (an empty list: none)."""

    sites: Annotated[tuple[Square, ...], msgspec.Meta(max_length=60)]


class SellBuilding(Command, tag="sell_building"):
    """Sell one building back (a hotel goes back to four houses, or fewer if the bank is short), evenly.

    ``levels`` (rules version 2): the owner's choice of how the group stands after a hotel sold short of houses,
    its sites' levels in board order, one of the arrangements that sell no more than the bank's houses require;
    empty: the server's default (RULES.md §3, ``docs/rules-monopoly.md``)."""

    square: Square
    levels: Annotated[tuple[Level, ...], msgspec.Meta(max_length=3)] = ()


class Mortgage(Command, tag="mortgage"):
    square: Square


class LiftMortgage(Command, tag="lift_mortgage"):
    square: Square


class OfferTrade(Command, tag="offer_trade"):
    to: SeatNo
    give: Holdings = Holdings()
    get: Holdings = Holdings()


class AcceptTrade(Command, tag="accept_trade"):
    trade: Annotated[int, msgspec.Meta(ge=1)]


class RejectTrade(Command, tag="reject_trade"):
    trade: Annotated[int, msgspec.Meta(ge=1)]


class WithdrawTrade(Command, tag="withdraw_trade"):
    trade: Annotated[int, msgspec.Meta(ge=1)]


class DeclareBankruptcy(Command, tag="declare_bankruptcy"):
    """Give up: everything goes to the creditor (or the bank)."""


MonopolyClientCommand = (
    Roll
    | PayFine
    | UseJailCard
    | Buy
    | Decline
    | ChooseTax
    | Bid
    | PassBid
    | Build
    | ClaimBuildings
    | SellBuilding
    | Mortgage
    | LiftMortgage
    | OfferTrade
    | AcceptTrade
    | RejectTrade
    | WithdrawTrade
    | DeclareBankruptcy
    | Resign
)

MonopolyCommand = MonopolyClientCommand | Create | TakeSeat | Timeout | Close
