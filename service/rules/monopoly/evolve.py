"""``evolve``: the total fold of Monopoly's events into the table. No choices are made here.

Every event carries what it changed (a payment its amount, a move its salary, a sale its refund), so folding
needs neither the seed nor the rules' checks; a log without its secret (the deck order) still folds, the decks
then known only from the cards seen drawn.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import monopoly as ev
from service.events.common import GameClosed, SeatTaken, TurnClockRestarted, TurnClockStopped

from ..clock import clock_held
from ..close import closed_of
from ..setup import seeded
from .board import HOTEL, JAIL
from .cards import JAIL_CARDS
from .progress import moves_on
from .state import Auction, Claim, Debt, Offer, SeatState, Shortage, State, Trade

replace = msgspec.structs.replace


def evolve(state: State, event: msgspec.Struct) -> State:
    version = state.version + 1
    s = _apply(event, state, version)
    return replace(s, version=version, progress=version if moves_on(s.rules_version, event) else s.progress)


def _seat(s: State, i: int, **changes: object) -> State:
    seats = list(s.seats)
    seats[i] = replace(seats[i], **changes)
    return replace(s, seats=tuple(seats))


def _cash(s: State, i: int | None, delta: int) -> State:
    return s if i is None else _seat(s, i, cash=s.seats[i].cash + delta)


def _site(s: State, square: int, **changes: object) -> State:
    sites = list(s.sites)
    sites[square] = replace(sites[square], **changes)
    return replace(s, sites=tuple(sites))


def _buildings(s: State, before: int, after: int) -> State:
    """The bank's stock after a site goes from ``before`` to ``after`` buildings (5: a hotel)."""
    houses, hotels = s.houses, s.hotels
    houses += before if before < HOTEL else 0
    hotels += 1 if before == HOTEL else 0
    houses -= after if after < HOTEL else 0
    hotels -= 1 if after == HOTEL else 0
    return replace(s, houses=houses, hotels=hotels)


@singledispatch
def _apply(event: msgspec.Struct, state: State, seq: int) -> State:
    return state


@_apply.register
def _(e: ev.GameCreated, s: State, seq: int) -> State:
    return replace(s, phase="waiting", seats=tuple(SeatState() for _ in range(e.config.seats)), rules_version=e.rules_version,
                   seeding=e.seeding)


@_apply.register
def _(e: SeatTaken, s: State, seq: int) -> State:
    return replace(_seat(s, e.seat, player=e.player), **seeded(s, e, len(s.seats)))


@_apply.register
def _(e: ev.GameStarted, s: State, seq: int) -> State:
    s = replace(s, phase="playing", seats=tuple(replace(p, cash=e.cash) for p in s.seats))
    if e.secret is not None:
        s = replace(s, chance=e.secret.chance, chest=e.secret.chest)
    return s


@_apply.register
def _(e: ev.TurnBegan, s: State, seq: int) -> State:
    return replace(s, turn_seat=e.seat, round=e.round, doubles=0, step="roll", again=False,
                   turn_deadline_at=e.deadline_at, turn_left_ms=None, timed_out=False)  # fmt: skip


@_apply.register
def _(e: ev.DiceRolled, s: State, seq: int) -> State:
    s = replace(s, rolls=e.n)
    if e.purpose == "utility":
        return s
    if not s.timed_out:  # the player rolled themselves: their missed turns start again from 0
        s = _seat(s, e.seat, missed=0)
    double = e.dice[0] == e.dice[1]
    if e.purpose == "jail":
        return replace(s, last_dice=e.dice, dice_by=e.seat, dice_jailed=None, step="moving", again=False)
    return replace(
        s,
        last_dice=e.dice,
        dice_by=e.seat,
        dice_jailed=None,
        step="moving",
        again=double,
        doubles=s.doubles + 1 if double else 0,
    )


@_apply.register
def _(e: ev.Moved, s: State, seq: int) -> State:
    return _cash(_seat(s, e.seat, position=e.to), e.seat, e.salary)


@_apply.register
def _(e: ev.RollAgain, s: State, seq: int) -> State:
    return replace(s, step="roll", again=False, turn_deadline_at=e.deadline_at, turn_left_ms=None, timed_out=False)


