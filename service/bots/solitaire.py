"""Bots for the solitaire. Both play only commands from ``legal_commands`` and never read the seed: they see
the board a player sees, so a redeal is as much a surprise to them as to anyone.

- ``greedy`` looks one move ahead and scores the layout each move leads to (``worth``): cards seated, live gaps
  right after runs, runs one move from such a gap, bonds and mobility, less dead gaps. It takes the best move if
  it seats a card, or (up to ``NEUTRAL_MOVES`` moves a deal) if it loses nothing by that score. It never goes
  back to a layout of the game (read from the state's history, so it needs no memory of its own and never
  shuttles); with no such move it redeals, and after the last redeal it resigns. No search, no randomness: a
  few legal-move lists a move, and the same deal is played the same way every time.
- ``solver`` plays the line of ``solver.best_line``: the most cards seated before the next redeal that a
  search of ``budget`` nodes finds, then redeals; after the last redeal it resigns unless the line won.

A stuck game (rules version 2: no move and no redeal left, ``legal`` only undo and resign) is resigned by both:
an undo would only lead back to a board the bot already chose to leave, so neither lets the game hang.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import pairwise

import msgspec

from service.events import solitaire as ev
from service.rules.solitaire import move_command
from service.rules.solitaire.layout import (
    DECK,
    RUN_COMPLETE,
    Layout,
    Move,
    apply_move,
    card_of,
    fillers,
    gaps,
    rank_of,
    runs,
    suit_of,
)
from service.rules.solitaire.solver import REDEAL, Step, best_line, ordered_moves, seated
from service.rules.solitaire.state import State

SOLVER_BUDGET = 1_000
"""Nodes per search of the solver bot: a fraction of a second, so the service can seat it."""

RESIGN = "resign"


def command_for(step: Step | str, legal: list[msgspec.Struct]) -> msgspec.Struct:
    """The command of ``legal`` that plays ``step``: a bot never sends anything it was not offered."""
    wanted = {REDEAL: ev.Redeal(), RESIGN: ev.Resign()}.get(step) if isinstance(step, str) else move_command(step)
    if wanted not in legal:
        raise ValueError(f"{step} is not among the legal commands")
    return wanted


NEUTRAL_MOVES = 100
"""Moves a deal after which the greedy bot takes only moves that seat a card: with ``visited`` this bounds every game."""

# The greedy bot's scoring of a layout (``worth``): what a redeal keeps first, then what makes the next seat possible.
SEATED = 100
"""Each card seated in a run: all a redeal keeps."""
GAP_AFTER_RUN = 50
"""Each gap right after a run (slot 1 after none): the run's next card (or a two) can be seated at once."""
DEAD_GAP = -40
"""Each gap nothing fits (after a king or between gaps): lost until the next redeal ("never open a dead gap")."""
RUN_FREED = 10
"""Each row whose card right after its run fits a gap elsewhere: one move opens a live gap after the run."""
BOND = 3
"""Each card right of the card one rank below it in suit: a stepping stone for the run."""
MOBILITY = 1
"""Each legal move: a board with more moves has more ways on."""

_NEXT = {card: card_of(rank_of(card) + 1, suit_of(card)) for card in DECK if card[0] not in "AK"}


def worth(layout: Layout) -> int:
    """The greedy bot's score of a layout (the weights above): seated cards, live gaps after runs, runs one move from
    being opened, bonds and mobility, less the dead gaps."""
    lengths = runs(layout)
    score = SEATED * sum(lengths)
    fitting: set[str] = set()
    for row, slot in gaps(layout):
        fits = fillers(layout, row, slot)
        fitting.update(fits)
        score += MOBILITY * len(fits)
        if not fits:
            score += DEAD_GAP
        elif slot == lengths[row] + 1:
            score += GAP_AFTER_RUN
    for line, n in zip(layout, lengths):
        score += BOND * sum(1 for a, b in pairwise(line) if a is not None and b is not None and _NEXT.get(a) == b)
        if n < RUN_COMPLETE and line[n] in fitting:
            score += RUN_FREED
    return score


