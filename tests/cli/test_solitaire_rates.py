"""``python -m service solitaire-rates``: a handful of deals, the same table every time."""

from __future__ import annotations

import pytest

from service.__main__ import main
from service.sim import seeds
from service.cli.solitaire_rates import Task, markdown, rates, try_deal
from service.sim.intervals import wilson

ARGS = ["solitaire-rates", "--deals", "4", "--budget", "400", "--bot-budget", "100", "--jobs", "1", "--markdown"]


def test_the_rates_command_prints_the_three_rows(capsys):
    assert main(ARGS) == 0
    out = capsys.readouterr().out
    for who in ("greedy bot", "solver bot, no seed", "solver with the seed"):
        assert out.count(who) == 2  # the rich table and the Markdown one
    assert "| greedy bot | " in out and "/ 4 |" in out


def test_the_same_deals_give_the_same_table():
    tasks = [Task(i, seeds.game_seed(seeds.parse_base("7"), i), 300, 80) for i in range(3)]
    first = [try_deal(t) for t in tasks]
    assert first == [try_deal(t) for t in tasks]
    assert markdown(rates(first, 300, 80)) == markdown(rates([try_deal(t) for t in tasks], 300, 80))


def test_bad_counts_are_refused(capsys):
    assert main(["solitaire-rates", "--deals", "0"]) == 2
    assert "at least 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    "won, n, low, high",
    [(0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (50, 100, 0.4038, 0.5962)],
)
def test_the_interval_is_wilsons(won, n, low, high):
    got = wilson(won, n)
    assert got == pytest.approx((low, high), abs=1e-4)
