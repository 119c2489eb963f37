"""The turn clock, alike in every kind that has one (free-parking, Monopoly; solitaire has none): its settings as a
game's view, the lobby and the game-created line of the audit show them (``forfeit_after`` means nothing without
``turn_seconds``, so it is shown with a clock only — one rule, so none of them can disagree on it), and how it stops
while the game waits on someone else (``hold``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.common import TurnClockRestarted, TurnClockStopped

from .batch import Batch

CLOCK_HOLDS = 3
"""The rules version (of the card game and of Monopoly) from which a turn's clock stops while the game waits on
another seat, so that a wait the seat on turn cannot end costs it none of its turn (issue 31: colluders answering
slowly, or not at all, ran a third player's clock out). Older versions let the clock run on: their games replay so."""


def turn_clock(config: Any) -> tuple[int | None, int | None]:
    """``(turn_seconds, forfeit_after)`` of a game's config: both None without a clock (or in a kind without one)."""
    turn_seconds = getattr(config, "turn_seconds", None)
    return turn_seconds, getattr(config, "forfeit_after", None) if turn_seconds else None


def clock_words(config: Any) -> str | None:
    """The turn clock as the game-created line of the audit and the move log names it; None without one."""
    turn_seconds, forfeit_after = turn_clock(config)
    if turn_seconds is None:
        return None
    forfeits = "1 missed turn forfeits" if forfeit_after == 1 else f"{forfeit_after} missed turns in a row forfeit"
    return f"a {turn_seconds}s turn clock ({forfeits})"


def hold(b: Batch[Any], in_turn: bool, waits_on_others: bool) -> None:
    """Stop or restart the turn clock at the end of a decision, as the table it leaves asks.

    ``in_turn``: a turn is in play whose clock could run (its seat has not been timed out); ``waits_on_others``: the
    game now waits on someone the seat on turn cannot answer for, so the seat cannot make its turn's move. The clock
    stops with the time left recorded (``turn_clock_stopped``) and restarts, once the wait is over, with that time
    counted from the decision that ended it (``turn_clock_restarted``): both times come from ``b.at``, so the log
    alone says when the turn runs out. A turn that ends meanwhile needs no restart: the next one has its own clock.
    """
    s = b.state
    if not in_turn:
        return
    if waits_on_others and s.turn_deadline_at is not None:
        b.emit(TurnClockStopped(seat=s.turn_seat, left_ms=max(0, s.turn_deadline_at - b.at)))
    elif not waits_on_others and s.turn_left_ms is not None:
        b.emit(TurnClockRestarted(seat=s.turn_seat, deadline_at=b.at + s.turn_left_ms))


def clock_held(s: Any, e: TurnClockStopped | TurnClockRestarted) -> Any:
    """The fold of a stop or a restart, alike in both kinds: while stopped, no deadline and the time left."""
    if isinstance(e, TurnClockStopped):
        return msgspec.structs.replace(s, turn_deadline_at=None, turn_left_ms=e.left_ms)
    return msgspec.structs.replace(s, turn_deadline_at=e.deadline_at, turn_left_ms=None)


def stopped_words(e: TurnClockStopped, who: str) -> str:
    return f"{who}'s turn clock stops while the game waits on another player ({_seconds(e.left_ms)} left)"


def restarted_words(e: TurnClockRestarted, who: str) -> str:
    return f"{who}'s turn clock runs again: the wait cost none of the turn"


def _seconds(ms: int) -> str:
    return f"{ms // 1000} s" if ms % 1000 == 0 else f"{ms / 1000:.1f} s"
