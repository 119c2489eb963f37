"""``decide``: the solitaire's rules. Each command either yields events or raises ``RuleViolation``.

As in the card game, a decision is a batch folded event by event, so the end of the game is read from
the board the command leaves: won when every row is two to king. When no move and no redeal remain the game is
stuck, not over (rules version 2: the player may still undo or resign); under version 1 it was lost there and then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from service.events import solitaire as ev
from service.events.common import Close, Create, SeedRevealed, TakeSeat

from .. import batch
from ..close import closing
from ..errors import RuleViolation
from ..setup import created, seat_taken
from . import layout as grid
from .evolve import evolve
from .state import STUCK_FROM, State
from .view import status_of

KIND = "solitaire"


class Batch(batch.Batch[State]):
    """The events of one decision, and the board they leave."""

    evolve = staticmethod(evolve)


def decide(state: State, command: msgspec.Struct, seat: int | None, at: int) -> list[msgspec.Struct]:
    """The events ``command`` from ``seat`` (``None``: the server) yields; ``at`` matters only to the server's close."""
    return run(state, command, seat, at)[0]


def run(state: State, command: msgspec.Struct, seat: int | None, at: int) -> tuple[list[msgspec.Struct], State]:
    """``decide`` and the state after its events, folded once."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"{type(command).__name__} is not a command of this game")
    b = Batch(state, at)
    handler(b, command, seat)
    return b.events, b.state


# --- guards: each raises the rule code the API answers with ----------------------------------------


def _server_only(seat: int | None) -> None:
    if seat is not None:
        raise RuleViolation("server_only", "Only the server may send this command")


def _player(s: State, seat: int | None) -> None:
    """A client command: from the one seat, in a game being played."""
    if seat != 0:
        raise RuleViolation("not_your_game", "Only the player of this solitaire may play it")
    if s.phase in ("new", "waiting"):
        raise RuleViolation("game_not_started", "The game has not been dealt yet")
    if s.over:
        raise RuleViolation("game_over", "The game is over")


# --- setup ---------------------------------------------------------------------------------------


def _create(b: Batch, c: Create, seat: int | None) -> None:
    _server_only(seat)
    b.emit(created(ev.GameCreated, KIND, b.state, b.state.rules_version, c.seeding, key_id=c.key_id))


def _take_seat(b: Batch, c: TakeSeat, seat: int | None) -> None:
    """The one seat taken, the cards are dealt at once."""
    _server_only(seat)
    s = b.state
    if s.phase != "waiting":
        raise RuleViolation("game_full" if s.phase != "new" else "game_not_started", "No seat is open in this game")
    b.emit(seat_taken(s, 0, c))
    b.emit(ev.LayoutDealt(layout=grid.deal(b.state.rng_seed)))  # a combined game's seed is derived by now


# --- play ------------------------------------------------------------------------------------------


def _move(b: Batch, c: ev.Move, seat: int | None) -> None:
    s = b.state
    _player(s, seat)
    board, row, slot = s.layout, c.to.row, c.to.slot
    assert board is not None
    if grid.cell(board, row, slot) is not None:
        raise RuleViolation("not_a_gap", f"Row {row} slot {slot} holds {grid.cell(board, row, slot)}, not a gap", row=row, slot=slot)
    origin = grid.find(board, c.card)
    if origin is None:
        raise RuleViolation("card_does_not_fit", f"{c.card} is out of play: the aces never move", card=c.card)
    if not grid.fits(board, c.card, row, slot):
        wanted = grid.fillers(board, row, slot)
        why = f"that gap takes {' or '.join(wanted)}" if wanted else "that gap is dead: nothing fits it"
        raise RuleViolation("card_does_not_fit", f"{c.card} does not fit row {row} slot {slot}: {why}", card=c.card, fits=wanted)
    b.emit(ev.CardMoved(card=c.card, from_=ev.Place(row=origin[0], slot=origin[1]), to=c.to))
    _settle(b)


def _redeal(b: Batch, c: ev.Redeal, seat: int | None) -> None:
    """Redeal at the player's choice; the text's "when no move remains" is not enforced (RULES.md §2)."""
    s = b.state
    _player(s, seat)
    if s.redeals_left <= 0:
        raise RuleViolation("no_redeal_left", "Both redeals of this game are spent")
    k = s.redeals_used + 1
    assert s.layout is not None
    b.emit(ev.Redealt(k=k, layout=grid.redeal(s.layout, s.rng_seed, k)))
    _settle(b)


def _undo(b: Batch, c: ev.Undo, seat: int | None) -> None:
    """Take back the last move or redeal still standing; undone steps are gone (there is no redo)."""
    s = b.state
    _player(s, seat)
    if not s.history:
        raise RuleViolation("nothing_to_undo", "There is no move or redeal to take back")
    step = s.history[-1]
    b.emit(ev.Undone(undoes=step.seq, step=step.kind, layout=step.layout))


def _resign(b: Batch, c: ev.Resign, seat: int | None) -> None:
    s = b.state
    _player(s, seat)
    _end(b, ev.GameLost(reason="resigned", runs=grid.runs(s.layout)))  # type: ignore[arg-type]


def _settle(b: Batch) -> None:
    """After a move or redeal: won when every row is complete. Nothing left to do but undo: stuck, the game goes on
    (``State.stuck``); under rules version 1, lost at once."""
    s = b.state
    board = s.layout
    assert board is not None
    if grid.won(board):
        _end(b, ev.GameWon(redeals_used=s.redeals_used))
    elif s.rules_version < STUCK_FROM and s.redeals_left <= 0 and not grid.legal_moves(board):
        _end(b, ev.GameLost(reason="no_moves", runs=grid.runs(board)))


def _close(b: Batch, c: Close, seat: int | None) -> None:
    """Nobody played for the service's idle time: lost, as a stuck game left for the configured time (RULES.md §2)."""
    _end(b, closing(b.state, status_of(b.state), c, seat, b.at))


def _end(b: Batch, event: msgspec.Struct) -> None:
    b.emit(event)
    b.emit(SeedRevealed(seed=b.state.seed.hex()))


_HANDLERS: dict[type, Callable[[Batch, Any, int | None], None]] = {
    Create: _create,
    TakeSeat: _take_seat,
    Close: _close,
    ev.Move: _move,
    ev.Redeal: _redeal,
    ev.Undo: _undo,
    ev.Resign: _resign,
}
