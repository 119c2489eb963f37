"""``legal_commands``: what a seat may send now, each checked by the same rule functions ``decide`` uses, so
every command listed is accepted.

Commands with an open-ended argument appear in one form: ``bid`` at the least it may be, ``build`` one site at
a time, ``claim_buildings`` one site at a time (or none). ``offer_trade`` is never listed: what to offer is the
player's to invent (``decide`` checks it).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from service.events import monopoly as ev

from ..errors import RuleViolation
from . import building, mortgages, trades, turn
from .auctions import min_bid
from .batch import Batch
from .board import JAIL_FINE, PROPERTIES
from .state import State

__all__ = ["legal_commands", "min_bid"]


def _ok(check: Callable[[], object]) -> bool:
    try:
        check()
    except RuleViolation:
        return False
    return True


def legal_commands(s: State, seat: int) -> list[msgspec.Struct]:
    """Every command ``seat`` may send now: its own turn's first, then its answers to waits, then what an owner
    may do at any time."""
    if s.phase != "playing" or not 0 <= seat < s.n or s.seats[seat].bankrupt:
        return []
    return [*_turn(s, seat), *_answers(s, seat), *_owner(s, seat)]


def _turn(s: State, seat: int) -> list[msgspec.Struct]:
    b = Batch(s, 0)
    out: list[msgspec.Struct] = []
    if _ok(lambda: turn.check_roll(b, seat)):
        out.append(ev.Roll())
        if s.seats[seat].in_jail:
            if s.seats[seat].cash >= JAIL_FINE:
                out.append(ev.PayFine())
            if s.seats[seat].jail_cards:
                out.append(ev.UseJailCard())
    o = s.offer
    if o is not None and o.seat == seat:
        if o.kind == "buy":
            if _ok(lambda: turn.check_buy(b, seat)):
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
    if any(d.seat == seat for d in s.debts):
        out.append(ev.DeclareBankruptcy())
    return out


def _owner(s: State, seat: int) -> list[msgspec.Struct]:
    """Building, selling and mortgages: at any time, by any owner."""
    out: list[msgspec.Struct] = []
    owned = [q for q in PROPERTIES if s.sites[q].owner == seat]
    out += [ev.Build(sites=(q,)) for q in owned if _ok(lambda q=q: building.check_build(s, seat, (q,)))]  # type: ignore[misc]
    out += [ev.SellBuilding(square=q) for q in owned if _ok(lambda q=q: building.check_sell(s, seat, q))]  # type: ignore[misc]
    out += [ev.Mortgage(square=q) for q in owned if _ok(lambda q=q: mortgages.check_mortgage(s, seat, q))]  # type: ignore[misc]
    out += [ev.LiftMortgage(square=q) for q in owned if _ok(lambda q=q: mortgages.check_lift(s, seat, q))]  # type: ignore[misc]
    return out
