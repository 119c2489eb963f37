"""Builders for Monopoly's rule tests: a started game, then an exact table to play a ruling on.

``table(...)`` starts from a real game (Create + TakeSeat × n through the decider) and lays out cash,
positions, ownership and buildings with ``msgspec.structs.replace``; the bank's stock follows the buildings
placed. A ``Table`` plays commands through the real decider (``run``) and keeps the last batch of events::

    def test_rent_is_doubled_on_a_bare_complete_group():
        t = table(own={1: [1, 3]}, at={0: 39})
        t.dice(1, 1).play(Roll(), 0)

``table(rules_version=1, ...)`` lays the table out in a game of an older rules version, to show it still decides
the old way.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec
import pytest

from service.events.base import Player
from service.events.common import Create, TakeSeat, Timeout
from service.events.monopoly import MonopolyConfig
from service.rules.errors import RuleViolation
from service.rules.monopoly import board, run
from service.rules.monopoly.state import RULES_VERSION, SeatState, State, initial
from service.rules.rng import Stream

SEED = bytes(range(32))
AT = 1_800_000_000_000

replace = msgspec.structs.replace


@cache
def started(
    seats: int = 2, max_rounds: int | None = None, response_seconds: int = 30, rules_version: int = RULES_VERSION
) -> State:
    """A game with every seat taken, under ``rules_version`` (the current one unless a test plays an older)."""
    s = initial(
        MonopolyConfig(seats=seats, max_rounds=max_rounds, response_seconds=response_seconds),
        SEED,
        rules_version,
    )
    s = run(s, Create(), None, AT)[1]
    for i in range(seats):
        s = run(s, TakeSeat(player=Player(name=f"p{i}")), None, AT)[1]
    return s


@cache
def roll_index(seed: bytes, dice: tuple[tuple[int, int], ...]) -> int:
    """The roll count after which the next throws of ``seed`` are ``dice``, in order."""
    for k in range(200_000):
        if all(_throw(seed, k + 1 + i) == d for i, d in enumerate(dice)):
            return k
    raise AssertionError(f"no run of throws {dice}")


def _throw(seed: bytes, n: int) -> tuple[int, int]:
    stream = Stream(seed, f"dice:{n}")
    return stream.below(6) + 1, stream.below(6) + 1


class Table:
    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[msgspec.Struct] = []
        self.now = AT

    def play(self, command: msgspec.Struct, seat: int | None, at: int | None = None) -> Table:
        self.events, self.state = run(self.state, command, seat, self.now if at is None else at)
        return self

    def refused(self, command: msgspec.Struct, seat: int | None, code: str) -> RuleViolation:
        before = self.state
        with pytest.raises(RuleViolation) as caught:
            run(self.state, command, seat, self.now)
        assert caught.value.code == code, (caught.value.code, caught.value.message)
        assert self.state is before
        return caught.value

    def timeout(self) -> Table:
        p = self.state.pending
        assert p is not None
        return self.play(Timeout(), None, p.deadline_at)

    def dice(self, *throws: tuple[int, int] | int) -> Table:
        """The next throws: ``dice(3, 4)`` is one throw; ``dice((6, 6), (2, 3))`` several in a row."""
        wanted = ((throws[0], throws[1]),) if isinstance(throws[0], int) else tuple(throws)
        self.state = replace(self.state, rolls=roll_index(self.state.seed, wanted))  # type: ignore[arg-type]
        return self

    def seat(self, i: int) -> SeatState:
        return self.state.seats[i]

    def cash(self, i: int) -> int:
        return self.state.seats[i].cash

    def owner(self, q: int) -> int | None:
        return self.state.sites[q].owner

    def level(self, q: int) -> int:
        return self.state.sites[q].level

    def tags(self) -> list[str]:
        return [type(e).__struct_config__.tag for e in self.events]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def table(
    seats: int = 2,
    *,
    cash: int | dict[int, int] = 1500,
    at: dict[int, int] | None = None,
    own: dict[int, Iterable[int]] | None = None,
    levels: dict[int, int] | None = None,
    mortgaged: Iterable[int] = (),
    jailed: Iterable[int] = (),
    jail_tries: dict[int, int] | None = None,
    jail_cards: dict[int, tuple[str, ...]] | None = None,
    chance: tuple[str, ...] | None = None,
    chest: tuple[str, ...] | None = None,
    turn: int = 0,
    houses: int | None = None,
    hotels: int | None = None,
    **config: Any,
) -> Table:
    """A started game laid out as asked (see the module's docstring); the bank's stock is what the buildings
    placed leave, unless ``houses``/``hotels`` say otherwise."""
    s = started(seats, **config)
    seats_ = list(s.seats)
    for i in range(seats):
        money = cash if isinstance(cash, int) else cash.get(i, 1500)
        held = (jail_cards or {}).get(i, ())
        seats_[i] = replace(
            seats_[i],
            cash=money,
            position=(at or {}).get(i, 0),
            in_jail=i in set(jailed),
            jail_cards=held,
            jail_tries=(jail_tries or {}).get(i, 0),
        )
    sites = list(s.sites)
    for seat, squares in (own or {}).items():
        for q in squares:
            sites[q] = replace(sites[q], owner=seat)
    for q, level in (levels or {}).items():
        sites[q] = replace(sites[q], level=level)
    for q in mortgaged:
        sites[q] = replace(sites[q], mortgaged=True)
    placed = [site.level for site in sites]
    stock_houses = board.HOUSES - sum(v for v in placed if v < board.HOTEL)
    stock_hotels = board.HOTELS - sum(1 for v in placed if v == board.HOTEL)
    held_cards = {c for cards in (jail_cards or {}).values() for c in cards}
    s = replace(
        s,
        seats=tuple(seats_),
        sites=tuple(sites),
        houses=stock_houses if houses is None else houses,
        hotels=stock_hotels if hotels is None else hotels,
        chance=tuple(c for c in (chance or s.chance) if c not in held_cards),
        chest=tuple(c for c in (chest or s.chest) if c not in held_cards),
        turn_seat=turn,
    )
    return Table(s)


def deck_with_top(deck: tuple[str, ...], card: str) -> tuple[str, ...]:
    return (card, *(c for c in deck if c != card))