@_apply.register
def _(e: TurnClockStopped | TurnClockRestarted, s: State, seq: int) -> State:
    return clock_held(s, e)


@_apply.register
def _(e: ev.SentToJail, s: State, seq: int) -> State:
    """Only a roller can be sent to jail, in their own turn before the next roll: the dice shown are that roll."""
    jailed = e.why if e.seat == s.dice_by else s.dice_jailed
    return replace(_seat(s, e.seat, position=JAIL, in_jail=True, jail_tries=0), again=False, dice_jailed=jailed)


@_apply.register
def _(e: ev.JailRollFailed, s: State, seq: int) -> State:
    return _seat(s, e.seat, jail_tries=e.attempt)


@_apply.register
def _(e: ev.LeftJail, s: State, seq: int) -> State:
    """A card used stays in hand until ``jail_card_returned`` puts it back in its deck, so it is never nowhere. Paying
    or using a card is the player's own doing: their missed turns start again from 0."""
    if e.how in ("fine", "card"):
        s = _seat(s, e.seat, missed=0)
    return _seat(s, e.seat, in_jail=False, jail_tries=0)


@_apply.register
def _(e: ev.Paid, s: State, seq: int) -> State:
    s = _cash(_cash(s, e.payer, -e.amount), e.payee, e.amount)
    if e.reason == "debt" and s.debts:
        s = replace(s, debts=s.debts[1:])
    if e.reason == "interest" and e.square is not None:
        s = replace(s, interest_paid=s.interest_paid + (e.square,))
    return s


def _bottom(deck: tuple[str, ...], card: str) -> tuple[str, ...]:
    return tuple(c for c in deck if c != card) + (card,)


@_apply.register
def _(e: ev.CardDrawn, s: State, seq: int) -> State:
    """The top card leaves the deck: to the bottom, or to the drawer's hand if it is Get Out of Jail Free."""
    deck = s.chance if e.deck == "chance" else s.chest
    rest = deck[1:] if deck and deck[0] == e.card else tuple(c for c in deck if c != e.card)
    if e.card in JAIL_CARDS:
        s = _seat(s, e.seat, jail_cards=s.seats[e.seat].jail_cards + (e.card,))
    else:
        rest += (e.card,)
    return replace(s, **{e.deck: rest})


@_apply.register
def _(e: ev.JailCardReturned, s: State, seq: int) -> State:
    cards = tuple(c for c in s.seats[e.seat].jail_cards if c != e.card)
    deck = s.chance if e.deck == "chance" else s.chest
    return replace(_seat(s, e.seat, jail_cards=cards), **{e.deck: _bottom(deck, e.card)})


@_apply.register
def _(e: ev.PurchaseOffered, s: State, seq: int) -> State:
    return replace(
        s,
        offer=Offer(kind="buy", seat=e.seat, square=e.square, deadline_at=e.deadline_at),
    )


@_apply.register
def _(e: ev.PropertyBought, s: State, seq: int) -> State:
    return replace(_cash(_site(s, e.square, owner=e.seat), e.seat, -e.price), offer=None)


@_apply.register
def _(e: ev.TaxChoiceAwaited, s: State, seq: int) -> State:
    return replace(s, offer=Offer(kind="tax", seat=e.seat, deadline_at=e.deadline_at))


@_apply.register
def _(e: ev.IncomeTaxChosen, s: State, seq: int) -> State:
    return replace(s, offer=None)


@_apply.register
def _(e: ev.AuctionOpened, s: State, seq: int) -> State:
    lots = s.lots[1:] if isinstance(e.lot, int) and s.lots and s.lots[0] == e.lot else s.lots
    return replace(
        s,
        offer=None,
        lots=lots,
        auction=Auction(lot=e.lot, bidders=e.bidders, deadline_at=e.deadline_at),
    )


@_apply.register
def _(e: ev.BidPlaced, s: State, seq: int) -> State:
    if s.auction is None:
        return s
    return replace(
        s,
        auction=replace(s.auction, high_bid=e.amount, high_seat=e.seat, deadline_at=e.deadline_at),
    )


@_apply.register
def _(e: ev.BidPassed, s: State, seq: int) -> State:
    if s.auction is None:
        return s
    return replace(s, auction=replace(s.auction, passed=s.auction.passed + (e.seat,)))


