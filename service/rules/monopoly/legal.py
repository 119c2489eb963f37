"""``legal_commands``: what a seat may send now, each checked by the same rule functions ``decide`` uses, so
every command listed is accepted.

Commands with an open-ended argument appear as examples (API.md): ``bid`` at the least it may be, ``build`` and
``claim_buildings`` one site at a time, ``offer_trade`` as the smallest gift to the next player; a hotel sold short
of houses once per arrangement of the group the owner may choose (``levels``); ``legal_forms`` gives their bounds — what a bid, a build order, a claim or an offer may hold now.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from service.events import monopoly as ev

from ..errors import RuleViolation
from . import building, mortgages, trades, turn
from .auctions import min_bid
from .board import HOTEL, JAIL_FINE, PROPERTIES, SQUARES, group_of
from .money import check_bankruptcy
from .state import State

__all__ = ["LegalForms", "legal_commands", "legal_forms", "min_bid"]


class BidForm(msgspec.Struct, kw_only=True):
    min: int
    max: int
    """The bidder's cash."""


class TradeForm(msgspec.Struct, kw_only=True):
    """What an offer may hold: ``give`` from the caller's own, ``get`` from each other player's (by seat)."""

    to: list[int]
    cash: int
    """The most cash the caller may give (its cash); the other side's is checked on acceptance."""
    squares: list[int]
    jail_cards: list[str]
    their_squares: dict[int, list[int]]
    their_jail_cards: dict[int, list[str]]


class LegalForms(msgspec.Struct, kw_only=True, omit_defaults=True):
    bid: BidForm | None = None
    build: list[int] | None = None
    """Sites that take one building now; a ``build`` order lists them (repeats allowed) as long as it stays even."""
    claim_buildings: list[int] | None = None
    offer_trade: TradeForm | None = None


def _ok(check: Callable[[], object]) -> bool:
    try:
        check()
    except RuleViolation:
        return False
    return True


def legal_commands(s: State, seat: int) -> list[msgspec.Struct]:
    """Every command ``seat`` may send now: its own turn's first, then its answers to waits, then what an owner
    may do at any time, and last ``resign`` (RULES.md §3: at any moment while still in; a bot never picks it)."""
    if s.phase != "playing" or not 0 <= seat < s.n or s.seats[seat].bankrupt:
        return []
    resign = [ev.Resign()] if len(s.live) > 1 else []  # the last player left has won, auctions or not
    return [*_turn(s, seat), *_answers(s, seat), *_owner(s, seat), *_offer_example(s, seat), *resign]


def tradeable(s: State, seat: int) -> list[int]:
    """``seat``'s properties that may change hands now (none on a group with buildings)."""
    return [q for q in s.owned_by(seat) if _ok(lambda q=q: trades.check_side(s, seat, ev.Holdings(squares=(q,))))]  # type: ignore[misc]


def _offer_example(s: State, seat: int) -> list[msgspec.Struct]:
    """The smallest offer that is accepted now: $1 (or else a property) to the next player still in."""
    others = s.opponents(seat)
    if not others or any(t.seat == seat for t in s.trades):
        return []
    if s.seats[seat].cash >= 1:
        give = ev.Holdings(cash=1)
    elif own := tradeable(s, seat):
        give = ev.Holdings(squares=(own[0],))
    else:
        return []
    return [ev.OfferTrade(to=others[0], give=give)]


def legal_forms(s: State, seat: int, listed: list[msgspec.Struct] | None = None) -> LegalForms:
    """The bounds of the open-ended commands ``seat`` may send now (see the module's docstring); ``listed``: its
    ``legal_commands``, when the caller has them already."""
    listed = legal_commands(s, seat) if listed is None else listed
    forms = LegalForms()
    a = s.auction
    if a is not None and any(isinstance(c, ev.Bid) for c in listed):
        forms.bid = BidForm(min=min_bid(a), max=s.seats[seat].cash)
    builds = [c.sites[0] for c in listed if isinstance(c, ev.Build)]
    forms.build = builds or None
    claims = [c.sites[0] for c in listed if isinstance(c, ev.ClaimBuildings) and c.sites]
    forms.claim_buildings = claims if any(isinstance(c, ev.ClaimBuildings) for c in listed) else None
    if any(isinstance(c, ev.OfferTrade) for c in listed):
        others = s.opponents(seat)
        forms.offer_trade = TradeForm(
            to=others,
            cash=s.seats[seat].cash,
            squares=tradeable(s, seat),
            jail_cards=list(s.seats[seat].jail_cards),
            their_squares={o: tradeable(s, o) for o in others},
            their_jail_cards={o: list(s.seats[o].jail_cards) for o in others},
        )
    return forms


