"""``python -m service.league.duplicate``: events played in both formats, counted so the counts add up, and each event
replayed from (seed, index) alone. Tiny events of cheap bots (greedy against random, four entrants, tables of two):
the measurement itself is offline (docs/tournaments.md, "Duplicate deals, measured")."""

from __future__ import annotations

import json

import pytest

from service.league.duplicate import Finish, Line, main, mcnemar, play_event, plan, run, summarise
from service.sim import seeds

BASE = seeds.parse_base("7")
TINY = dict(players=4, experts=2, strong="greedy", weak="random", rounds=1, table_size=2)


def tiny(index: int):
    return plan(BASE, index, **TINY)


def test_two_tiny_events_add_up_and_each_replays_identically_from_its_seed():
    finishes = list(run([tiny(0), tiny(1)], "greedy", jobs=1))
    assert sorted((f.index, f.format) for f in finishes) == [(i, fmt) for i in (0, 1) for fmt in ("duplicate", "plain")]
    for f in finishes:
        assert sorted(line.player_id for line in f.standings) == ["p00", "p01", "p02", "p03"]
        assert sum(line.bot == "greedy" for line in f.standings) == 2 and f.first and f.first[0].rank == 1
    s = summarise(finishes)
    assert s.events == 2 and (s.players, s.experts, s.fair) == (4, 2, 0.5)
    for fmt in s.formats:
        assert fmt.events == 2 and fmt.strong_alone + fmt.weak_alone + fmt.mixed == 2 and fmt.mixed <= fmt.shared
        assert fmt.strong_alone <= fmt.credit <= fmt.strong_alone + fmt.mixed
        assert fmt.interval[0] <= fmt.share <= fmt.interval[1]
        assert 1 <= fmt.strong_rank <= 4
    p = s.paired
    assert p.only_duplicate + p.only_plain <= p.disagree <= 2
    assert p.difference == pytest.approx(s.formats[1].share - s.formats[0].share)

    again = play_event(tiny(1), "duplicate", "greedy")
    assert again == next(f for f in finishes if (f.index, f.format) == (1, "duplicate"))
    # the digest tells events and formats apart, so the replay above is a check that can fail
    assert len({f.digest for f in finishes}) == 4
    assert tiny(0).seed != tiny(1).seed and tiny(1) == plan(BASE, 1, **TINY)


def _finish(index: int, fmt: str, bots_ranks: list[tuple[str, int]]) -> Finish:
    lines = tuple(Line(f"p{n}", bot, rank, 0.0, 0) for n, (bot, rank) in enumerate(bots_ranks))
    return Finish(index, fmt, "expert", lines, f"{index}{fmt}")


def test_a_shared_first_counts_a_fraction_and_the_formats_are_compared_event_by_event():
    e, g = "expert", "greedy"
    finishes = [
        _finish(0, "plain", [(e, 1), (g, 2), (e, 3), (g, 4)]), _finish(0, "duplicate", [(e, 1), (g, 2), (e, 3), (g, 4)]),
        _finish(1, "plain", [(g, 1), (e, 2), (e, 3), (g, 4)]), _finish(1, "duplicate", [(e, 1), (g, 1), (e, 3), (g, 4)]),
        _finish(2, "plain", [(g, 1), (e, 2), (g, 3), (e, 4)]), _finish(2, "duplicate", [(e, 1), (e, 1), (g, 3), (g, 4)]),
        _finish(3, "plain", [(g, 1), (e, 2), (g, 3), (e, 4)]),  # its duplicate never finished: it does not count
    ]
    s = summarise(finishes)
    plain, dup = s.formats
    assert (plain.events, plain.strong_alone, plain.weak_alone, plain.shared, plain.mixed, plain.credit) == (3, 1, 2, 0, 0, 1)
    assert (dup.events, dup.strong_alone, dup.weak_alone, dup.shared, dup.mixed, dup.credit) == (3, 2, 0, 2, 1, 2.5)
    assert plain.strong_rank == pytest.approx((2 + 2.5 + 3) / 3) and dup.strong_rank == pytest.approx((2 + 2 + 1) / 3)
    assert s.paired.disagree == 2 and (s.paired.only_duplicate, s.paired.only_plain) == (1, 0)
    assert s.paired.difference == pytest.approx((0 + 0.5 + 1) / 3)
    assert mcnemar(0, 6) == pytest.approx(2 / 64) and mcnemar(3, 3) == 1.0 and mcnemar(0, 0) == 1.0


def test_the_command_prints_the_tables_and_a_command_that_replays_its_events(tmp_path, capsys):
    out = tmp_path / "run.json"
    args = ["--events", "2", "--players", "4", "--experts", "2", "--rounds", "1", "--table-size", "2", "--strong",
            "greedy", "--weak", "random", "--seed", "7", "--jobs", "1", "--markdown", "--json", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "| plain | 2 |" in printed and "| duplicate | 2 |" in printed
    record = json.loads(out.read_text())
    assert record["command"].startswith("python -m service.league.duplicate --events 2 --players 4")
    assert [(e["index"], e["format"]) for e in record["events"]] == [(0, "plain"), (0, "duplicate"), (1, "plain"),
                                                                      (1, "duplicate")]
    assert main([*args[:1], "1", *args[2:-2], "--first", "1", "--json", str(tmp_path / "one.json")]) == 0
    one = json.loads((tmp_path / "one.json").read_text())["events"]
    assert [e["digest"] for e in one] == [e["digest"] for e in record["events"][2:]]
    assert main(["--events", "1", "--experts", "0"]) == 2 and "1 to 7" in capsys.readouterr().err
