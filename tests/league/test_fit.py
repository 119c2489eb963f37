"""``python -m service.league.fit``: the expert's table judgement is fitted to who went on to win, and predicts it."""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace

from service.bots.value import FEATURES, WEIGHTS, chances
from service.league.fit import fit, log_loss, main, positions
from tests.rules.conftest import build_table


def test_fitted_weights_predict_the_winners_better_than_none():
    x, won = positions(24, b"\x09")
    assert x.shape[1:] == (4, len(FEATURES)) and (won.sum(axis=1) == 1).all()  # one winner a position
    w = fit(x, won, steps=400)
    assert log_loss(x, won, w) < log_loss(x, won, np.zeros_like(w))
    assert log_loss(x, won, np.array(WEIGHTS)) < log_loss(x, won, np.zeros_like(w))  # the shipped weights too


def test_the_same_games_fit_the_same_weights(capsys):
    assert main(["--games", "6", "--seed", "3"]) == 0
    first = capsys.readouterr().out
    assert main(["--games", "6", "--seed", "3"]) == 0
    assert capsys.readouterr().out == first and "WEIGHTS = (" in first


def test_more_points_down_is_a_better_chance_and_a_won_game_is_certain():
    t = build_table(2, points={0: ["P60-1", "P50-1", "P40-1"], 1: ["P10-1"]}, turn=1)
    ahead, behind = chances(t.state)
    assert ahead > behind and ahead + behind == 1.0
    assert chances(replace(t.state, phase="finished", winner=1)) == [0.0, 1.0]


def test_a_free_parking_or_a_talk_card_in_hand_is_worth_more_than_a_card_to_throw_away():
    """Fitted to evenly matched players, the judgement counts the cards that win errands and save points as gains
    (weights fitted to games with random bots at the table counted a Free Parking card a loss)."""
    other_hand = ["M20-2", "M20-3", "P30-2"]
    without = chances(build_table(2, hands={0: ["M20-4", "M20-1", "P30-1"], 1: other_hand}, turn=1).state)[0]
    for card in ("FP-1", "TW-1"):
        with_it = build_table(2, hands={0: [card, "M20-1", "P30-1"], 1: other_hand}, turn=1)
        assert chances(with_it.state)[0] > without, card
