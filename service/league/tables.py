"""Who plays whom: the tables of a league and every seating of each.

A *table* is a multiset of bots, one per seat. With ``solo`` one bot plays alone against ``seats - 1`` of each
other bot (one expert, three greedy); else every table of ``seats`` bots drawn from the list that seats at least
two different bots (heads-up: each pair). A kind played alone (solitaire) has one table per bot, and every bot
plays the same deals. Game *i* of a table is seated in the table's *i*-th seating (cycling over the distinct
orders of its bots) and dealt ``seeds.game_seed(base, i)``: every table meets the same deals.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement, permutations

from service.sim import seeds


@dataclass(frozen=True)
class Task:
    """One game: everything it depends on."""

    kind: str
    table: tuple[str, ...]
    seating: tuple[str, ...]
    index: int
    seed: bytes
    bots_seed: int
    options: tuple[tuple[str, object], ...] = ()
    nodes: int | None = None


def tables(bots: list[str], seats: int, solo: str | None = None) -> list[tuple[str, ...]]:
    """The league's tables, each a sorted tuple of its bots."""
    if seats == 1:
        return [(b,) for b in bots]
    if solo is not None:
        return [tuple(sorted((solo, *[other] * (seats - 1)))) for other in bots if other != solo]
    return [t for t in combinations_with_replacement(sorted(bots), seats) if len(set(t)) > 1]


def seatings(table: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every distinct order of a table's bots around it, sorted (so the list depends on the table alone)."""
    return sorted(set(permutations(table)))


def plan(kind: str, bots: list[str], seats: int, games: int, base: bytes, *, solo: str | None = None,
         options: dict | None = None, nodes: int | None = None) -> list[Task]:
    """``games`` games for each table, seated in turn in each of its seatings."""
    out = []
    frozen = tuple(sorted((options or {}).items()))
    for table in tables(bots, seats, solo):
        orders = seatings(table)
        for i in range(games):
            out.append(Task(kind, table, orders[i % len(orders)], i, seeds.game_seed(base, i), seeds.bots_seed(base, i),
                            frozen, nodes))
    return out
