"""The hint: one legal command for the player, from a short search of the board they see.

RULES.md §2 asks for a hint that names a legal move, preferring one that grows a run and never a shuttle.
First, right after a move that took cards out of a run (fewer seated than before it), the hint puts the card back:
that move grows the run again, and anything else — a redeal above all — would lock the shorter run in. Otherwise
``solver.best_move`` ranks the moves (never the card just moved sent straight back, a run-growing move first, one
that leaves a live gap where its card was before one that leaves a dead gap, then the first move of the best line a
search of ``BUDGET`` nodes finds before the next redeal) and puts last the moves back to a layout the game has
already passed through and those that give back seated cards. When only such moves are left the board has nothing
more to give before a redeal, so the hint names the redeal if one is left, and after the last one nothing (what is
left is to undo or to resign; a stuck game has no hint). The search never reads the seed: a hint does not know the
next deal either.
"""

from __future__ import annotations

import msgspec

from service.events import solitaire as ev

from . import layout as grid
from .legal import move_command
from .solver import best_move, seated
from .state import State

BUDGET = 150
"""Nodes a hint may search: a few milliseconds, since every view of a game being played carries one."""


def hint(s: State) -> msgspec.Struct | None:
    """The suggested command, or ``None`` when the game is not being played or no move goes forward and no
    redeal is left."""
    if s.phase != "playing" or s.layout is None:
        return None
    board = s.layout
    back = put_back(s)
    if back is not None:
        return move_command(back)
    seen = {step.layout for step in s.history}
    move = best_move(board, budget=BUDGET, previous=s.last, seen=seen)
    if move is not None and _goes_forward(board, move, seen):
        return move_command(move)
    return ev.Redeal() if s.redeals_left > 0 else None


def put_back(s: State) -> grid.Move | None:
    """The move that sends the card of the last step back where it came from, when that step was a move that left
    fewer cards seated than before it (a card taken out of a run): it seats them again."""
    if not s.history or s.history[-1].kind != "card_moved" or s.last is None or s.layout is None:
        return None
    if seated(s.history[-1].layout) <= seated(s.layout):
        return None
    card, row, slot, _, _ = s.last
    back = (card, row, slot)
    return back if back in grid.legal_moves(s.layout) else None


def _goes_forward(board: grid.Layout, move: grid.Move, seen: set[grid.Layout]) -> bool:
    """Whether ``move`` leads somewhere new without giving back a seated card."""
    after = grid.apply_move(board, move)
    return after not in seen and seated(after) >= seated(board)
