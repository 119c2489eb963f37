"""How deep the long randomised runs go: ``make test`` runs them at a depth that still catches each class of bug in a
few seconds; ``make soak`` (``FREE_PARKING_SOAK=1``) runs them at the counts that give a release its confidence.

Each count is named, so one can be turned up alone (``FREE_PARKING_PROPERTY_GAMES=2000 make test ARGS=…``); the
docs/testing.md ("The budget") lists every count with both of its values. The rule for the next test: ``make test``
stays within eight minutes here — a test that needs many games takes its count from here, with a ``make test`` value
that still reaches every corner it asserts on.
"""

from __future__ import annotations

import os

SOAK = os.environ.get("FREE_PARKING_SOAK", "") not in ("", "0")
"""Whether this is ``make soak``."""


def count(name: str, quick: int, soak: int) -> int:
    """``name``'s value from the environment if set, else ``soak`` under ``make soak``, else ``quick``."""
    value = os.environ.get(name)
    if value:
        return int(value)
    return soak if SOAK else quick
