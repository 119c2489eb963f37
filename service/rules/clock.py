"""The turn clock's settings as a game's view, the lobby and the game-created line of the audit show them, alike in
every kind that has one (free-parking, Monopoly; solitaire has none): ``forfeit_after`` means nothing without
``turn_seconds``, so it is shown with a clock only — one rule, so none of them can disagree on it."""

from __future__ import annotations

from typing import Any


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
