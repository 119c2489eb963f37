"""``python -m service simulate monopoly``: where turns end, as a table, as JSON and as a chart."""

from __future__ import annotations

import json

import pytest

from service.__main__ import main
from service.events import monopoly as ev
from service.sim.monopoly import IN_JAIL, Spec, Track, plan, play_game

SMALL = ["simulate", "monopoly", "--games", "3", "--rounds", "15", "--seed", "7", "--workers", "1"]


def run_json(capsys, *extra: str) -> dict:
    assert main([*SMALL, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_table_has_a_row_for_every_square_and_two_for_the_jail(capsys):
    assert main(SMALL) == 0
    out = capsys.readouterr().out
    for name in ("GO", "Just Visiting", "In Jail", "Go To Jail", "Boardwalk", "Free Parking"):
        assert f" {name} " in out
    assert "Jail / Just Visiting" not in out
    assert "--seed 7 counts the same turns again" in out


def test_the_json_lists_41_rows_in_board_order_and_the_counts_sum_to_the_turns(capsys):
    got = run_json(capsys)
    rows = got["rows"]
    assert [r["square"] for r in rows] == [*range(11), 10, *range(11, 40)]
    assert [(r["name"], r["in_jail"]) for r in rows[10:12]] == [("Just Visiting", False), ("In Jail", True)]
    assert set(rows[0]) == {"square", "in_jail", "name", "count", "percent"}
    assert got["games"] == 3 and got["turns"] > 0
    assert sum(r["count"] for r in rows) == got["turns"]
    assert sum(r["percent"] for r in rows) == pytest.approx(100)
    assert got["options"] == {
        "games": 3,
        "seats": "4",
        "rounds": 15,
        "max_commands": 200_000,
        "jail": "leave",
        "bots": ["strategic"],
        "seed": "7",
    }


def test_no_turn_ends_on_go_to_jail(capsys):
    """Landing there sends the player to jail, so the turn ends In Jail."""
    rows = run_json(capsys)["rows"]
    assert next(r for r in rows if r["square"] == 30)["count"] == 0


def test_the_same_seed_counts_the_same_turns_with_any_number_of_workers(capsys):
    one = run_json(capsys)
    two = run_json(capsys, "--workers", "2")
    assert one == two


def test_staying_in_jail_ends_more_turns_there_than_leaving_at_once(capsys):
    """With ``stay`` a failed roll for doubles ends the turn in jail; with ``leave`` only the turn that sent
    the player there does."""
    args = ["--games", "6", "--rounds", "30", "--seed", "11"]
    leave = run_json(capsys, *args, "--jail", "leave")
    stay = run_json(capsys, *args, "--jail", "stay")

    def jailed(got: dict) -> float:
        return next(r["percent"] for r in got["rows"] if r["in_jail"])

    assert jailed(stay) > 1.5 * jailed(leave) > 0


def test_the_chart_is_written_as_a_png(tmp_path, capsys):
    path = tmp_path / "figures" / "squares.png"
    assert main([*SMALL, "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"chart written to {path}" in capsys.readouterr().out


def test_bad_options_are_refused(capsys):
    assert main([*SMALL, "--seats", "9"]) == 2
    assert "2 to 8 seats" in capsys.readouterr().out
    assert main([*SMALL, "--bots", "clever"]) == 2
    assert "unknown bot clever" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*SMALL, "--jail", "sometimes"])


def test_how_the_games_ended_is_reported_with_their_median_length(capsys):
    got = run_json(capsys)
    [ended] = got["endings"]
    assert ended["end"] in ("last_player", "max_rounds") and ended["games"] == 3 and ended["percent"] == 100
    assert 0 < ended["median_rounds"] <= 15 and ended["median_turns"] <= ended["median_commands"]
    assert main(SMALL) == 0
    assert "How the games ended: 3 games, 4 seats, at most 15 rounds" in capsys.readouterr().out


def test_uncapped_games_play_on_until_one_player_is_left_or_are_cut_at_max_commands(capsys):
    got = run_json(capsys, "--uncapped", "--max-commands", "150", "--games", "2")
    assert got["options"]["rounds"] is None and got["options"]["max_commands"] == 150
    [cut] = got["endings"]
    assert (cut["end"], cut["games"], cut["percent"], cut["median_commands"]) == ("cut", 2, 100, 150)
    assert main([*SMALL, "--uncapped", "--max-commands", "150", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "uncapped, 150 commands at most" in out and "| cut, still going (`cut`) | 3 | 100.0% | 150 |" in out


def test_a_turn_is_counted_where_it_ends():
    """Square 10 is In Jail only while the player is in jail; the last move before ``turn_ended`` counts."""
    track = Track(2)
    assert track.row_after(ev.Moved(seat=0, from_=0, to=10)) is None
    assert track.row_after(ev.TurnEnded(seat=0)) == 10
    track.row_after(ev.SentToJail(seat=1, why="square"))
    assert track.row_after(ev.TurnEnded(seat=1)) == IN_JAIL
    track.row_after(ev.LeftJail(seat=1, how="fine"))
    track.row_after(ev.Moved(seat=1, from_=10, to=17))
    assert track.row_after(ev.TurnEnded(seat=1)) == 17


def test_every_game_counts_each_turn_once():
    spec: Spec = plan(1, (3, 3), ("strategic", "random"), "stay", 10, b"seed")[0]
    tally = play_game(spec)
    assert tally.games == 1 and 0 < tally.turns <= 3 * 10
    assert sum(tally.ends) == tally.turns


def test_export_without_bots_named_seats_strategic_bots_and_the_logs_verify(tmp_path, capsys):
    from replays.verify import verify
    from service.events.export import load

    assert main(["simulate", "monopoly", "--games", "1", "--seats", "2", "--export", str(tmp_path)]) == 0
    [log] = sorted(tmp_path.glob("*.ndjson"))
    header, envelopes = load(log.read_bytes())
    assert header.kind == "monopoly" and b"strategic" in log.read_bytes()
    assert verify(header, envelopes).ok
