"""Searching a solitaire position: a win within the redeals left, or the best a player can do before the next one.

Pure and bounded by a **node budget**, never by time, so a search gives the same answer on any machine.
A node is one layout expanded (its legal moves generated and tried); the count is part of every answer.

One deal (the moves between two redeals) is searched depth first with a transposition table keyed on the
layout, so a layout is expanded once however it is reached (that also rules out every shuttle, immediate or
not, inside a line). Moves are tried in the order a good player would look at them: those that grow a run
first, then those that set a card next to its neighbour in suit (a *bond*: a card right of the one below it,
or a two in slot 1), then the rest in the order of ``legal_moves``. A move that takes a card out of a run
without seating more elsewhere is never tried: what is seated is safe through a redeal, and giving it back
only loses ground. (So a proven loss means "no win along lines that never unseat a card"; moving a lone two
to a slot 1 where it starts a longer run is still allowed.)

Across redeals the search goes by what a redeal keeps: the runs. A redeal deals the same cards whenever the
seated cards are the same, so from one deal's search each distinct set of runs reached is redealt once, the
most cards seated first, and the next deal is searched from each in turn (depth first over the redeals too).
Each deal's search is capped at a quarter of the budget (``REGION_SHARE``) so that one deal's shuttling cannot starve
the redeals.

Who may see the seed. A redeal shuffles by the game's seed, so with the seed the whole game is one
deterministic puzzle, and ``solve(..., seed=...)`` answers "can this deal be won?" (within the budget): the
measure for the rates report. A player cannot see the seed, so the hint and the solver bot use ``best_line``,
which searches **only the moves before the next redeal** and treats the redeal's outcome as unknown: it aims
for the layout with the most cards seated in runs (a win first), because the runs are all a redeal keeps.
Nothing it returns depends on the seed, so the hint never leaks a future deal.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

from .layout import (
    DECK,
    SLOTS,
    Card,
    Layout,
    Move,
    Played,
    apply_move,
    card_of,
    fillers,
    is_shuttle,
    legal_moves,
    rank_of,
    redeal,
    runs,
    suit_of,
    won,
)
from .state import REDEALS

REDEAL: Final = "redeal"
SEATED_ALL: Final = 48
_SUCCESSOR: Final = {card: card_of(rank_of(card) + 1, suit_of(card)) if card[0] != "K" else None for card in DECK}

Runs = tuple[int, ...]
Seated = tuple[tuple[str, int], ...]

Step = Move | Literal["redeal"]


@dataclass(frozen=True)
class Solution:
    """The answer of ``solve``: ``won`` is True with the winning line in ``moves``, False when every line was
    searched without a win, None when the budget ran out first (``moves`` is then empty)."""

    won: bool | None
    moves: list[Step]
    nodes: int


@dataclass(frozen=True)
class Line:
    """The answer of ``best_line``: the moves to the best layout found before the next redeal."""

    moves: list[Move]
    layout: Layout
    seated: int
    nodes: int
    complete: bool
    """True when every layout of the deal reachable from the start was searched: no better line exists."""


@dataclass
class _Deal:
    """The depth-first search of one deal: its transposition table and node count, within its budget."""

    budget: int
    seen: set[Layout] = field(default_factory=set)
    nodes: int = 0
    exhausted: bool = False
    """Set when the walk stopped on the budget rather than for want of layouts to expand."""

    def expand(self, layout: Layout, lengths: Runs) -> Iterator[Option]:
        """The layout's moves in search order, counted as one node."""
        self.nodes += 1
        return iter(ordered_moves(layout, lengths))

    def walk(self, layout: Layout) -> Iterator[tuple[list[Move], Option]]:
        """Every layout first reached, depth first, with the line to it; stops when the budget is spent."""
        self.seen.add(layout)
        stack = [self.expand(layout, runs(layout))]
        line: list[Move] = []
        while stack:
            option = next(stack[-1], None)
            if option is None:
                stack.pop()
                if line:
                    line.pop()
                continue
            if option.layout in self.seen:
                continue
            self.seen.add(option.layout)
            line.append(option.move)
            yield line, option
            if self.nodes >= self.budget:
                self.exhausted = True
                return
            stack.append(self.expand(option.layout, option.lengths))


REGION_SHARE: Final = 4
"""A deal's search may use at most a quarter of the whole budget (see the module's docstring)."""


