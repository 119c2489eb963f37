"""Invariants of a Monopoly table, checked after every event of seeded games (RULES.md §3).

``Ledger`` keeps what the bank has paid out, net, computed from the events alone (not from ``evolve``), so
that "every dollar is conserved" is checked against an independent account: the players' cash always adds
up to the bank's net payouts. ``after_event`` checks the table after any event: money, owners, the 32
houses and 12 hotels, even building, no building on a mortgaged group, levels 0–5, every card in exactly one
place, jail and positions. ``at_rest`` adds what holds between commands.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import monopoly as ev
from service.rules.monopoly.board import (
    GROUPS,
    HOTEL,
    HOTELS,
    HOUSES,
    JAIL,
    JAIL_TRIES,
    PROPERTIES,
    SQUARES,
    STREET_GROUPS,
)
from service.rules.monopoly.cards import CHANCE, CHEST
from service.rules.monopoly.state import State

CHANCE_IDS = sorted(c.id for c in CHANCE)
CHEST_IDS = sorted(c.id for c in CHEST)
STREETS = frozenset(q for g in STREET_GROUPS for q in GROUPS[g])
OTHER_SQUARES = tuple(q for q in range(len(SQUARES)) if q not in PROPERTIES)


class InvariantError(AssertionError):
    pass


def fail(s: State, what: str) -> None:
    raise InvariantError(f"v{s.version} round={s.round} turn={s.turn_seat}: {what}")


@singledispatch
def bank_pays(event: msgspec.Struct) -> int:
    """What the bank pays out (negative: takes in) with ``event``; 0 for a move of money between players."""
    return 0


@bank_pays.register
def _(e: ev.GameStarted) -> int:
    raise TypeError("GameStarted needs the seat count: see Ledger.follow")


@bank_pays.register
def _(e: ev.Moved) -> int:
    return e.salary


@bank_pays.register
def _(e: ev.Paid) -> int:
    if e.payer is None and e.payee is not None:
        return e.amount
    if e.payee is None and e.payer is not None:
        return -e.amount
    return 0


@bank_pays.register
def _(e: ev.PropertyBought) -> int:
    return -e.price


@bank_pays.register
def _(e: ev.AuctionClosed) -> int:
    return -e.amount if e.winner is not None else 0


@bank_pays.register
def _(e: ev.Built) -> int:
    return -e.price


@bank_pays.register
def _(e: ev.BuildingSold) -> int:
    return e.refund


@bank_pays.register
def _(e: ev.BuildingsSoldOff) -> int:
    return e.refund


@bank_pays.register
def _(e: ev.Mortgaged) -> int:
    return e.amount


@bank_pays.register
def _(e: ev.MortgageLifted) -> int:
    return -e.amount


class Ledger:
    """The bank's net payouts so far, from the events."""

    def __init__(self) -> None:
        self.paid_out = 0

    def follow(self, s: State, event: msgspec.Struct) -> None:
        if isinstance(event, ev.GameStarted):
            self.paid_out += event.cash * s.n
        else:
            self.paid_out += bank_pays(event)


def after_event(s: State, ledger: Ledger) -> None:
    """Everything that holds after any event."""
    if s.phase in ("new", "waiting"):
        if any(p.cash for p in s.seats) or ledger.paid_out:
            fail(s, "money before the game started")
        return
    money(s, ledger)
    board(s)
    buildings(s)
    cards(s)
    seats(s)


def money(s: State, ledger: Ledger) -> None:
    total = sum(p.cash for p in s.seats)
    if total != ledger.paid_out:
        fail(s, f"cash on the table {total} is not what the bank paid out, net: {ledger.paid_out}")
    for i, p in enumerate(s.seats):
        if p.cash < 0:
            fail(s, f"seat {i} has negative cash {p.cash}")


def board(s: State) -> None:
    """Only properties have owners, each a seat still in (or the bank); only streets have buildings."""
    sites, n = s.sites, len(s.seats)
    for q in OTHER_SQUARES:
        if sites[q].owner is not None or sites[q].level or sites[q].mortgaged:
            fail(s, f"square {q} ({SQUARES[q].name}) is not a property but has {sites[q]}")
    for q in PROPERTIES:
        site = sites[q]
        owner = site.owner
        if owner is None:
            if site.level or site.mortgaged:
                fail(s, f"the bank's {SQUARES[q].name} has {site}")
            continue
        if not 0 <= owner < n or s.seats[owner].bankrupt:
            fail(s, f"{SQUARES[q].name} owned by seat {owner}, not a seat still in")
        if site.level and (site.level > HOTEL or q not in STREETS):
            fail(s, f"{SQUARES[q].name} at level {site.level}")


