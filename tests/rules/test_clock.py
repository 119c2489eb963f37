"""The turn clock's settings as shown (service/rules/clock.py): ``forfeit_after`` only with a clock, in every kind."""

from __future__ import annotations

from functools import partial

import pytest

from service.events import free_parking as fp_events
from service.events import monopoly as mono_events
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


@pytest.mark.parametrize("kind", ["free-parking", "monopoly"])
def test_the_game_created_line_names_the_turn_clock_and_its_forfeit(kind):
    rules, events = GAMES[kind], {"free-parking": fp_events, "monopoly": mono_events}[kind]

    def line(**options):
        config = rules.CONFIG(seats=2, **options)
        return rules.summary(events.GameCreated(kind=kind, config=config, seed_commitment="ab" * 32, rules_version=1, rng="x"))

    assert "turn clock" not in line() and "forfeit" not in line(forfeit_after=2)
    assert "s to answer, a 90s turn clock (3 missed turns in a row forfeit), seed commitment abab" in line(turn_seconds=90)
    assert "a 600s turn clock (1 missed turn forfeits)" in line(turn_seconds=600, forfeit_after=1)
