"""A decision in the making: the events so far and the table they leave, folded one by one."""

from __future__ import annotations

import msgspec

from ..errors import RuleViolation
from .evolve import evolve
from .state import State


class Batch:
    def __init__(self, state: State, at: int) -> None:
        self.state = state
        self.at = at
        self.events: list[msgspec.Struct] = []

    def emit(self, event: msgspec.Struct) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)

    @property
    def seq(self) -> int:
        """The seq the next event will have."""
        return self.state.version + 1

    @property
    def deadline(self) -> int:
        """When a wait opened now ends: ``response_seconds`` from this decision."""
        return self.at + self.state.config.response_seconds * 1000


def refuse(code: str, message: str, **detail: object) -> RuleViolation:
    return RuleViolation(code, message, **detail)
