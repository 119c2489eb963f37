"""The server's ``close``, alike in every kind: a game nobody joined or moved on for the service's idle time ends with
no winner, in one ``game_closed`` event, and its seed is revealed as at any end.

Each kind's ``decide`` asks ``closing`` for the event (every check is here), and its ``evolve`` records ``closed_of``
it in the state, which its view shows. That the command's ``since`` is the time of the event that last moved the game
on (``State.progress``: each kind says which events do) is checked where the events' times are known:
``engine.Game.decide``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from service.events.common import Close, GameClosed

from .errors import RuleViolation


PROGRESS_CLOSES = 3
"""The rules version (of the card game and of Monopoly) from which the idle close counts from the game's last
*progress* — a turn, a roll, a main play — rather than from its last event of any kind: a seat offering and withdrawing
a trade before each idle close held a Monopoly table for ever (issue 31). Each kind's ``progress`` module says which
events move it on; a solitaire, with one seat and no one else's table to hold, counts every move as before."""


class Closed(msgspec.Struct, frozen=True, kw_only=True):
    """Why a game ended without a winner, as its state and view say it."""

    reason: Literal["idle"]
    idle_ms: int


def closing(state: Any, status: str, c: Close, seat: int | None, at: int) -> GameClosed:
    """The ``game_closed`` event ``c`` yields at ``at`` on a game of ``status``, or the rule it breaks."""
    if seat is not None:
        raise RuleViolation("server_only", "Only the server may send this command")
    if state.phase == "new":
        raise RuleViolation("game_not_started", "This game has not been created yet")
    if status == "finished":
        raise RuleViolation("game_over", "The game is over")
    if c.idle_ms < 1:
        raise RuleViolation("invalid_close", "A close names how long nobody moved: idle_ms of at least 1")
    if at < c.since + c.idle_ms:
        raise RuleViolation("not_idle", f"The game has not been idle for {duration(c.idle_ms)} yet", idle_until=c.since + c.idle_ms)
    return GameClosed(reason="idle", idle_ms=c.idle_ms)


def closed_of(e: GameClosed) -> Closed:
    return Closed(reason=e.reason, idle_ms=e.idle_ms)


def summary(e: GameClosed) -> str:
    """The audit line's words, the same in every kind."""
    return f"closed: nobody moved for {duration(e.idle_ms)}"


def duration(ms: int) -> str:
    """``ms`` in the largest unit that states it exactly (``24 h``, ``90 min``, ``1500 ms``)."""
    for unit, size in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"
