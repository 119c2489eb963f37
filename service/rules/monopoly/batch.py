"""A decision in the making: the events so far and the table they leave, folded one by one."""

from __future__ import annotations

from .. import batch
from .evolve import evolve
from .state import State


class Batch(batch.Batch[State]):
    evolve = staticmethod(evolve)

    @property
    def seq(self) -> int:
        """The seq the next event will have."""
        return self.state.version + 1
