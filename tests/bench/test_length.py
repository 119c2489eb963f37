"""Benchmark 3 compares the same command at both lengths: the mix of commands timed must not move the ratio."""

import math

import pytest

from bench.length import same_commands

DISCARD, END_TURN = ("Discard", 1), ("EndTurn", 3)


def test_a_mix_of_cheap_and_dear_commands_is_compared_kind_by_kind():
    # the same cost a kind at both lengths, met in other proportions: the medians of all would say 1.4×
    long = {DISCARD: [280e-6] * 50, END_TURN: [390e-6] * 50}
    short = {DISCARD: [280e-6] * 70, END_TURN: [390e-6] * 30}
    ratio, shown = same_commands(long, short)
    assert ratio == pytest.approx(1.0)
    assert "Discard (1 event) ×50" in shown and "EndTurn (3 events) ×30" in shown


def test_a_cost_that_grows_with_the_log_is_seen():
    long = {DISCARD: [560e-6] * 40, END_TURN: [390e-6] * 40}
    short = {DISCARD: [280e-6] * 40, END_TURN: [390e-6] * 40}
    ratio, _ = same_commands(long, short)
    assert ratio == pytest.approx(math.sqrt(2.0))


def test_a_kind_timed_on_one_side_only_is_left_out():
    ratio, shown = same_commands({DISCARD: [300e-6], ("EndTurn", 4): [900e-6]}, {DISCARD: [300e-6]})
    assert ratio == pytest.approx(1.0) and "EndTurn" not in shown


def test_no_kind_in_common_is_an_error_not_a_ratio():
    with pytest.raises(RuntimeError, match="no command of one kind"):
        same_commands({DISCARD: [1e-4]}, {END_TURN: [1e-4]})
