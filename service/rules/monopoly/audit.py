"""One line of plain words per Monopoly event, for audit logs: what happened, never what was hidden.

Squares are named as on the board, money is in dollars, the bank is "the bank". Dice, cards drawn and every
payment are public the moment they happen; the only secret is the order of the two decks, dealt at the start,
which ``secret_note`` spells out for a reader allowed it (an admin, an export) and no seat is ever shown whole.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import monopoly as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed, TurnClockRestarted, TurnClockStopped

from .. import close
from ..clock import clock_words, restarted_words, stopped_words
from ..setup import client_seed_note
from ..words import Seats, Who, and_list, seat_words, seats_words
from .board import HOTEL, name
from .cards import CARDS

_DECKS = {"chance": "Chance", "chest": "Community Chest"}


def _who(seat: int | None, who: Who) -> str:
    return "the bank" if seat is None else who(seat)


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
def summary(e: msgspec.Struct, who: Who = seat_words) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


@summary.register
def _(e: ev.GameCreated, who: Who = seat_words) -> str:
    c = e.config
    rounds = f"at most {c.max_rounds} rounds" if c.max_rounds else "until one player is left"
    terms = [f"{c.seats} seats", rounds, f"{c.response_seconds}s to answer", clock_words(c)]
    return f"game created: {', '.join(filter(None, terms))}, seed commitment {e.seed_commitment[:16]}…"


@summary.register
def _(e: SeatTaken, who: Who = seat_words) -> str:
    taker = f"bot {e.player.bot}" if e.player.bot else e.player.name
    return f"{who(e.seat)} taken by {taker}{client_seed_note(e)}"


@summary.register
def _(e: ev.GameStarted, who: Who = seat_words) -> str:
    return f"game started: ${e.cash} each, Chance and Community Chest shuffled"


@summary.register
def _(e: ev.TurnBegan, who: Who = seat_words) -> str:
    return f"round {e.round}: {who(e.seat)}'s turn"


@summary.register
def _(e: ev.DiceRolled, who: Who = seat_words) -> str:
    a, b = e.dice
    why = {
        "move": "",
        "jail": " in jail, for doubles",
        "utility": " for the utility's rent",
    }[e.purpose]
    double = " (doubles)" if a == b and e.purpose != "utility" else ""
    return f"{who(e.seat)} rolls {a} and {b}{why}{double} (roll {e.n})"


@summary.register
def _(e: ev.Moved, who: Who = seat_words) -> str:
    salary = f", collecting ${e.salary} for passing GO" if e.salary else ""
    return f"{who(e.seat)} moves from {name(e.from_)} to {name(e.to)}{salary}"


@summary.register
def _(e: ev.RollAgain, who: Who = seat_words) -> str:
    return f"{who(e.seat)} rolled doubles: rolls again"


@summary.register
def _(e: ev.SentToJail, who: Who = seat_words) -> str:
    why = {
        "square": "landed on Go To Jail",
        "card": "by a card",
        "doubles": "three doubles in a row",
    }[e.why]
    return f"{who(e.seat)} goes to jail ({why})"


@summary.register
def _(e: ev.JailRollFailed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} stays in jail: no doubles (try {e.attempt})"


@summary.register
def _(e: ev.LeftJail, who: Who = seat_words) -> str:
    how = {
        "doubles": "by rolling doubles",
        "card": f"with a Get Out of Jail Free card ({e.card})",
        "fine": "paying the $50 fine",
        "forced_fine": "paying the $50 fine after the third failed roll",
    }[e.how]
    return f"{who(e.seat)} leaves jail {how}"


@summary.register
def _(e: ev.Paid, who: Who = seat_words) -> str:
    on = f" on {name(e.square)}" if e.square is not None and e.reason in ("rent", "interest") else ""
    return f"{_who(e.payer, who)} pays {_who(e.payee, who)} ${e.amount} ({e.reason}{on})"


@summary.register
def _(e: ev.CardDrawn, who: Who = seat_words) -> str:
    card = CARDS.get(e.card)
    text = f": {card.text}" if card else ""
    return f"{who(e.seat)} draws {_DECKS[e.deck]} {e.card}{text}"


@summary.register
def _(e: ev.JailCardReturned, who: Who = seat_words) -> str:
    return f"{who(e.seat)}'s Get Out of Jail Free card {e.card} goes to the bottom of {_DECKS[e.deck]}"


@summary.register
def _(e: ev.PurchaseOffered, who: Who = seat_words) -> str:
    return f"{who(e.seat)} may buy {name(e.square)} for ${e.price}"


@summary.register
def _(e: ev.PropertyBought, who: Who = seat_words) -> str:
    return f"{who(e.seat)} buys {name(e.square)} for ${e.price}"


@summary.register
def _(e: ev.TaxChoiceAwaited, who: Who = seat_words) -> str:
    return f"{who(e.seat)} chooses the Income Tax: $200 or 10% of worth"


@summary.register
def _(e: ev.IncomeTaxChosen, who: Who = seat_words) -> str:
    if e.choice == "flat":
        return f"{who(e.seat)} chooses the flat Income Tax: ${e.amount}"
    return f"{who(e.seat)} chooses 10% of worth ${e.worth}: ${e.amount}"


@summary.register
def _(e: ev.AuctionOpened, who: Who = seat_words) -> str:
    return f"auction of {_lot(e.lot)} opens to {seats_words(who, e.bidders)}"


@summary.register
def _(e: ev.BidPlaced, who: Who = seat_words) -> str:
    return f"{who(e.seat)} bids ${e.amount}"


@summary.register
def _(e: ev.BidPassed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} passes"


@summary.register
def _(e: ev.AuctionClosed, who: Who = seat_words) -> str:
    if e.winner is None:
        return f"auction of {_lot(e.lot)} closes unsold"
    on = f" for {name(e.square)}" if e.square is not None else ""
    return f"auction of {_lot(e.lot)} won by {who(e.winner)} for ${e.amount}{on}"


@summary.register
def _(e: ev.Built, who: Who = seat_words) -> str:
    return f"{who(e.seat)} builds on {name(e.square)} for ${e.price}: {_level(e.level)}"


@summary.register
def _(e: ev.BuildingSold, who: Who = seat_words) -> str:
    return f"{who(e.seat)} sells buildings on {name(e.square)} back for ${e.refund}: {_level(e.level)} left"


@summary.register
def _(e: ev.BuildingsSoldOff, who: Who = seat_words) -> str:
    left = ", ".join(f"{name(q)} {_level(level)}" for q, level in zip(e.squares, e.levels, strict=True))
    return f"{who(e.seat)} sells buildings back evenly for ${e.refund}: {left}"


@summary.register
def _(e: ev.ShortageDeclared, who: Who = seat_words) -> str:
    kind = "houses" if e.kind == "house" else "hotels"
    asked = ", ".join(name(q) for q in e.sites)
    return (
        f"building shortage: {who(e.seat)} asks for {len(e.sites)} {kind} ({asked}), the bank holds {e.bank}; "
        f"{seats_words(who, e.claimants) if e.claimants else 'seats none'} may claim theirs"
    )


@summary.register
def _(e: ev.BuildingsClaimed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} claims buildings for {_squares(e.sites)}" if e.sites else f"{who(e.seat)} claims none"


@summary.register
def _(e: ev.ShortageResolved, who: Who = seat_words) -> str:
    return (
        "the claims exceed the bank: the buildings are auctioned one at a time"
        if e.auction
        else "the bank can supply every claim"
    )


@summary.register
def _(e: ev.Mortgaged, who: Who = seat_words) -> str:
    return f"{who(e.seat)} mortgages {name(e.square)} for ${e.amount}"


@summary.register
def _(e: ev.MortgageLifted, who: Who = seat_words) -> str:
    return f"{who(e.seat)} lifts the mortgage on {name(e.square)} for ${e.amount}"


@summary.register
def _(e: ev.TradeOffered, who: Who = seat_words) -> str:
    return f"trade {e.trade}: {who(e.seat)} offers {who(e.to)} {_holdings(e.give)} for {_holdings(e.get)}"


@summary.register
def _(e: ev.TradeAccepted, who: Who = seat_words) -> str:
    return f"trade {e.trade} accepted"


@summary.register
def _(e: ev.TradeClosed, who: Who = seat_words) -> str:
    return f"trade {e.trade} {e.why}"


@summary.register
def _(e: ev.DebtOwed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} owes {_who(e.creditor, who)} ${e.amount} ({e.reason}) and must raise it"


@summary.register
def _(e: ev.WentBankrupt, who: Who = seat_words) -> str:
    return f"{who(e.seat)} goes bankrupt to {_who(e.creditor, who)}"


@summary.register
def _(e: ev.PropertyTransferred, who: Who = seat_words) -> str:
    return f"{name(e.square)} goes to {_who(e.to, who)}"


@summary.register
def _(e: ev.TurnEnded, who: Who = seat_words) -> str:
    return f"{who(e.seat)}'s turn ends"


@summary.register
def _(e: ev.TurnTimedOut, who: Who = seat_words) -> str:
    missed = f"{e.missed} missed turn{'s' if e.missed != 1 else ''} in a row"
    return f"time ran out: {who(e.seat)}'s turn was played for them: the server rolls ({missed})"


@summary.register
def _(e: TurnClockStopped, who: Who = seat_words) -> str:
    return stopped_words(e, who(e.seat))


@summary.register
def _(e: TurnClockRestarted, who: Who = seat_words) -> str:
    return restarted_words(e, who(e.seat))


@summary.register
def _(e: ev.SeatForfeited, who: Who = seat_words) -> str:
    return f"{who(e.seat)} forfeits after {e.missed} missed turns: bankrupt to the bank"


@summary.register
def _(e: ev.SeatResigned, who: Who = seat_words) -> str:
    return f"{who(e.seat)} resigns: bankrupt to the bank"


@summary.register
def _(e: ev.GameEnded, who: Who = seat_words) -> str:
    why = "the last player left" if e.reason == "last_player" else "the largest worth after the last round"
    worth = ", ".join(f"{who(i)} ${w}" for i, w in enumerate(e.worth))
    return f"{who(e.winner)} wins, {why}; worth {worth}"


@summary.register
def _(e: GameClosed, who: Who = seat_words) -> str:
    return close.summary(e)


@summary.register
def _(e: SeedRevealed, who: Who = seat_words) -> str:
    return f"seed revealed: {e.seed}"


def secret_note(e: msgspec.Struct) -> str:
    """The deck orders the game was dealt, top first, for a reader allowed to see them; "" for every other event."""
    if not isinstance(e, ev.GameStarted) or e.secret is None:
        return ""
    return f"Chance {' '.join(e.secret.chance)}; Community Chest {' '.join(e.secret.chest)}"


def secret_seen_by(e: msgspec.Struct, seat: int) -> bool:
    """No seat is ever shown a deck's order: a seat's record keeps no Monopoly secret."""
    return False


# --- the move log: players by name ----------------------------------------------------------------------------------

_TO_JAIL = {"square": "landed on Go To Jail", "card": "a card", "doubles": "the third doubles in a row"}


class Log:
    """The words of ``GET /games/{id}/log``: the audit's words with each player's name; the dice say who rolled them
    and, when the roll sent the roller to jail, that it did; what a deadline decided says so, and for whom."""

    def __init__(self) -> None:
        self.seats = Seats()
        self.trades: dict[int, tuple[int, int]] = {}  # trade id → (offered by, offered to)
        self.offer: tuple[int, int] | None = None  # (seat, square) of the purchase offered last
        self.owed: dict[int, tuple[int | None, int]] = {}  # debtor → (creditor, amount)
        self.unclaimed: tuple[int, ...] = ()  # who may still claim in a building shortage's window

    def line(self, e: msgspec.Struct, following: list[msgspec.Struct], timed_out: bool = False) -> str:
        n = self.seats.name
        if isinstance(e, SeatTaken):
            bot = f" ({e.player.bot} bot)" if e.player.bot else ""
            text = f"{e.player.name}{bot} takes seat {e.seat}"
        elif isinstance(e, ev.DiceRolled):
            text = summary(e, n) + self._jailed(e, following)
        elif isinstance(e, ev.TradeOffered):
            self.trades[e.trade] = (e.seat, e.to)
            text = summary(e, n)
        elif isinstance(e, ev.TradeAccepted | ev.TradeClosed):
            by, to = self.trades.get(e.trade, (None, None))
            offer = f"{n(by)}'s trade offer to {n(to)}" if by is not None and to is not None else f"trade {e.trade}"
            text = f"{offer} accepted" if isinstance(e, ev.TradeAccepted) else f"{offer} {e.why}" + (
                f" by {n(to)}" if e.why == "rejected" and to is not None else "")
        else:
            text = summary(e, n)
        if isinstance(e, ev.TurnTimedOut) and any(isinstance(x, ev.SeatForfeited) for x in following[:1]):
            text = f"time ran out on {n(e.seat)}'s turn ({e.missed} missed turns in a row)"
        elif timed_out and not isinstance(e, ev.TurnTimedOut):  # a turn's time out says so itself
            text = f"time ran out: {self._ran_out(e, following, text)}"
        self._track(e)
        self.seats.see(e)
        return text

    def _ran_out(self, e: msgspec.Struct, following: list[msgspec.Struct], text: str) -> str:
        """Whose wait the deadline ended and what the server chose for them, then ``text``: what that did."""
        n = self.seats.name
        if isinstance(e, ev.AuctionOpened) and self.offer is not None and self.offer[1] == e.lot:
            return f"{n(self.offer[0])} did not buy {name(self.offer[1])}; {text}"
        if isinstance(e, ev.IncomeTaxChosen):
            return f"for {n(e.seat)}, the server chose the flat Income Tax: ${e.amount}"
        if isinstance(e, ev.AuctionClosed):
            return f"the bidding ends: {text}"
        if isinstance(e, ev.ShortageResolved):
            late = f" ({and_list([n(q) for q in self.unclaimed])} claimed nothing)" if self.unclaimed else ""
            return f"the claims are closed{late}: {text}"
        if isinstance(e, ev.TradeClosed) and e.trade in self.trades:
            return f"{n(self.trades[e.trade][1])} did not answer: {text}"
        bankrupt = next((x for x in [e, *following] if isinstance(x, ev.WentBankrupt)), None)
        if bankrupt is not None:
            creditor, amount = self.owed.get(bankrupt.seat, (bankrupt.creditor, 0))
            owed = f" the ${amount} owed to {_who(creditor, n)}" if amount else ""
            return f"{n(bankrupt.seat)} did not raise{owed}, so the server declared them bankrupt: {text}"
        return text

    def _track(self, e: msgspec.Struct) -> None:
        """The open waits a deadline may end, so that its line can say whose they were."""
        if isinstance(e, ev.PurchaseOffered):
            self.offer = (e.seat, e.square)
        elif isinstance(e, ev.PropertyBought | ev.AuctionClosed):
            self.offer = None
        elif isinstance(e, ev.DebtOwed):
            self.owed[e.seat] = (e.creditor, e.amount)
        elif isinstance(e, ev.WentBankrupt):
            self.owed.pop(e.seat, None)
        elif isinstance(e, ev.ShortageDeclared):
            self.unclaimed = e.claimants
        elif isinstance(e, ev.BuildingsClaimed):
            self.unclaimed = tuple(q for q in self.unclaimed if q != e.seat)

    @staticmethod
    def _jailed(e: ev.DiceRolled, following: list[msgspec.Struct]) -> str:
        """", sent to jail (…)" when this roll put its roller there: the events up to the next roll or turn say so."""
        if e.purpose != "move":
            return ""
        for later in following:
            if isinstance(later, ev.DiceRolled | ev.TurnBegan | ev.TurnEnded):
                break
            if isinstance(later, ev.SentToJail) and later.seat == e.seat:
                return f": sent to jail ({_TO_JAIL[later.why]})"
        return ""

    def notice(self, e: msgspec.Struct, me: int) -> str | None:
        """What ``e`` did to the player at seat ``me``, in words to them; ``None``: nothing of theirs."""
        n = self.seats.name
        if isinstance(e, ev.TradeOffered) and e.to == me:
            return f"{n(e.seat)} offers you a trade: {_holdings(e.give)} for {_holdings(e.get)}"
        if isinstance(e, ev.TradeClosed | ev.TradeAccepted):
            by, to = self.trades.get(e.trade, (None, None))
            if by == me and to is not None:
                return f"{n(to)} accepted your trade offer" if isinstance(e, ev.TradeAccepted) else (
                    f"{n(to)} rejected your trade offer" if e.why == "rejected" else f"Your trade offer to {n(to)} {e.why}")
        if isinstance(e, ev.SentToJail) and e.seat == me:
            return f"You go to jail ({_TO_JAIL[e.why]})"
        if isinstance(e, ev.WentBankrupt) and e.seat == me:
            return "You are bankrupt"
        return None
