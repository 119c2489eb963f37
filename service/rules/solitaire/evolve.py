"""``evolve``: the total fold of the solitaire's events into its board. No choices are made here.

Every event carries what it changed (a move names both slots, a redeal and an undo the whole layout),
so folding needs neither the seed nor the rules' checks.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import solitaire as ev
from service.events.common import GameClosed, SeatTaken

from ..close import closed_of
from ..setup import seeded
from .layout import Layout
from .state import Seat, State, Step

replace = msgspec.structs.replace


def evolve(state: State, event: msgspec.Struct) -> State:
    return replace(_apply(event, state, state.version + 1), version=state.version + 1)


def _layout(rows: tuple[tuple[str | None, ...], ...]) -> Layout:
    return tuple(tuple(row) for row in rows)  # type: ignore[return-value]


@singledispatch
def _apply(event: msgspec.Struct, state: State, seq: int) -> State:
    return state


@_apply.register
def _(e: ev.GameCreated, s: State, seq: int) -> State:
    return replace(s, phase="waiting", rules_version=e.rules_version, seeding=e.seeding)


@_apply.register
def _(e: SeatTaken, s: State, seq: int) -> State:
    return replace(s, seats=(Seat(player=e.player),), **seeded(s, e, 1))


@_apply.register
def _(e: ev.LayoutDealt, s: State, seq: int) -> State:
    return replace(s, phase="playing", layout=_layout(e.layout), redeals_used=0, history=(), last=None)


@_apply.register
def _(e: ev.CardMoved, s: State, seq: int) -> State:
    """The card goes where the event says: the slots it names, not a search, so any logged move folds."""
    before = s.layout
    if before is None:
        return s
    rows = [list(row) for row in before]
    rows[e.from_.row][e.from_.slot - 1] = None
    rows[e.to.row][e.to.slot - 1] = e.card
    step = Step(seq=seq, kind="card_moved", layout=before, redeals_used=s.redeals_used, last=s.last)
    played = (e.card, e.from_.row, e.from_.slot, e.to.row, e.to.slot)
    return replace(s, layout=_layout(rows), history=s.history + (step,), last=played)  # type: ignore[arg-type]


@_apply.register
def _(e: ev.Redealt, s: State, seq: int) -> State:
    step = Step(seq=seq, kind="redealt", layout=s.layout, redeals_used=s.redeals_used, last=s.last)  # type: ignore[arg-type]
    return replace(s, layout=_layout(e.layout), redeals_used=e.k, history=s.history + (step,), last=None)


@_apply.register
def _(e: ev.Undone, s: State, seq: int) -> State:
    """Back to the position before the step: its layout, its redeal count, its last move."""
    if not s.history:
        return replace(s, layout=_layout(e.layout))
    step = s.history[-1]
    return replace(s, layout=_layout(e.layout), redeals_used=step.redeals_used, last=step.last, history=s.history[:-1])


@_apply.register
def _(e: ev.GameWon, s: State, seq: int) -> State:
    return replace(s, phase="won")


@_apply.register
def _(e: ev.GameLost, s: State, seq: int) -> State:
    return replace(s, phase="lost", lost_reason=e.reason)


@_apply.register
def _(e: GameClosed, s: State, seq: int) -> State:
    return replace(s, phase="lost", lost_reason=e.reason, closed=closed_of(e))
