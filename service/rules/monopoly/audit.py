"""One line of plain words per Monopoly event, for audit logs: what happened, never what was hidden.

Squares are named as on the board, money is in dollars, the bank is "the bank". Dice, cards drawn and every
payment are public the moment they happen; the only secret is the order of the two decks, dealt at the start,
which ``secret_note`` spells out for a reader allowed it (an admin, an export) and no seat is ever shown whole.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import monopoly as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from .. import close
from ..setup import client_seed_note
from .board import HOTEL, name
from .cards import CARDS

_DECKS = {"chance": "Chance", "chest": "Community Chest"}


def _who(seat: int | None) -> str:
    return "the bank" if seat is None else f"seat {seat}"


def _lot(lot: ev.Lot) -> str:
    return f"a {lot}" if isinstance(lot, str) else name(lot)


def _squares(squares: tuple[int, ...]) -> str:
    return ", ".join(name(q) for q in squares)


def _level(level: int) -> str:
    if level == HOTEL:
        return "a hotel"
    return "no buildings" if level == 0 else f"{level} house{'s' if level != 1 else ''}"


def _holdings(h: ev.Holdings) -> str:
    parts = [f"${h.cash}"] if h.cash else []
    parts += [name(q) for q in h.squares]
    parts += [f"Get Out of Jail Free ({c})" for c in h.jail_cards]
    return ", ".join(parts) or "nothing"


@singledispatch
def summary(e: msgspec.Struct) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


@summary.register
def _(e: ev.GameCreated) -> str:
    c = e.config
    rounds = f"at most {c.max_rounds} rounds" if c.max_rounds else "until one player is left"
    answer = f"{c.response_seconds}s to answer"
    return f"game created: {c.seats} seats, {rounds}, {answer}, seed commitment {e.seed_commitment[:16]}…"


@summary.register
def _(e: SeatTaken) -> str:
    who = f"bot {e.player.bot}" if e.player.bot else e.player.name
    return f"seat {e.seat} taken by {who}{client_seed_note(e)}"


@summary.register
def _(e: ev.GameStarted) -> str:
    return f"game started: ${e.cash} each, Chance and Community Chest shuffled"


@summary.register
def _(e: ev.TurnBegan) -> str:
    return f"round {e.round}: seat {e.seat}'s turn"


@summary.register
def _(e: ev.DiceRolled) -> str:
    a, b = e.dice
    why = {
        "move": "",
        "jail": " in jail, for doubles",
        "utility": " for the utility's rent",
    }[e.purpose]
    double = " (doubles)" if a == b and e.purpose != "utility" else ""
    return f"seat {e.seat} rolls {a} and {b}{why}{double} (roll {e.n})"


@summary.register
def _(e: ev.Moved) -> str:
    salary = f", collecting ${e.salary} for passing GO" if e.salary else ""
    return f"seat {e.seat} moves from {name(e.from_)} to {name(e.to)}{salary}"


@summary.register
def _(e: ev.RollAgain) -> str:
    return f"seat {e.seat} rolled doubles: rolls again"


@summary.register
def _(e: ev.SentToJail) -> str:
    why = {
        "square": "landed on Go To Jail",
        "card": "by a card",
        "doubles": "three doubles in a row",
    }[e.why]
    return f"seat {e.seat} goes to jail ({why})"


@summary.register
def _(e: ev.JailRollFailed) -> str:
    return f"seat {e.seat} stays in jail: no doubles (try {e.attempt})"


@summary.register
def _(e: ev.LeftJail) -> str:
    how = {
        "doubles": "by rolling doubles",
        "card": f"with a Get Out of Jail Free card ({e.card})",
        "fine": "paying the $50 fine",
        "forced_fine": "paying the $50 fine after the third failed roll",
    }[e.how]
    return f"seat {e.seat} leaves jail {how}"


@summary.register
def _(e: ev.Paid) -> str:
    on = f" on {name(e.square)}" if e.square is not None and e.reason in ("rent", "interest") else ""
    return f"{_who(e.payer)} pays {_who(e.payee)} ${e.amount} ({e.reason}{on})"


@summary.register
def _(e: ev.CardDrawn) -> str:
    card = CARDS.get(e.card)
    text = f": {card.text}" if card else ""
    return f"seat {e.seat} draws {_DECKS[e.deck]} {e.card}{text}"


@summary.register
def _(e: ev.JailCardReturned) -> str:
    return f"seat {e.seat}'s Get Out of Jail Free card {e.card} goes to the bottom of {_DECKS[e.deck]}"


@summary.register
def _(e: ev.PurchaseOffered) -> str:
    return f"seat {e.seat} may buy {name(e.square)} for ${e.price}"


@summary.register
def _(e: ev.PropertyBought) -> str:
    return f"seat {e.seat} buys {name(e.square)} for ${e.price}"


@summary.register
def _(e: ev.TaxChoiceAwaited) -> str:
    return f"seat {e.seat} chooses the Income Tax: $200 or 10% of worth"


@summary.register
def _(e: ev.IncomeTaxChosen) -> str:
    if e.choice == "flat":
        return f"seat {e.seat} chooses the flat Income Tax: ${e.amount}"
    return f"seat {e.seat} chooses 10% of worth ${e.worth}: ${e.amount}"


@summary.register
def _(e: ev.AuctionOpened) -> str:
    return f"auction of {_lot(e.lot)} opens to seats {', '.join(map(str, e.bidders))}"


@summary.register
def _(e: ev.BidPlaced) -> str:
    return f"seat {e.seat} bids ${e.amount}"


@summary.register
def _(e: ev.BidPassed) -> str:
    return f"seat {e.seat} passes"


@summary.register
def _(e: ev.AuctionClosed) -> str:
    if e.winner is None:
        return f"auction of {_lot(e.lot)} closes unsold"
    on = f" for {name(e.square)}" if e.square is not None else ""
    return f"auction of {_lot(e.lot)} won by seat {e.winner} for ${e.amount}{on}"


@summary.register
def _(e: ev.Built) -> str:
    return f"seat {e.seat} builds on {name(e.square)} for ${e.price}: {_level(e.level)}"


@summary.register
def _(e: ev.BuildingSold) -> str:
    return f"seat {e.seat} sells buildings on {name(e.square)} back for ${e.refund}: {_level(e.level)} left"


@summary.register
def _(e: ev.BuildingsSoldOff) -> str:
    left = ", ".join(f"{name(q)} {_level(level)}" for q, level in zip(e.squares, e.levels, strict=True))
    return f"seat {e.seat} sells buildings back evenly for ${e.refund}: {left}"


@summary.register
def _(e: ev.ShortageDeclared) -> str:
    kind = "houses" if e.kind == "house" else "hotels"
    asked = ", ".join(name(q) for q in e.sites)
    return (
        f"building shortage: seat {e.seat} asks for {len(e.sites)} {kind} ({asked}), the bank holds {e.bank}; "
        f"seats {', '.join(map(str, e.claimants)) or 'none'} may claim theirs"
    )


@summary.register
def _(e: ev.BuildingsClaimed) -> str:
    return f"seat {e.seat} claims buildings for {_squares(e.sites)}" if e.sites else f"seat {e.seat} claims none"


@summary.register
def _(e: ev.ShortageResolved) -> str:
    return (
        "the claims exceed the bank: the buildings are auctioned one at a time"
        if e.auction
        else "the bank can supply every claim"
    )


@summary.register
def _(e: ev.Mortgaged) -> str:
    return f"seat {e.seat} mortgages {name(e.square)} for ${e.amount}"


@summary.register
def _(e: ev.MortgageLifted) -> str:
    return f"seat {e.seat} lifts the mortgage on {name(e.square)} for ${e.amount}"


@summary.register
def _(e: ev.TradeOffered) -> str:
    return f"trade {e.trade}: seat {e.seat} offers seat {e.to} {_holdings(e.give)} for {_holdings(e.get)}"


@summary.register
def _(e: ev.TradeAccepted) -> str:
    return f"trade {e.trade} accepted"


@summary.register
def _(e: ev.TradeClosed) -> str:
    return f"trade {e.trade} {e.why}"


@summary.register
def _(e: ev.DebtOwed) -> str:
    return f"seat {e.seat} owes {_who(e.creditor)} ${e.amount} ({e.reason}) and must raise it"


@summary.register
def _(e: ev.WentBankrupt) -> str:
    return f"seat {e.seat} goes bankrupt to {_who(e.creditor)}"


@summary.register
def _(e: ev.PropertyTransferred) -> str:
    return f"{name(e.square)} goes to {_who(e.to)}"


@summary.register
def _(e: ev.TurnEnded) -> str:
    return f"seat {e.seat}'s turn ends"


@summary.register
def _(e: ev.GameEnded) -> str:
    why = "the last player left" if e.reason == "last_player" else "the largest worth after the last round"
    worth = ", ".join(f"seat {i} ${w}" for i, w in enumerate(e.worth))
    return f"seat {e.winner} wins, {why}; worth {worth}"


@summary.register
def _(e: GameClosed) -> str:
    return close.summary(e)


@summary.register
def _(e: SeedRevealed) -> str:
    return f"seed revealed: {e.seed}"


def secret_note(e: msgspec.Struct) -> str:
    """The deck orders the game was dealt, top first, for a reader allowed to see them; "" for every other event."""
    if not isinstance(e, ev.GameStarted) or e.secret is None:
        return ""
    return f"Chance {' '.join(e.secret.chance)}; Community Chest {' '.join(e.secret.chest)}"


def secret_seen_by(e: msgspec.Struct, seat: int) -> bool:
    """No seat is ever shown a deck's order: a seat's record keeps no Monopoly secret."""
    return False
