"""Each round's tables (RULES.md §4): round 1 at random from the tournament's seed; each later round by standing,
players of close standing together, avoiding a repeat of any earlier table-mate where the numbers allow.

One function draws every round: the entrants in order of their rank in the standings so far (everyone ranks first
before round 1), ties in the order of a shuffle from the tournament's seed (stream ``draw:<round>``); each table in
turn takes the best-placed player left and the best-placed others none of whom met before — backtracking where the
tables after it could not be made so (a bounded search, ``SEARCH``); where the numbers allow no such draw, seat by
seat the best placed of those who met the fewest at the table. A table's seats are then shuffled (stream
``seats:<round>:<table>``), so nobody sits first for being first. ``None`` in a table's seats is a bot's seat: a table
the entrants cannot fill is filled with bots, as few as the numbers allow and spread over the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from .. import rng


class DrawnTable(msgspec.Struct, frozen=True, kw_only=True):
    """One table of a round: the entrants at each seat in seat order, ``None`` for a seat a bot fills."""

    table: int
    seats: tuple[str | None, ...]

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(p for p in self.seats if p is not None)


class Draw(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    tables: tuple[DrawnTable, ...]


def table_sizes(entrants: int, table_size: int) -> list[int]:
    """How many entrants sit at each table: as few tables as seat everyone, their numbers as even as they can be
    (24 at tables of 4: six 4s; 22: four 4s and two 3s, each 3 with one bot)."""
    if entrants < 1 or table_size < 2:
        raise ValueError("a round needs an entrant and tables of two seats or more")
    tables = -(-entrants // table_size)
    base, extra = divmod(entrants, tables)
    return [base + 1 if t < extra else base for t in range(tables)]


def draw_round(seed: bytes, round_no: int, entrants: Sequence[str], table_size: int,
               ranks: Mapping[str, int] | None = None, met: Mapping[str, frozenset[str]] | None = None) -> Draw:
    """Round ``round_no``'s tables. ``ranks``: each entrant's rank in the standings before it (absent: round 1, all
    level); ``met``: whom each entrant has sat with in earlier rounds."""
    ranks, met = ranks or {}, met or {}
    lots = {p: n for n, p in enumerate(rng.shuffle(seed, f"draw:{round_no}", sorted(entrants)))}
    order = sorted(entrants, key=lambda p: (ranks.get(p, 1), lots[p]))
    sizes = table_sizes(len(entrants), table_size)
    try:
        grouped = _unmet(order, sizes, met, [SEARCH])
    except _OutOfSearch:
        grouped = None
    tables = []
    for t, chosen in enumerate(grouped if grouped is not None else _fewest_repeats(order, sizes, met)):
        seats: list[str | None] = [*chosen, *[None] * (table_size - len(chosen))]
        tables.append(DrawnTable(table=t, seats=tuple(rng.shuffle(seed, f"seats:{round_no}:{t}", seats))))
    return Draw(round=round_no, tables=tuple(tables))


SEARCH = 50_000
"""The most tables the search for a draw with no repeated table-mate tries (a few hundred do for 24 entrants at
tables of four over four rounds); past it, or where no such draw exists, the draw takes the fewest repeats seat by
seat instead."""


class _OutOfSearch(Exception):
    pass


def _unmet(left: list[str], sizes: list[int], met: Mapping[str, frozenset[str]], budget: list[int]) -> list[list[str]] | None:
    """Tables of ``sizes`` from ``left`` (best placed first) where nobody meets anyone again: each table the
    best-placed player left and the best-placed others who fit, backtracking when the tables after it cannot be
    made; ``None`` if there is no such draw."""
    if not sizes:
        return []
    first, rest = left[0], left[1:]
    for chosen in _fitting(rest, sizes[0] - 1, [first], met, budget):
        after = _unmet([p for p in rest if p not in chosen], sizes[1:], met, budget)
        if after is not None:
            return [chosen, *after]
    return None


def _fitting(left: list[str], wanted: int, chosen: list[str], met: Mapping[str, frozenset[str]], budget: list[int]):
    """Every way to add ``wanted`` players of ``left`` (in their order) to ``chosen`` with no two who met before."""
    if wanted == 0:
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfSearch
        yield list(chosen)
        return
    for i, p in enumerate(left):
        if len(left) - i < wanted:
            return
        if met.get(p, frozenset()).isdisjoint(chosen):
            yield from _fitting(left[i + 1:], wanted - 1, [*chosen, p], met, budget)


def _fewest_repeats(order: list[str], sizes: list[int], met: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """Seat by seat: the best-placed player left, then the best placed of those who met the fewest at the table."""
    left, out = list(order), []
    for size in sizes:
        chosen = [left.pop(0)]
        while len(chosen) < size:
            repeats = [len(met.get(p, frozenset()) & set(chosen)) for p in left]
            chosen.append(left.pop(repeats.index(min(repeats))))
        out.append(chosen)
    return out