@_apply.register
def _(e: ev.AuctionClosed, s: State, seq: int) -> State:
    s = replace(s, auction=None)
    if e.winner is None:
        return s
    s = _cash(s, e.winner, -e.amount)
    if isinstance(e.lot, int):
        return _site(s, e.lot, owner=e.winner)
    assert e.square is not None
    before = s.sites[e.square].level
    after = HOTEL if e.lot == "hotel" else before + 1
    s = _site(_buildings(s, before, after), e.square, level=after)
    claims = tuple(_placed(c, e.square) if c.seat == e.winner else c for c in s.lot_claims)
    return replace(s, lot_claims=tuple(c for c in claims if c.sites))


def _placed(claim: Claim, square: int) -> Claim:
    sites = list(claim.sites)
    if square in sites:
        sites.remove(square)
    return replace(claim, sites=tuple(sites))


@_apply.register
def _(e: ev.Built, s: State, seq: int) -> State:
    before = s.sites[e.square].level
    return _cash(_site(_buildings(s, before, e.level), e.square, level=e.level), e.seat, -e.price)


@_apply.register
def _(e: ev.BuildingSold, s: State, seq: int) -> State:
    before = s.sites[e.square].level
    return _cash(_site(_buildings(s, before, e.level), e.square, level=e.level), e.seat, e.refund)


@_apply.register
def _(e: ev.BuildingsSoldOff, s: State, seq: int) -> State:
    for q, after in zip(e.squares, e.levels, strict=True):
        s = _site(_buildings(s, s.sites[q].level, after), q, level=after)
    return _cash(s, e.seat, e.refund)


@_apply.register
def _(e: ev.ShortageDeclared, s: State, seq: int) -> State:
    window = Shortage(
        kind=e.kind,
        claims=(Claim(seat=e.seat, sites=e.sites),),
        claimants=e.claimants,
        answered=(),
        deadline_at=e.deadline_at,
    )
    return replace(s, shortage=window)


@_apply.register
def _(e: ev.BuildingsClaimed, s: State, seq: int) -> State:
    w = s.shortage
    if w is None:
        return s
    claims = w.claims + ((Claim(seat=e.seat, sites=e.sites),) if e.sites else ())
    return replace(s, shortage=replace(w, claims=claims, answered=w.answered + (e.seat,)))


@_apply.register
def _(e: ev.ShortageResolved, s: State, seq: int) -> State:
    """With ``auction``, the scarce buildings go to auction one at a time (``lots`` holds the kind until the claims
    are met or the bank is out); without, the window (or those auctions) is over."""
    w = s.shortage
    if w is None or not e.auction:
        lots = tuple(lot for lot in s.lots if isinstance(lot, int))
        return replace(s, shortage=None, lots=lots, lot_claims=())
    return replace(s, shortage=None, lots=(w.kind,), lot_claims=w.claims)


@_apply.register
def _(e: ev.Mortgaged, s: State, seq: int) -> State:
    return _cash(_site(s, e.square, mortgaged=True), e.seat, e.amount)


@_apply.register
def _(e: ev.MortgageLifted, s: State, seq: int) -> State:
    s = _cash(_site(s, e.square, mortgaged=False), e.seat, -e.amount)
    return replace(s, interest_paid=tuple(q for q in s.interest_paid if q != e.square))


@_apply.register
def _(e: ev.TradeOffered, s: State, seq: int) -> State:
    trade = Trade(
        id=e.trade,
        seat=e.seat,
        to=e.to,
        give=e.give,
        get=e.get,
        deadline_at=e.deadline_at,
    )
    return replace(s, trades=s.trades + (trade,))


@_apply.register
def _(e: ev.TradeAccepted, s: State, seq: int) -> State:
    trade = next((t for t in s.trades if t.id == e.trade), None)
    if trade is None:
        return s
    s = replace(s, trades=tuple(t for t in s.trades if t.id != e.trade))
    s = _hand_over(s, trade.give, trade.seat, trade.to)
    return _hand_over(s, trade.get, trade.to, trade.seat)


def _hand_over(s: State, h: ev.Holdings, giver: int, taker: int) -> State:
    s = _cash(_cash(s, giver, -h.cash), taker, h.cash)
    for square in h.squares:
        s = _site(s, square, owner=taker)
    kept = tuple(c for c in s.seats[giver].jail_cards if c not in h.jail_cards)
    s = _seat(s, giver, jail_cards=kept)
    return _seat(s, taker, jail_cards=s.seats[taker].jail_cards + tuple(h.jail_cards))