def _turn(s: State, seat: int) -> list[msgspec.Struct]:
    out: list[msgspec.Struct] = []
    if _ok(lambda: turn.check_roll(s, seat)):
        out.append(ev.Roll())
        if s.seats[seat].in_jail:
            if s.seats[seat].cash >= JAIL_FINE:
                out.append(ev.PayFine())
            if s.seats[seat].jail_cards:
                out.append(ev.UseJailCard())
    o = s.offer
    if o is not None and o.seat == seat:
        if o.kind == "buy":
            if _ok(lambda: turn.check_buy(s, seat)):
                out.append(ev.Buy())
            out.append(ev.Decline())
        else:
            out += [ev.ChooseTax(choice="flat"), ev.ChooseTax(choice="percent")]
    return out


def _answers(s: State, seat: int) -> list[msgspec.Struct]:
    out: list[msgspec.Struct] = []
    a = s.auction
    if a is not None and seat in a.bidders and seat not in a.passed:
        if s.seats[seat].cash >= min_bid(a):
            out.append(ev.Bid(amount=min_bid(a)))
        if a.high_seat != seat:
            out.append(ev.PassBid())
    w = s.shortage
    if w is not None and seat in w.awaited:
        out.append(ev.ClaimBuildings(sites=()))
        out += [
            ev.ClaimBuildings(sites=(q,))
            for q in s.owned_by(seat)
            if _ok(lambda q=q: building.check_claim(s, seat, (q,)))
        ]  # type: ignore[misc]
    for t in s.trades:
        if t.to == seat:
            if _ok(lambda t=t: trades.check_accept(s, seat, t.id)):  # type: ignore[misc]
                out.append(ev.AcceptTrade(trade=t.id))
            out.append(ev.RejectTrade(trade=t.id))
        elif t.seat == seat:
            out.append(ev.WithdrawTrade(trade=t.id))
    if any(d.seat == seat for d in s.debts) and _ok(lambda: check_bankruptcy(s, seat)):
        out.append(ev.DeclareBankruptcy())
    return out


def _sales(s: State, q: int) -> list[ev.SellBuilding]:
    """Selling the building on ``q``: the plain sale (the server's default levels), and where a hotel comes down
    short of houses (rules version 2) each other arrangement the owner may choose, with its ``levels``."""
    sales = [ev.SellBuilding(square=q)]
    if s.rules_version >= 2 and s.sites[q].level == HOTEL and s.houses < HOTEL - 1:
        sales += [ev.SellBuilding(square=q, levels=after) for after in building.break_downs(s, q)[1:]]
    return sales


def _owner(s: State, seat: int) -> list[msgspec.Struct]:
    """Building, selling and mortgages: at any time, by any owner. Each check runs only where it could pass (a
    build on a whole street group, a sale where there is a building, ...): the checks are the rules, the filters
    only spare them the hopeless squares, which keeps the bots' and simulations' play fast."""
    owned = [q for q in PROPERTIES if s.sites[q].owner == seat]
    whole = [q for q in owned if SQUARES[q].type == "street" and all(s.sites[g].owner == seat for g in group_of(q))]
    built = [q for q in owned if s.sites[q].level]
    plain = [q for q in owned if not s.sites[q].mortgaged]
    mortgaged = [q for q in owned if s.sites[q].mortgaged]
    out: list[msgspec.Struct] = []
    out += [ev.Build(sites=(q,)) for q in whole if _ok(lambda q=q: building.check_build(s, seat, (q,)))]  # type: ignore[misc]
    out += [sale for q in built if _ok(lambda q=q: building.check_sell(s, seat, q)) for sale in _sales(s, q)]  # type: ignore[misc]
    out += [ev.Mortgage(square=q) for q in plain if _ok(lambda q=q: mortgages.check_mortgage(s, seat, q))]  # type: ignore[misc]
    out += [ev.LiftMortgage(square=q) for q in mortgaged if _ok(lambda q=q: mortgages.check_lift(s, seat, q))]  # type: ignore[misc]
    return out
