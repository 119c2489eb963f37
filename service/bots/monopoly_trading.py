"""How the strategic Monopoly bot values property and trades it (RULES.md §3: property, cash and Get Out of Jail
Free cards change hands by offers the other side accepts or rejects).

A seat values what it holds group by group (``holding_value``): a street group it owns whole at ``MONOPOLY`` times
its printed prices (the only group it can build on), part of a group at the prices and ``PART`` more for each
further site of it, so a site is worth more to whoever holds more of its group. A trade is worth to a side what its
holdings gain, plus the cash and cards it gets, less what it gives, less ``RIVAL`` of what the other side gains
by completing a group: handing a rival a monopoly has a price, not a veto, or players who each hold a piece of
every group never build and a game without ``max_rounds`` never ends. A side accepts when it comes out a tenth of
its stake ahead (``MARGIN``).

The same valuation tells a bot what another would accept, so it proposes (``best_offer``) trades that complete or
gather a street group: a swap that completes a group for both sides, a purchase of the site that completes its
own at the least the owner would take, or a site of a group held by several, bought from one holding no more of
it than the buyer. Cash evens each one out: the least that makes it worth the other's while, or, when the other
gains more, a share of that gain.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from service.events import monopoly as ev
from service.rules.monopoly.board import GROUPS, SQUARES, STREET_GROUPS, group_of
from service.rules.monopoly.state import State

MONOPOLY = 2.5
"""A whole street group: its printed prices times this."""
PART = 0.15
"""Part of a group: each site after the first adds this much of the prices held."""
RIVAL = 0.5
"""The share of the other side's gain from a group it completes that counts against a trade."""
MARGIN = 0.1
"""What the side answering an offer wants to come out ahead by, as a share of what it gives."""
CARD = 30
"""A Get Out of Jail Free card."""
STEP = 10
"""Cash in offers is rounded to this many dollars."""


def holding_value(group: str, held: list[int]) -> float:
    """What holding ``held`` (squares of ``group``) is worth to its holder."""
    if not held:
        return 0.0
    prices = sum(SQUARES[q].price for q in held)
    if group in STREET_GROUPS and len(held) == len(GROUPS[group]):
        return prices * MONOPOLY
    return prices * (1 + PART * (len(held) - 1))


def _held(s: State, seat: int, group: str) -> list[int]:
    return [q for q in GROUPS[group] if s.sites[q].owner == seat]


def _lift(square: int) -> float:
    """What a mortgaged site costs its holder to lift: the mortgage and its 10%."""
    return SQUARES[square].mortgage_value * 1.1


def _interest(square: int) -> float:
    """The 10% whoever receives a mortgaged site pays at once."""
    return SQUARES[square].mortgage_value * 0.1


class Sides:
    """A trade seen from both sides: ``a`` gives ``a_gives`` and gets ``b_gives`` from ``b``."""

    __slots__ = ("a", "a_gives", "b", "b_gives")

    def __init__(self, a: int, a_gives: ev.Holdings, b: int, b_gives: ev.Holdings) -> None:
        self.a, self.a_gives, self.b, self.b_gives = a, a_gives, b, b_gives

    def property_gain(self, s: State, seat: int) -> tuple[float, float]:
        """``seat``'s gain in holdings (one of the two sides), and of that the part from groups it completes."""
        gets, gives = (self.b_gives, self.a_gives) if seat == self.a else (self.a_gives, self.b_gives)
        gain = completed = 0.0
        for group in dict.fromkeys(SQUARES[q].group for q in (*gives.squares, *gets.squares)):  # in a fixed order
            before = _held(s, seat, group)  # type: ignore[arg-type]
            after = [q for q in before if q not in gives.squares] + [q for q in gets.squares if q in GROUPS[group]]
            delta = holding_value(group, after) - holding_value(group, before)  # type: ignore[arg-type]
            gain += delta
            if group in STREET_GROUPS and len(after) == len(GROUPS[group]):
                completed += delta
        gain -= sum(_lift(q) + _interest(q) for q in gets.squares if s.sites[q].mortgaged)
        gain += sum(_lift(q) for q in gives.squares if s.sites[q].mortgaged)
        return gain, completed

    def net(self, s: State, seat: int) -> tuple[float, float]:
        """What the trade is worth to ``seat``, and its stake (what it gives at face value and printed price)."""
        other = self.b if seat == self.a else self.a
        gets, gives = (self.b_gives, self.a_gives) if seat == self.a else (self.a_gives, self.b_gives)
        gain, _ = self.property_gain(s, seat)
        _, rival = self.property_gain(s, other)
        cash = gets.cash - gives.cash + CARD * (len(gets.jail_cards) - len(gives.jail_cards))
        stake = gives.cash + CARD * len(gives.jail_cards) + sum(SQUARES[q].price for q in gives.squares)
        return gain + cash - RIVAL * max(rival, 0.0), stake