@_apply.register
def _(e: ev.TradeClosed, s: State, seq: int) -> State:
    return replace(s, trades=tuple(t for t in s.trades if t.id != e.trade))


@_apply.register
def _(e: ev.DebtOwed, s: State, seq: int) -> State:
    debt = Debt(
        seat=e.seat,
        creditor=e.creditor,
        amount=e.amount,
        reason=e.reason,
        deadline_at=e.deadline_at,
    )
    return replace(s, debts=s.debts + (debt,))


@_apply.register
def _(e: ev.WentBankrupt, s: State, seq: int) -> State:
    """Out of the game: its debts and those owed to it lapse, its trades close, it bids and claims no more.
    Its jail cards go to a creditor seat (to the bank they were returned by events before this one). It keeps
    no jail state: version 1 left its failed tries at doubles, and folds its games so still."""
    gone = e.seat
    if e.creditor is not None:
        s = _seat(
            s,
            e.creditor,
            jail_cards=s.seats[e.creditor].jail_cards + s.seats[gone].jail_cards,
        )
    tries = s.seats[gone].jail_tries if s.rules_version < 2 else 0
    s = _seat(s, gone, bankrupt=True, in_jail=False, jail_tries=tries, jail_cards=())
    debts = tuple(d for d in s.debts if gone not in (d.seat, d.creditor))
    trades = tuple(t for t in s.trades if gone not in (t.seat, t.to))
    a = s.auction
    if a is not None and gone in a.bidders:
        a = replace(
            a,
            bidders=tuple(b for b in a.bidders if b != gone),
            passed=tuple(p for p in a.passed if p != gone),
        )
        a = replace(a, high_bid=0, high_seat=None) if a.high_seat == gone else a
    w = s.shortage
    if w is not None:
        w = replace(
            w,
            claimants=tuple(c for c in w.claimants if c != gone),
            claims=tuple(c for c in w.claims if c.seat != gone),
        )
    lot_claims = tuple(c for c in s.lot_claims if c.seat != gone)
    offer = None if s.offer is not None and s.offer.seat == gone else s.offer
    return replace(
        s,
        debts=debts,
        trades=trades,
        auction=a,
        shortage=w,
        lot_claims=lot_claims,
        offer=offer,
    )


@_apply.register
def _(e: ev.PropertyTransferred, s: State, seq: int) -> State:
    """To a seat as it stands (mortgaged or not); to the bank free and clear, and queued for auction."""
    if e.to is not None:
        return _site(s, e.square, owner=e.to)
    return replace(
        _site(s, e.square, owner=None, level=0, mortgaged=False),
        lots=s.lots + (e.square,),
    )


@_apply.register
def _(e: ev.TurnEnded, s: State, seq: int) -> State:
    return replace(s, step="roll", again=False, doubles=0, offer=None, interest_paid=(), turn_deadline_at=None,
                   turn_left_ms=None)  # fmt: skip


@_apply.register
def _(e: ev.TurnTimedOut, s: State, seq: int) -> State:
    return replace(_seat(s, e.seat, missed=e.missed), timed_out=True)


@_apply.register
def _(e: ev.SeatForfeited | ev.SeatResigned, s: State, seq: int) -> State:
    """A forfeit or a resignation marks the seat and changes nothing else: the bankruptcy to the bank that follows
    (``went_bankrupt``) does."""
    return _seat(s, e.seat, **{"forfeited" if isinstance(e, ev.SeatForfeited) else "resigned": True})


@_apply.register
def _(e: ev.GameEnded, s: State, seq: int) -> State:
    return replace(s, phase="over", winner=e.winner, end_reason=e.reason, worth=e.worth)


@_apply.register
def _(e: GameClosed, s: State, seq: int) -> State:
    """No winner; the waits nobody will answer lapse (an auction's lot stays the bank's, a debt unpaid)."""
    return replace(s, phase="over", end_reason=e.reason, closed=closed_of(e), offer=None, auction=None, lots=(),
                   lot_claims=(), shortage=None, debts=(), trades=())  # fmt: skip