def buildings(s: State) -> None:
    """32 houses and 12 hotels in all; built evenly on whole, unmortgaged groups."""
    levels = [site.level for site in s.sites]
    houses = sum(level for level in levels if level < HOTEL)
    hotels = levels.count(HOTEL)
    if houses + s.houses != HOUSES or s.houses < 0:
        fail(s, f"{houses} houses on the board and {s.houses} in the bank")
    if hotels + s.hotels != HOTELS or s.hotels < 0:
        fail(s, f"{hotels} hotels on the board and {s.hotels} in the bank")
    if not any(levels):
        return
    for group in STREET_GROUPS:
        sites = [s.sites[q] for q in GROUPS[group]]
        built = [site.level for site in sites]
        if max(built) - min(built) > 1:
            fail(s, f"{group} built unevenly: {built}")
        if max(built) == 0:
            continue
        if len({site.owner for site in sites}) != 1:
            fail(s, f"buildings on {group}, which one owner does not hold whole")
        if any(site.mortgaged for site in sites):
            fail(s, f"buildings on {group}, which has a mortgaged site")


def cards(s: State) -> None:
    """Each card of each deck in exactly one place: its deck, or (Get Out of Jail Free) a hand."""
    held = [c for p in s.seats for c in p.jail_cards]
    if sorted([*s.chance, *(c for c in held if c.startswith("CH"))]) != CHANCE_IDS:
        fail(s, f"Chance cards not each in one place: deck {s.chance}, hands {held}")
    if sorted([*s.chest, *(c for c in held if c.startswith("CC"))]) != CHEST_IDS:
        fail(s, f"Community Chest cards not each in one place: deck {s.chest}, hands {held}")


def seats(s: State) -> None:
    for i, p in enumerate(s.seats):
        if not 0 <= p.position < 40:
            fail(s, f"seat {i} on square {p.position}")
        if p.in_jail and p.position != JAIL:
            fail(s, f"seat {i} in jail but on square {p.position}")
        if not 0 <= p.jail_tries <= JAIL_TRIES or (p.jail_tries and not p.in_jail):
            fail(s, f"seat {i}: {p.jail_tries} tries at doubles, in jail: {p.in_jail}")
        if p.bankrupt and (p.cash or p.jail_cards or p.in_jail):
            fail(s, f"bankrupt seat {i} still holds {p}")
        if p.forfeited and not (s.config.turn_seconds and p.missed >= s.config.forfeit_after):
            fail(s, f"seat {i} forfeited after {p.missed} missed turns")


def at_rest(s: State, legal_commands) -> None:
    """Between two commands: a game in play waits on someone who can act, and the turn is a live seat's once
    nothing blocks it (a bankrupt's properties are auctioned before the turn passes on); a forfeit is a bankruptcy."""
    for i, seat in enumerate(s.seats):
        if seat.forfeited and not seat.bankrupt:
            fail(s, f"seat {i} forfeited but not bankrupt")
    if s.phase != "playing":
        return
    if not s.blocked and s.seats[s.turn_seat].bankrupt:
        fail(s, f"the turn is bankrupt seat {s.turn_seat}'s")
    p = s.pending
    if p is not None:
        if not p.seats or any(s.seats[q].bankrupt for q in p.seats):
            fail(s, f"a {p.kind} wait on {p.seats}")
        if not legal_commands(s, p.seat):
            fail(s, f"a {p.kind} wait on seat {p.seat}, who may send nothing")
    if not s.blocked and not legal_commands(s, s.turn_seat):
        fail(s, f"seat {s.turn_seat} has the turn and nothing legal")
    if s.rules_version >= 3 and s.config.turn_seconds and s.step == "roll" and not s.timed_out:
        if (s.turn_left_ms is not None) != s.blocked or (s.turn_deadline_at is None) != s.blocked:
            fail(s, f"the roll's clock {'stopped' if s.turn_left_ms is not None else 'running'} (blocked: {s.blocked})")


def finished(s: State, events: list[msgspec.Struct]) -> None:
    """The end: one ``game_ended``, won by a seat still in, with every worth recorded."""
    ended = [e for e in events if isinstance(e, ev.GameEnded)]
    if s.phase != "over" or len(ended) != 1:
        fail(s, f"phase {s.phase} with {len(ended)} game_ended events")
    e = ended[0]
    if s.seats[e.winner].bankrupt or len(e.worth) != s.n:
        fail(s, f"won by seat {e.winner} (bankrupt: {s.seats[e.winner].bankrupt}), worths {e.worth}")
    if e.reason == "last_player" and len(s.live) != 1:
        fail(s, f"won as the last player with {len(s.live)} left")
    if e.reason == "max_rounds" and max(e.worth) != e.worth[e.winner]:
        fail(s, f"max_rounds won by seat {e.winner} with {e.worth}")