@dataclass
class _Game:
    """The search across redeals: the redeals tried, the nodes spent, and whether any search was cut short."""

    seed: bytes | None
    budget: int
    redealt: set[tuple[Seated, int]] = field(default_factory=set)
    nodes: int = 0
    cut: bool = False

    def solve(self, layout: Layout, redeals_used: int) -> list[Step] | None:
        """A winning line from ``layout``, or None."""
        ends: dict[Seated, tuple[list[Step], Layout]] = {_seated_cards(layout, runs(layout)): ([], layout)}
        share = self.budget if self.seed is None else max(1, self.budget // REGION_SHARE)
        search = _Deal(min(share, self.budget - self.nodes))
        for line, reached in search.walk(layout):
            if sum(reached.lengths) == SEATED_ALL:
                self.nodes += search.nodes
                return list(line)
            ends.setdefault(_seated_cards(reached.layout, reached.lengths), (list(line), reached.layout))
        self.nodes += search.nodes
        self.cut |= search.exhausted
        if self.seed is None or redeals_used >= REDEALS:
            return None
        return self.redeal_from(ends, redeals_used + 1)

    def redeal_from(self, ends: dict[Seated, tuple[list[Step], Layout]], k: int) -> list[Step] | None:
        """Redeal ``k`` from each set of runs reached, the most cards seated first, and search on."""
        assert self.seed is not None
        for cards in sorted(ends, key=lambda c: -sum(n for _, n in c)):
            if self.nodes >= self.budget:
                self.cut = True
                return None
            if (cards, k) in self.redealt:
                continue
            self.redealt.add((cards, k))
            line, layout = ends[cards]
            rest = self.solve(redeal(layout, self.seed, k), k)
            if rest is not None:
                return [*line, REDEAL, *rest]
        return None


def _seated_cards(layout: Layout, lengths: Runs) -> Seated:
    """Which cards are in runs, as each row's two and run length: all a redeal depends on besides the seed and
    ``k`` (a run is its two's suit from two up)."""
    return tuple((row[0], n) if n else ("", 0) for row, n in zip(layout, lengths))


def solve(layout: Layout, *, seed: bytes | None, redeals_used: int, budget: int) -> Solution:
    """A winning line from ``layout`` within the redeals left (``"redeal"`` steps included), searched in at most
    ``budget`` nodes. With ``seed=None`` the redeals cannot be foreseen, so only the current deal is searched."""
    if won(layout):
        return Solution(True, [], 0)
    game = _Game(seed if redeals_used < REDEALS else None, budget)  # no redeal left: the seed tells nothing more
    line = game.solve(layout, redeals_used)
    if line is not None:
        return Solution(True, line, game.nodes)
    return Solution(None if game.cut else False, [], game.nodes)


def best_line(layout: Layout, *, budget: int) -> Line:
    """The line, before any redeal, to the layout with the most cards seated in runs (a win above all), the
    shortest such line among those found in ``budget`` nodes. It never looks at the seed."""
    search = _Deal(budget)
    best_moves: list[Move] = []
    best_layout, best_seated = layout, seated(layout)
    for line, reached in search.walk(layout):
        count = sum(reached.lengths)
        if count > best_seated or (count == best_seated and best_moves and len(line) < len(best_moves)):
            best_moves, best_layout, best_seated = list(line), reached.layout, count
            if count == SEATED_ALL:
                break
    return Line(best_moves, best_layout, best_seated, search.nodes, not search.exhausted)


def best_move(
    layout: Layout, *, budget: int, previous: Played | None = None, seen: Collection[Layout] = ()
) -> Move | None:
    """The hint: a legal move, never the card just moved put straight back (``previous``), preferring one that
    grows a run; among the run-growing moves (or, if there is none, among the rest) those that leave a live gap
    where the card was, if any ("never open a dead gap"); of those the first move of ``best_line`` when it is one
    of them, else the first in search order.

    ``seen`` are layouts the game has already passed through (the state's history): a move back to one is a
    longer shuttle. So the moves are taken in tiers, the first that has any: those that unseat nothing and
    lead somewhere new, then those that unseat nothing, then those that give back seated cards (somewhere new
    first). ``None`` only when no move but the shuttle is left."""
    pool = next((tier for tier in _hint_tiers(layout, previous, seen) if tier), None)
    if pool is None:
        return None
    now = seated(layout)
    pool = [m for m in pool if seated(apply_move(layout, m)) > now] or pool
    pool = [m for m in pool if leaves_live_gap(layout, m)] or pool
    line = best_line(layout, budget=budget)
    if line.moves and line.moves[0] in pool:
        return line.moves[0]
    return pool[0]


def _hint_tiers(layout: Layout, previous: Played | None, seen: Collection[Layout]) -> list[list[Move]]:
    """The moves the hint may name, best tier first (see ``best_move``)."""
    safe = [option.move for option in ordered_moves(layout) if not is_shuttle(layout, option.move, previous)]
    giving_back = [m for m in unseating_moves(layout) if not is_shuttle(layout, m, previous)]

    def new(moves: list[Move]) -> list[Move]:
        return [m for m in moves if apply_move(layout, m) not in seen]

    return [new(safe), safe, new(giving_back), giving_back]


def leaves_live_gap(layout: Layout, move: Move) -> bool:
    """Whether the slot ``move``'s card leaves takes some card afterwards: not dead (a slot right of a king or between
    gaps, with nothing below on its right), which would be lost until the next redeal."""
    origin = _slot_of(layout, move[0])
    return bool(fillers(_moved(layout, origin, move), *origin))


def seated(layout: Layout) -> int:
    """Cards in runs: what a redeal keeps, and the measure of progress."""
    return sum(runs(layout))


class Option(NamedTuple):
    """A legal move with what it leads to: the layout, its runs, and the cards seated and bonds it gains."""

    move: Move
    layout: Layout
    lengths: Runs
    seated_gain: int
    bond_gain: int


def ordered_moves(layout: Layout, lengths: Runs | None = None) -> list[Option]:
    """The legal moves that unseat nothing, in search order: most cards seated first, then most bonds gained,
    then the order of ``legal_moves``.

    ``lengths`` are the layout's runs when the caller already has them (the search carries them along)."""
    lengths = runs(layout) if lengths is None else lengths
    now = sum(lengths)
    scored = []
    for i, move in enumerate(legal_moves(layout)):
        origin = _slot_of(layout, move[0])
        after = _moved(layout, origin, move)
        after_lengths = _runs_after(after, lengths, origin, move)
        gained = sum(after_lengths) - now
        if gained >= 0:
            bonds = _bonds_at(after, move[1], move[2]) - _bonds_at(layout, *origin)
            scored.append((-gained, -bonds, i, Option(move, after, after_lengths, gained, bonds)))
    scored.sort(key=lambda t: t[:3])
    return [option for *_, option in scored]


def unseating_moves(layout: Layout) -> list[Move]:
    """The legal moves ``ordered_moves`` leaves out: they give back seated cards."""
    now = seated(layout)
    return [m for m in legal_moves(layout) if seated(apply_move(layout, m)) < now]


def _slot_of(layout: Layout, card: Card) -> tuple[int, int]:
    """``layout.find`` for a card known to be on the board, a row at a time (the search's hottest lookup)."""
    for r, line in enumerate(layout):
        if card in line:
            return r, line.index(card) + 1
    raise ValueError(f"{card} is not on the board")


def _moved(layout: Layout, origin: tuple[int, int], move: Move) -> Layout:
    """``apply_move`` when the card's slot is already known: only the one or two rows touched are rebuilt."""
    card, row, slot = move
    rows = list(layout)
    source = list(rows[origin[0]])
    source[origin[1] - 1] = None
    rows[origin[0]] = tuple(source)
    target = list(rows[row])
    target[slot - 1] = card
    rows[row] = tuple(target)
    return tuple(rows)  # type: ignore[return-value]


def _runs_after(after: Layout, lengths: Runs, origin: tuple[int, int], move: Move) -> Runs:
    """The runs after ``move``, from those before: a card leaving a run cuts it short of its slot, and a card
    landing right after a run extends it through whatever already follows in suit. (``run_length`` would
    recount whole rows; this is the search's inner loop.)"""
    out = list(lengths)
    row, slot = origin
    if slot <= out[row]:
        out[row] = slot - 1
    card, row, slot = move
    line = after[row]
    if slot == out[row] + 1 and (slot == 1 or _SUCCESSOR[line[slot - 2]] == card):
        n = slot
        while n < SLOTS and line[n] is not None and line[n] == _SUCCESSOR[line[n - 1]]:
            n += 1
        out[row] = n
    return tuple(out)


def _bonds_at(layout: Layout, row: int, slot: int) -> int:
    """Bonds of the card at ``(row, slot)``: with the card on its left (it is that card's successor in suit,
    or a two in slot 1) and with the card on its right (that card is its successor)."""
    line = layout[row]
    card = line[slot - 1]
    if card is None:
        return 0
    left = card[0] == "2" if slot == 1 else _follows(line[slot - 2], card)
    right = slot < SLOTS and _follows(card, line[slot])
    return int(left) + int(right)


def _follows(lower: Card | None, upper: Card | None) -> bool:
    """Whether ``upper`` is ``lower``'s successor in suit."""
    return lower is not None and upper is not None and _SUCCESSOR[lower] == upper
