"""Trades between players: property, cash and Get Out of Jail Free cards, offered to one other player, who accepts
or rejects it before its deadline; the offerer may withdraw it. Each side is checked again on acceptance, since
the table may have moved on. Buildings must be sold off a group before any of its sites is traded, and whoever
receives a mortgaged property pays its 10% at once."""

from __future__ import annotations

from service.events import monopoly as ev

from ..errors import RuleViolation
from .batch import Batch
from .board import SQUARES, group_of
from .money import interest
from .state import State, Trade


def check_side(s: State, seat: int, h: ev.Holdings) -> None:
    """``seat`` holds all of ``h``."""
    if len(set(h.squares)) != len(h.squares) or len(set(h.jail_cards)) != len(h.jail_cards):
        raise RuleViolation("bad_trade", "A property or card is listed twice")
    if h.cash < 0:  # the API's decoding refuses it; the rules must too, for any caller (a bot, a replay)
        raise RuleViolation("bad_trade", "Cash in a trade is a sum of dollars, never less than 0", cash=h.cash)
    for q in h.squares:
        sq = SQUARES[q]
        if s.sites[q].owner != seat:
            raise RuleViolation("not_owner", f"Seat {seat} does not own {sq.name}", square=q, seat=seat)
        if sq.type == "street" and any(s.sites[g].level for g in group_of(q)):
            raise RuleViolation(
                "sell_buildings_first",
                f"Sell the buildings on {sq.group} before trading {sq.name}",
                square=q,
            )
    for card in h.jail_cards:
        if card not in s.seats[seat].jail_cards:
            raise RuleViolation("not_holder", f"Seat {seat} does not hold {card}", card=card, seat=seat)
    if h.cash > s.seats[seat].cash:
        raise RuleViolation("cannot_afford", f"Seat {seat} has ${s.seats[seat].cash}", seat=seat)


def _interest_on(s: State, h: ev.Holdings) -> int:
    return sum(interest(q) for q in h.squares if s.sites[q].mortgaged)


def check_offer(s: State, seat: int, to: int, give: ev.Holdings, get: ev.Holdings) -> None:
    if to == seat or to >= s.n or s.seats[to].bankrupt:
        raise RuleViolation(
            "bad_trade_partner",
            "Offer a trade to another player still in the game",
            to=to,
        )
    if give == ev.Holdings() and get == ev.Holdings():
        raise RuleViolation("empty_trade", "A trade must give or get something")
    if any(t.seat == seat for t in s.trades):
        raise RuleViolation(
            "trade_open",
            "You have an offer open already: wait for its answer or withdraw it",
        )
    check_side(s, seat, give)
    if get.cash < 0:
        raise RuleViolation("bad_trade", "Cash in a trade is a sum of dollars, never less than 0", cash=get.cash)
    check_side(s, to, ev.Holdings(squares=get.squares, jail_cards=get.jail_cards))  # their cash: on acceptance


def offer(b: Batch, seat: int, to: int, give: ev.Holdings, get: ev.Holdings) -> None:
    check_offer(b.state, seat, to, give, get)
    b.emit(ev.TradeOffered(trade=b.seq, seat=seat, to=to, give=give, get=get, deadline_at=b.deadline))


def find(s: State, trade: int) -> Trade:
    t = next((t for t in s.trades if t.id == trade), None)
    if t is None:
        raise RuleViolation("no_such_trade", f"No open trade {trade}", trade=trade)
    return t


def check_accept(s: State, seat: int, trade: int) -> Trade:
    t = find(s, trade)
    if t.to != seat:
        raise RuleViolation(
            "not_your_trade",
            "Only the player offered this trade may answer it",
            trade=trade,
        )
    check_side(s, t.seat, t.give)
    check_side(s, t.to, t.get)
    for payer, side, gets in ((t.to, t.get, t.give), (t.seat, t.give, t.get)):
        after = s.seats[payer].cash - side.cash + gets.cash
        if _interest_on(s, gets) > after:
            raise RuleViolation(
                "cannot_afford",
                f"Seat {payer} could not pay the 10% on the mortgaged property it gets",
                seat=payer,
            )
    return t


def accept(b: Batch, seat: int, trade: int) -> None:
    s = b.state
    t = check_accept(s, seat, trade)
    b.emit(ev.TradeAccepted(trade=trade))
    for taker, gets in ((t.to, t.give), (t.seat, t.get)):
        for q in gets.squares:
            if s.sites[q].mortgaged:
                b.emit(
                    ev.Paid(
                        payer=taker,
                        payee=None,
                        amount=interest(q),
                        reason="interest",
                        square=q,
                    )
                )


def reject(b: Batch, seat: int, trade: int) -> None:
    _close(b, seat, find(b.state, trade).to, trade, "rejected")


def withdraw(b: Batch, seat: int, trade: int) -> None:
    _close(b, seat, find(b.state, trade).seat, trade, "withdrawn")


def _close(b: Batch, seat: int, allowed: int, trade: int, why: str) -> None:
    """Only the player offered a trade rejects it; only the one who offered it withdraws it."""
    if seat != allowed:
        raise RuleViolation("not_your_trade", f"Only seat {allowed} may answer this trade that way", trade=trade)
    b.emit(ev.TradeClosed(trade=trade, why=why))  # type: ignore[arg-type]
