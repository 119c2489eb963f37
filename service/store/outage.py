"""An outage of the store said once: a line when it starts and one when it ends, not a line (or a traceback) for
every retry while Redis is away."""

from __future__ import annotations

import logging
import time


class Outage:
    """What ``what`` (the runner, a projector, the requests of a worker) has seen of the store lately."""

    def __init__(self, log: logging.Logger, what: str) -> None:
        self.log, self.what = log, what
        self.since: float | None = None
        self.failures = 0

    def failed(self, error: BaseException) -> None:
        self.failures += 1
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning("%s: the store cannot be reached (%s); retrying, quietly until it is back", self.what, error)

    def ok(self) -> None:
        if self.since is not None:
            self.log.warning("%s: the store is back after %.1f s (%d failures meanwhile)", self.what,
                             time.monotonic() - self.since, self.failures)
            self.since, self.failures = None, 0
