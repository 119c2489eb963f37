"""The solitaire's vocabulary: its config, every event, every command (RULES.md §2).

The board is face up, so no event has a secret part: the seed stays hidden only because it decides the
redeals still to come. Rows are numbered 0..3 and slots 1..13 (slot 1 is the one the rules name), the
same convention as ``service/rules/solitaire/layout.py``.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .base import Command, Config, Event
from .common import Close, Create, GameClosed, GameCreatedBase, Resign, SeatTaken, SeedRevealed, TakeSeat

CardText = Annotated[str, msgspec.Meta(pattern="^[A23456789TJQK][CDHS]$")]
RowIndex = Annotated[int, msgspec.Meta(ge=0, le=3)]
SlotNumber = Annotated[int, msgspec.Meta(ge=1, le=13)]
LayoutRows = tuple[tuple[CardText | None, ...], ...]
"""Four rows of thirteen slots, ``null`` for a gap."""


class SolitaireConfig(Config):
    """One seat, always (``seats`` is still written, as every kind's config has it). ``seed_chosen`` marks a game
    on a seed the player picked (set by the service when ``POST /games`` names a seed), so statistics can tell
    it apart."""

    seats: Annotated[int, msgspec.Meta(ge=1, le=1)]
    seed_chosen: bool = False


class Place(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    row: RowIndex
    slot: SlotNumber


# --- events -------------------------------------------------------------------------------------


class GameCreated(GameCreatedBase, tag="game_created"):
    config: SolitaireConfig


class LayoutDealt(Event, tag="layout_dealt"):
    """The opening deal (stream ``deal``), aces already taken out: public, the cards lie face up."""

    layout: LayoutRows


class CardMoved(Event, tag="card_moved"):
    card: CardText
    from_: Place = msgspec.field(name="from")
    to: Place


class Redealt(Event, tag="redealt"):
    """Redeal ``k`` (stream ``redeal:<k>``): runs kept, the rest dealt back with one gap after each run."""

    k: int
    layout: LayoutRows


class Undone(Event, tag="undone"):
    """A compensating event: the step at seq ``undoes`` (a ``card_moved`` or ``redealt``) is taken back.

    ``layout`` is the position restored, written out so that a reader of the log needs no history.
    """

    undoes: int
    step: Literal["card_moved", "redealt"]
    layout: LayoutRows


class GameWon(Event, tag="game_won"):
    redeals_used: int


class GameLost(Event, tag="game_lost"):
    reason: Literal["no_moves", "resigned"]
    runs: tuple[int, int, int, int]


SolitaireEvent = (
    GameCreated
    | SeatTaken
    | LayoutDealt
    | CardMoved
    | Redealt
    | Undone
    | GameWon
    | GameLost
    | SeedRevealed
    | GameClosed
)


# --- commands ------------------------------------------------------------------------------------


class Move(Command, tag="move"):
    """Move ``card`` to the gap at ``to``: a card can fit two gaps, and a two any slot-1 gap, so the gap is named."""

    card: CardText
    to: Place


class Redeal(Command, tag="redeal"):
    pass


class Undo(Command, tag="undo"):
    pass


SolitaireClientCommand = Move | Redeal | Undo | Resign

SERVER_COMMANDS = (Create, TakeSeat, Close)

SolitaireCommand = SolitaireClientCommand | Create | TakeSeat | Close
