"""Payments, debts and bankruptcy.

A payment the payer can meet is made at once; one it cannot becomes a debt with a deadline, and the debts are
paid in the order they arose, each as soon as its debtor has raised the cash. A debtor who cannot, or lets the
deadline pass, is bankrupt: to a player, who receives everything; to the bank, which auctions the properties.
From rules version 2 a debtor may declare it only when selling every building and mortgaging every property
would still not cover what it owes, so no one hands an estate to a chosen creditor.
"""

from __future__ import annotations

from service.events import monopoly as ev

from ..errors import RuleViolation
from .batch import Batch
from .board import GROUPS, HOTEL, SQUARES, STREET_GROUPS
from .building import sell_off
from .cards import deck_of
from .state import State


def interest(square: int) -> int:
    """10% of the mortgage, rounded up to a whole dollar."""
    return -(-SQUARES[square].mortgage_value // 10)


def charge(
    b: Batch,
    payer: int,
    payee: int | None,
    amount: int,
    reason: str,
    square: int | None = None,
) -> None:
    """``payer`` pays ``amount`` to ``payee`` (``None``: the bank) now, or owes it if short or already in debt."""
    s = b.state
    if amount <= 0 or s.seats[payer].bankrupt:
        return
    if payee is not None and s.seats[payee].bankrupt:
        payee = None
    if s.seats[payer].cash >= amount and not any(d.seat == payer for d in s.debts):
        b.emit(ev.Paid(payer=payer, payee=payee, amount=amount, reason=reason, square=square))  # type: ignore[arg-type]
    else:
        b.emit(
            ev.DebtOwed(
                seat=payer,
                creditor=payee,
                amount=amount,
                reason=reason,
                deadline_at=b.deadline,
            )
        )


def pay_debts(b: Batch) -> None:
    """Pay the first debts whose debtors now have the cash."""
    while b.state.debts:
        d = b.state.debts[0]
        if b.state.seats[d.seat].cash < d.amount:
            return
        b.emit(ev.Paid(payer=d.seat, payee=d.creditor, amount=d.amount, reason="debt"))


def owed(s: State, seat: int) -> int:
    """What ``seat`` owes in all (its debts wait in the order they arose)."""
    return sum(d.amount for d in s.debts if d.seat == seat)


def could_raise(s: State, seat: int) -> int:
    """Cash plus what selling every building (at half its cost) and mortgaging every unmortgaged property brings."""
    total = s.seats[seat].cash
    for q in s.owned_by(seat):
        site = s.sites[q]
        total += SQUARES[q].house_cost * site.level // 2 + (0 if site.mortgaged else SQUARES[q].mortgage_value)
    return total


def check_bankruptcy(s: State, seat: int) -> None:
    """A debtor may declare bankruptcy; from version 2 only one who could not raise what it owes."""
    if not any(d.seat == seat for d in s.debts):
        raise RuleViolation("no_debt", "You owe nothing you cannot pay: there is no bankruptcy to declare")
    if s.rules_version >= 2 and (raised := could_raise(s, seat)) >= (debt := owed(s, seat)):
        raise RuleViolation(
            "not_insolvent",
            f"Selling every building and mortgaging every property would raise ${raised}, enough for the ${debt} "
            "you owe: raise it instead",
            could_raise=raised,
            owed=debt,
        )


def go_bankrupt(b: Batch, seat: int, creditor: int | None) -> None:
    """Buildings go back to the bank at half price first; then cash, properties and jail cards go over."""
    s = b.state
    for group in STREET_GROUPS:
        built = [q for q in GROUPS[group] if s.sites[q].owner == seat and s.sites[q].level]
        if built:
            sell_off(b, seat, dict.fromkeys(built, 0))
    if creditor is None:
        for card in s.seats[seat].jail_cards:
            b.emit(ev.JailCardReturned(seat=seat, card=card, deck=deck_of(card)))  # type: ignore[arg-type]
    cash = b.state.seats[seat].cash
    if cash:
        b.emit(ev.Paid(payer=seat, payee=creditor, amount=cash, reason="bankruptcy"))
    received = b.state.owned_by(seat)
    for q in received:
        b.emit(ev.PropertyTransferred(square=q, to=creditor))
    b.emit(ev.WentBankrupt(seat=seat, creditor=creditor))
    if creditor is not None:
        for q in received:
            if b.state.sites[q].mortgaged:
                charge(b, creditor, None, interest(q), "interest", q)


def buildings_of(s: State, seat: int) -> tuple[int, int]:
    """Houses and hotels ``seat`` has on the board."""
    levels = [s.sites[q].level for q in s.owned_by(seat)]
    return sum(v for v in levels if v < HOTEL), sum(1 for v in levels if v == HOTEL)
