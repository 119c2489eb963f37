"""Bots for the solitaire. Both play only commands from ``legal_commands`` and never read the seed: they see
the board a player sees, so a redeal is as much a surprise to them as to anyone.

- ``greedy`` looks one move ahead: it takes the move that seats the most cards in runs, else one that sets a
  card beside its neighbour in suit (a bond); failing both, a move that loses no bond and leaves a gap
  something can fill, for up to ``NEUTRAL_MOVES`` moves a deal. It never goes back to a layout of the game
  (read from the state's history, so it needs no memory of its own and never shuttles); when no move is
  left it redeals, and after the last redeal it resigns (the game is lost then anyway).
- ``solver`` plays the line of ``solver.best_line``: the most cards seated before the next redeal that a
  search of ``budget`` nodes finds, then redeals; after the last redeal it resigns unless the line won.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import msgspec

from service.events import solitaire as ev
from service.rules.solitaire import move_command
from service.rules.solitaire.layout import Layout, Move, apply_move, fillers, find
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
"""Moves a deal after which the greedy bot takes only moves that seat a card or gain a bond: seated cards and
bonds are bounded, so its game always ends (with the cap it wins about a tenth of deals, without it none)."""


def greedy_step(
    layout: Layout, redeals_left: int, *, visited: frozenset[Layout] = frozenset(), moves_this_deal: int = 0
) -> Step | str:
    """The best move one step ahead to a layout not ``visited``: one that seats a card or gains a bond, else
    (within ``NEUTRAL_MOVES``) one that loses no bond and opens no dead gap; else redeal while one is left;
    else resign."""
    options = [o for o in ordered_moves(layout) if o.layout not in visited]
    if options and (options[0].seated_gain > 0 or options[0].bond_gain > 0):
        return options[0].move
    if moves_this_deal < NEUTRAL_MOVES:
        for option in options:
            if option.bond_gain >= 0 and leaves_live_gap(layout, option.move):
                return option.move
    return REDEAL if redeals_left > 0 else RESIGN


def leaves_live_gap(layout: Layout, move: Move) -> bool:
    """Whether the slot ``move``'s card leaves can take a card afterwards ("never open a dead gap")."""
    origin = find(layout, move[0])
    assert origin is not None
    return bool(fillers(apply_move(layout, move), *origin))


class GreedyBot:
    """One move ahead, never back to a layout already seen (see the module's docstring)."""

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

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        if not legal or s.layout is None:
            return None
        return command_for(self.step(s.layout, s.redeals_left, frozenset(step.layout for step in s.history)), legal)

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
