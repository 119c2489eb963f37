"""A decision in the making, for any kind: the events so far and the table they leave, folded one by one, so
that each rule reads the state the decision's own earlier events made."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec

S = TypeVar("S")


class Batch(Generic[S]):
    evolve: Callable[[Any, msgspec.Struct], Any]
    """The kind's fold, set by each kind's subclass."""

    def __init__(self, state: S, at: int) -> None:
        self.state = state
        self.at = at
        self.events: list[msgspec.Struct] = []

    def emit(self, event: msgspec.Struct) -> None:
        self.events.append(event)
        self.state = type(self).evolve(self.state, event)

    @property
    def deadline(self) -> int:
        """When a wait opened now ends: the game's ``response_seconds`` from this decision."""
        return self.at + self.state.config.response_seconds * 1000  # type: ignore[attr-defined]

    @property
    def turn_deadline(self) -> int | None:
        """When a turn that starts now runs out: the game's ``turn_seconds`` from this decision; none without a clock."""
        seconds = getattr(self.state.config, "turn_seconds", None)  # type: ignore[attr-defined]
        return self.at + seconds * 1000 if seconds else None
