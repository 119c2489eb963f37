"""Mortgages: half the printed price from the bank, lifted at the mortgage plus 10%. Buildings must be sold off
the whole group first. A mortgaged property received from another player has had its 10% paid on receipt, so it
is lifted for the bare mortgage until the turn ends."""

from __future__ import annotations

from service.events import monopoly as ev

from ..errors import RuleViolation
from .batch import Batch
from .board import SQUARES, group_of
from .money import interest
from .state import State


def check_mortgage(s: State, seat: int, q: int) -> None:
    sq = SQUARES[q]
    if s.sites[q].owner != seat:
        raise RuleViolation("not_owner", f"You do not own {sq.name}", square=q)
    if s.sites[q].mortgaged:
        raise RuleViolation("already_mortgaged", f"{sq.name} is mortgaged already", square=q)
    if sq.type == "street" and any(s.sites[g].level for g in group_of(q)):
        raise RuleViolation(
            "sell_buildings_first",
            f"Sell the buildings on {sq.group} before mortgaging",
            square=q,
        )


def mortgage(b: Batch, seat: int, q: int) -> None:
    check_mortgage(b.state, seat, q)
    b.emit(ev.Mortgaged(seat=seat, square=q, amount=SQUARES[q].mortgage_value))


def lift_cost(s: State, q: int) -> int:
    mortgage_value = SQUARES[q].mortgage_value
    return mortgage_value if q in s.interest_paid else mortgage_value + interest(q)


def check_lift(s: State, seat: int, q: int) -> int:
    sq = SQUARES[q]
    if s.sites[q].owner != seat:
        raise RuleViolation("not_owner", f"You do not own {sq.name}", square=q)
    if not s.sites[q].mortgaged:
        raise RuleViolation("not_mortgaged", f"{sq.name} is not mortgaged", square=q)
    amount = lift_cost(s, q)
    if amount > s.seats[seat].cash:
        raise RuleViolation(
            "cannot_afford",
            f"Lifting it costs ${amount}; you have ${s.seats[seat].cash}",
            cost=amount,
        )
    return amount


def lift(b: Batch, seat: int, q: int) -> None:
    amount = check_lift(b.state, seat, q)
    b.emit(ev.MortgageLifted(seat=seat, square=q, amount=amount))