def worth_accepting(s: State, seat: int, other: int, got: ev.Holdings, gave: ev.Holdings) -> bool:
    """Whether ``seat`` comes out ahead by ``MARGIN`` of its stake getting ``got`` from ``other`` for ``gave``."""
    value, stake = Sides(seat, gave, other, got).net(s, seat)
    return value >= MARGIN * stake


def _up(amount: float) -> int:
    return max(0, math.ceil(amount / STEP) * STEP)


def balanced(s: State, seat: int, other: int, give: tuple[int, ...], get: tuple[int, ...], spare: int,
             their_spare: int) -> ev.OfferTrade | None:  # fmt: skip
    """``give`` for ``get`` with the cash that makes it worth ``other``'s while (at most ``spare``), or that asks a
    share of ``other``'s gain (at most ``their_spare``); ``None`` when no cash makes it good for both."""
    bare = Sides(seat, ev.Holdings(squares=give), other, ev.Holdings(squares=get))
    theirs, their_stake = bare.net(s, other)
    mine, _ = bare.net(s, seat)
    short = MARGIN * their_stake - theirs
    if short > 0:  # they need cash: the least that does it, each dollar counting to them once
        cash = _up(short)
        if cash > spare or mine - cash <= 0:
            return None
        return ev.OfferTrade(to=other, give=ev.Holdings(cash=cash, squares=give), get=ev.Holdings(squares=get))
    # they come out ahead as it stands: ask half of what they could pay and still accept (their stake grows too)
    ask = max(0, min(their_spare, int((-short) / (1 + MARGIN) / 2) // STEP * STEP))
    if mine + ask <= 0:
        return None
    return ev.OfferTrade(to=other, give=ev.Holdings(squares=give), get=ev.Holdings(cash=ask, squares=get))


def _tradeable(s: State, square: int) -> bool:
    """Owned, and nothing built on its group (RULES.md: no site of a group with buildings is traded)."""
    return s.sites[square].owner is not None and all(s.sites[q].level == 0 for q in group_of(square))


def proposals(s: State, seat: int) -> Iterator[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """``(other, give, get)``: trades of street sites that complete or gather a group of ``seat``'s."""
    for group in STREET_GROUPS:
        squares = GROUPS[group]
        mine = [q for q in squares if s.sites[q].owner == seat]
        missing = [q for q in squares if s.sites[q].owner != seat]
        if not mine or not missing or not all(_tradeable(s, q) for q in squares):
            continue
        holders = {s.sites[q].owner for q in missing}
        if None in holders:
            continue  # the bank's site may still be landed on and bought
        if len(holders) == 1:
            (other,) = holders
            assert other is not None
            want = tuple(missing)
            yield other, (), want
            for theirs in STREET_GROUPS:
                held = [q for q in GROUPS[theirs] if s.sites[q].owner == other]
                need = [q for q in GROUPS[theirs] if s.sites[q].owner != other]
                if theirs != group and held and need and all(s.sites[q].owner == seat and _tradeable(s, q) for q in need):
                    yield other, tuple(need), want
        else:
            for other in sorted(holders):  # type: ignore[type-var]
                theirs = [q for q in missing if s.sites[q].owner == other]
                if len(theirs) <= len(mine):
                    yield other, (), (theirs[0],)  # type: ignore[misc]


def best_offer(s: State, seat: int, spare: int, spare_of) -> ev.OfferTrade | None:
    """The proposal worth most to ``seat`` that its partner should accept, cash evened out; ``spare_of(seat)``: the
    cash a seat can part with."""
    best: tuple[float, ev.OfferTrade] | None = None
    for other, give, get in proposals(s, seat):
        offer = balanced(s, seat, other, give, get, spare, spare_of(other))
        if offer is None:
            continue
        value, _ = Sides(seat, offer.give, other, offer.get).net(s, seat)
        if best is None or value > best[0]:
            best = (value, offer)
    return best[1] if best else None
