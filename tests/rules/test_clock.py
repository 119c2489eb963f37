"""The turn clock's settings as shown (service/rules/clock.py): ``forfeit_after`` only with a clock, in every kind."""

from __future__ import annotations

from functools import partial

import pytest

from service.rules.clock import turn_clock
from service.rules.engine import GAMES


@pytest.mark.parametrize("kind", ["free-parking", "monopoly"])
def test_forfeit_after_is_shown_with_a_turn_clock_only(kind):
    config = partial(GAMES[kind].CONFIG, seats=2)
    assert turn_clock(config(turn_seconds=90, forfeit_after=2)) == (90, 2)
    assert turn_clock(config(turn_seconds=90)) == (90, config().forfeit_after)
    assert turn_clock(config(forfeit_after=2)) == (None, None)  # kept in the config, meaningless without a clock


def test_a_kind_without_a_clock_shows_none():
    assert turn_clock(GAMES["solitaire"].CONFIG(seats=1)) == (None, None)
