"""``python -m service bot-league``: who plays whom, the same table from the same command, ratings that follow the
results, and a clear error for a command line that cannot be played."""

from __future__ import annotations

import json

import pytest

from service.__main__ import main
from service.league.games import Outcome
from openskill.models import PlackettLuce

from service.league.ratings import games as rated_games, pairwise, rate, shares
from service.league.tables import plan, seatings, tables


def test_heads_up_tables_are_every_pair_and_a_solo_table_one_bot_against_the_rest():
    assert tables(["random", "greedy", "expert"], 2) == [("expert", "greedy"), ("expert", "random"), ("greedy", "random")]
    assert tables(["expert", "greedy"], 4, solo="expert") == [("expert", "greedy", "greedy", "greedy")]
    assert tables(["expert", "greedy"], 3) == [("expert", "expert", "greedy"), ("expert", "greedy", "greedy")]
    assert tables(["greedy", "solver"], 1) == [("greedy",), ("solver",)]


def test_a_tables_games_go_round_every_seating_on_the_same_deals():
    assert seatings(("expert", "greedy", "greedy")) == [
        ("expert", "greedy", "greedy"), ("greedy", "expert", "greedy"), ("greedy", "greedy", "expert")]
    tasks = plan("free-parking", ["expert", "greedy", "random"], 2, 4, b"\x01")
    by_table: dict = {}
    for t in tasks:
        by_table.setdefault(t.table, []).append(t)
    assert len(by_table) == 3 and all(len(ts) == 4 for ts in by_table.values())
    first = by_table[("expert", "greedy")]
    assert [t.seating for t in first] == [("expert", "greedy"), ("greedy", "expert")] * 2
    assert [t.seed for t in first] == [t.seed for t in by_table[("greedy", "random")]]  # every table meets the same deals


def _outcomes(results: list[tuple[tuple[str, ...], int | None]]) -> list[Outcome]:
    return [Outcome(tuple(sorted(seating)), seating, i, winner, 10) for i, (seating, winner) in enumerate(results)]


def test_ratings_follow_who_beat_whom():
    games = _outcomes([(("a", "b"), 0)] * 7 + [(("b", "a"), 0)] * 3)  # a wins 7 of 10
    wins = pairwise(games)
    assert wins == {("a", "b"): 7, ("b", "a"): 3}
    rated = rate(["a", "b"], games)
    assert rated["a"] > rated["b"]
    model = PlackettLuce()  # the service's model, game by game in the league's order
    a, b = model.rating(), model.rating()
    for seating, winner in [(("a", "b"), 0)] * 7 + [(("b", "a"), 0)] * 3:
        first, second = (a, b) if seating[winner] == "a" else (b, a)
        [[first], [second]] = model.rate([[first], [second]], ranks=[1, 2])
        a, b = (first, second) if seating[winner] == "a" else (second, first)
    assert rated == {"a": a.mu - 3 * a.sigma, "b": b.mu - 3 * b.sigma}


def test_a_bot_holding_several_seats_keeps_its_rating_and_a_game_ranks_by_its_order_of_finish():
    games = [Outcome(("x", "y", "y"), ("y", "x", "y"), 0, 1, 10, (3, 1, 2))]
    [game] = rated_games(games)
    assert [(p.rated_id, p.rank) for p in game.places] == [("y", 3), ("x", 1), ("y", 2)]
    rated = rate(["x", "y"], games)
    assert rated["y"] == 0.0 and rated["x"] > 0  # y held two seats: it played at its rating and kept it


def test_a_share_is_a_seats_and_a_solitaire_deal_compares_the_bots_that_played_it():
    games = _outcomes([(("x", "y", "y", "y"), 0), (("y", "x", "y", "y"), 0), (("y", "y", "x", "y"), 1)])
    got = {s.bot: (s.won, s.seats, s.share) for s in shares(games)}
    assert got == {"x": (1, 1, 1 / 3), "y": (2, 3, 2 / 9)}
    alone = [Outcome(("g",), ("g",), 0, 0, 5), Outcome(("s",), ("s",), 0, None, 5), Outcome(("g",), ("g",), 1, 0, 5),
             Outcome(("s",), ("s",), 1, 0, 5)]
    assert pairwise(alone) == {("g", "s"): 1}  # deal 1: both won, no comparison


LEAGUE = ["bot-league", "free-parking", "--games", "4", "--seats", "2", "--bots", "greedy,random", "--seed", "5"]


def test_the_printed_command_prints_the_same_table_with_any_number_of_jobs(capsys):
    assert main([*LEAGUE, "--jobs", "1", "--json"]) == 0
    once = json.loads(capsys.readouterr().out)
    assert main([*LEAGUE, "--jobs", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == once
    assert once["command"] == "python -m service bot-league free-parking --games 4 --seats 2 --bots greedy,random --seed 5"
    assert sum(row["won"] for row in once["shares"]) <= 4 and set(once["ratings"]) == {"greedy", "random"}


def test_the_table_comes_as_markdown_and_the_ratings_as_a_png(capsys, tmp_path):
    png = tmp_path / "ratings.png"
    assert main([*LEAGUE, "--jobs", "1", "--markdown", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| greedy ×1, random ×1 | greedy | 1 | 4 |" in out and "| bot | rating |" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_kind_has_its_league(capsys):
    assert main(["bot-league", "solitaire", "--games", "2", "--bots", "greedy,solver", "--nodes", "60", "--jobs", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["table"] for row in report["shares"]] == [["greedy"], ["solver"]]
    assert main(["bot-league", "monopoly", "--games", "2", "--bots", "random,strategic", "--max-rounds", "5", "--jobs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shares"][0]["table"] == ["random", "strategic"]


@pytest.mark.parametrize(("args", "message"), [
    (["free-parking", "--bots", "greedy,wizard"], "free-parking has no bot wizard: its bots are"),
    (["free-parking", "--bots", "greedy,greedy"], "names a bot twice"),
    (["free-parking", "--bots", "greedy"], "two bots at least"),
    (["free-parking", "--seats", "9", "--bots", "greedy,random"], "a free-parking table seats 2 to 8, not 9"),
    (["solitaire", "--seats", "2", "--bots", "greedy,solver"], "a solitaire table seats 1, not 2"),
    (["free-parking", "--bots", "greedy,random", "--solo", "expert"], "--solo expert is not one of --bots"),
    (["free-parking", "--bots", "greedy,random", "--games", "0"], "at least 1"),
    (["monopoly", "--bots", "random,strategic", "--mode", "tournament"], "--mode is the card game's"),
    (["free-parking", "--bots", "greedy,random", "--seed", "xyz"], "neither a decimal integer nor hex"),
])
def test_a_league_that_cannot_be_played_is_refused_in_one_sentence(capsys, args, message):
    assert main(["bot-league", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