def greedy_step(
    layout: Layout, redeals_left: int, *, visited: frozenset[Layout] = frozenset(), moves_this_deal: int = 0
) -> Step | str:
    """One move ahead: of the moves that unseat nothing and lead to a layout not ``visited``, the one to the layout of
    most ``worth`` (the first in ``ordered_moves`` order on a tie). Taken if it seats a card, or, within
    ``NEUTRAL_MOVES`` moves a deal, if it loses no worth; else redeal while one is left; else resign (a stuck game
    included: nothing is left but undo, which would only lead back)."""
    now = seated(layout)
    best: tuple[int, Move, int] | None = None
    for option in ordered_moves(layout):
        if option.layout in visited:
            continue
        score = worth(option.layout)
        if best is None or score > best[0]:
            best = (score, option.move, now + option.seated_gain)
    if best is not None and (best[2] > now or (moves_this_deal < NEUTRAL_MOVES and best[0] >= worth(layout))):
        return best[1]
    return REDEAL if redeals_left > 0 else RESIGN


class GreedyBot:
    """One move ahead by ``worth``, never back to a layout already seen (see the module's docstring)."""

    name = "greedy"

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        if not legal or s.layout is None:
            return None
        visited = frozenset(step.layout for step in s.history)
        step = greedy_step(s.layout, s.redeals_left, visited=visited, moves_this_deal=moves_since_redeal(s))
        return command_for(step, legal)


def moves_since_redeal(s: State) -> int:
    """Moves still standing since the last redeal (or the deal)."""
    count = 0
    for step in reversed(s.history):
        if step.kind == "redealt":
            break
        count += 1
    return count


@dataclass
class SolverBot:
    """Plays ``best_line`` to its end, searching again from there when the search ran out of budget (a deeper
    line may start where it stopped), then redeals or, with none left, resigns. The line is kept between
    calls and followed only while the board is where the line says it should be."""

    budget: int = SOLVER_BUDGET
    name: str = "solver"
    nodes: int = 0
    """Nodes searched over the game: the cost the rates report shows."""
    exhausted: int = 0
    """Searches of the game that stopped on the budget."""
    plan: list[Move] = field(default_factory=list)
    expected: Layout | None = None
    settled: Layout | None = None
    """Where the last complete search ended: nothing better is reachable from it before a redeal."""

    followed: tuple[Layout, ...] = ()
    """The boards of this deal it was asked at, in order: the game's own since its last redeal, when it made them."""

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        if not legal or s.layout is None:
            return None
        self._catch_up(s)
        chosen = self.step(s.layout, s.redeals_left, frozenset(step.layout for step in s.history))
        self.followed += (s.layout,)
        return command_for(chosen, legal)

    def _catch_up(self, s: State) -> None:
        """Be the bot that played this deal so far: its choice is then a function of the board and its history alone
        (``replays verify`` re-derives it), and what it keeps between calls only saves it the searches. A bot that did
        not see every board of the deal since the last redeal (made anew, or its moves not all applied) is asked them
        again, in order, from a blank plan."""
        start = max((i + 1 for i, step in enumerate(s.history) if step.kind == "redealt"), default=0)
        boards = tuple(step.layout for step in s.history[start:])
        if boards == self.followed:
            return
        self.plan, self.expected, self.settled, self.followed = [], None, None, ()
        for i, board in enumerate(boards):
            self.step(board, s.redeals_left, frozenset(step.layout for step in s.history[: start + i]))
            self.followed += (board,)

    def step(self, layout: Layout, redeals_left: int, visited: frozenset[Layout] = frozenset()) -> Step | str:
        """The next step of the line; a line searched afresh is taken only if it does not lead straight back to a
        board of the game (``visited``): a bot made anew mid-game (a restart, another worker) has no memory of
        its line, and must not shuttle where the bot before it was heading."""
        if not (self.plan and layout == self.expected):
            self.plan = [] if layout == self.settled else self.search(layout)
            if self.plan and apply_move(layout, self.plan[0]) in visited:
                self.plan = []
        if not self.plan:
            return REDEAL if redeals_left > 0 else RESIGN
        move = self.plan.pop(0)
        self.expected = apply_move(layout, move)
        return move

    def search(self, layout: Layout) -> list[Move]:
        line = best_line(layout, budget=self.budget)
        self.nodes += line.nodes
        self.exhausted += not line.complete
        self.settled = line.layout if line.complete else None
        return line.moves if seated(line.layout) > seated(layout) else []  # a line that seats nothing is a shuttle


BOTS = {"greedy": GreedyBot, "solver": SolverBot}
