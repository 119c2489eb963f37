"""The command lines: ``python -m replays verify`` (exit codes, one line per log) and ``python -m service``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replays.__main__ import main as replays_main
from service.__main__ import main as service_main
from service.sim import seeds
from service.cli.simulate import plan, seat_counts, seats_of
from service.events.export import dumps

from .forge import export_of, index_of, replace, with_public

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logs(finished_game, tmp_path_factory):
    """A folder with the finished game, a copy of it under another name, and a tampered one."""
    folder = tmp_path_factory.mktemp("logs")
    header, envelopes = export_of(finished_game)
    i = index_of(envelopes, "errand_run")
    tampered = envelopes[:i] + [with_public(envelopes[i], value=200)] + envelopes[i + 1 :]
    (folder / "a-good.ndjson").write_bytes(dumps(header, envelopes))
    (folder / "b-good.ndjson").write_bytes(dumps(header, envelopes))
    (folder / "c-tampered.ndjson").write_bytes(dumps(header, tampered))
    return folder, header, i + 1


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_a_good_log_exits_0_with_one_ok_line(logs, capsys):
    folder, header, _ = logs
    assert replays_main(["verify", str(folder / "a-good.ndjson")]) == 0
    [line] = _lines(capsys)
    assert line.startswith(f"OK finished-game: {header.version} events, head {header.head[:12]}; every command re-decided")


def test_a_tampered_log_exits_1_naming_the_seq(logs, capsys):
    folder, _, seq = logs
    assert replays_main(["verify", str(folder / "c-tampered.ndjson")]) == 1
    [line] = _lines(capsys)
    assert line.startswith(f"REJECTED finished-game: seq {seq}: hash")


def test_a_folder_gets_one_line_per_log_and_a_total(logs, capsys):
    folder, _, seq = logs
    assert replays_main(["verify", str(folder)]) == 1
    lines = _lines(capsys)
    assert len(lines) == 4
    assert lines[0].startswith("OK ") and lines[0].endswith(f"({folder / 'a-good.ndjson'})")
    assert lines[2].startswith(f"REJECTED finished-game: seq {seq}: ") and "c-tampered.ndjson" in lines[2]
    assert lines[3] == "2 of 3 logs verified, 1 rejected"


def test_quiet_prints_only_rejections_and_the_total(logs, capsys):
    folder, _, _ = logs
    assert replays_main(["verify", "-q", str(folder)]) == 1
    lines = _lines(capsys)
    assert [line.split(":")[0] for line in lines] == ["REJECTED finished-game", "2 of 3 logs verified, 1 rejected"]


def test_the_commitment_option(logs, capsys):
    folder, header, _ = logs
    good = str(folder / "a-good.ndjson")
    assert replays_main(["verify", good, "--commitment", header.seed_commitment]) == 0
    assert replays_main(["verify", good, "--commitment", "0" * 64]) == 1
    lines = _lines(capsys)
    assert lines[0].startswith("OK ")
    assert lines[1] == (
        f"REJECTED finished-game: header: seed commitment: expected {'0' * 64} (the one you were shown), "
        f"found {header.seed_commitment}"
    )


def test_a_file_that_is_not_an_export_is_rejected(tmp_path, capsys):
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"not": "a header"}\n')
    assert replays_main(["verify", str(bad), str(tmp_path / "missing.ndjson")]) == 1
    lines = _lines(capsys)
    assert lines[0].startswith(f"REJECTED {bad}: line 1: not an export header")
    assert lines[1].startswith(f"REJECTED {tmp_path / 'missing.ndjson'}: ")
    assert lines[2] == "0 of 2 logs verified, 2 rejected"


def test_an_empty_folder_exits_2(tmp_path, capsys):
    assert replays_main(["verify", str(tmp_path)]) == 2
    assert _lines(capsys) == ["no logs found"]


def test_a_rejection_with_brackets_prints_verbatim(finished_game, tmp_path, capsys):
    """Rich must not read ``[…]`` in a divergence as markup."""
    header, envelopes = export_of(finished_game)
    path = tmp_path / "x.ndjson"
    path.write_bytes(dumps(replace(header, game_id="[bold]x[/bold]"), envelopes))
    assert replays_main(["verify", str(path)]) == 1
    assert "[bold]x[/bold]" in capsys.readouterr().out


# --- python -m service ----------------------------------------------------------------------------------


def test_simulate_exports_games_that_replays_verify_accepts(tmp_path):
    """End to end, as a user would: two processes, nothing shared but the folder."""
    out = tmp_path / "sims"
    simulate = [sys.executable, "-m", "service", "simulate", "free-parking", "--games", "4", "--seats", "2-3"]
    simulate += ["--bots", "greedy,random", "--seed", "7", "--jobs", "2", "--export", str(out)]
    run = subprocess.run(simulate, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(f"sim-{2 + i % 2}-{i:04d}.ndjson" for i in range(4))
    assert "games" in run.stdout and "events/s" in run.stdout and "wins per seat" in run.stdout
    verify = subprocess.run([sys.executable, "-m", "replays", "verify", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.splitlines()[-1] == "4 of 4 logs verified"


def test_the_same_seed_writes_the_same_games_with_any_number_of_jobs(tmp_path, capsys):
    args = ["simulate", "free-parking", "--games", "3", "--seats", "4", "--seed", "0x2a", "--timeouts", "0.3"]
    assert service_main([*args, "--jobs", "1", "--export", str(tmp_path / "a")]) == 0
    assert service_main([*args, "--jobs", "2", "--export", str(tmp_path / "b")]) == 0
    a, b = sorted((tmp_path / "a").iterdir()), sorted((tmp_path / "b").iterdir())
    assert [p.name for p in a] == [p.name for p in b] and len(a) == 3
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b, strict=True))
    assert "--seed 0x2a writes the same games again" in capsys.readouterr().out


def test_a_seat_range_cycles_through_every_count():
    specs = plan("free-parking", 8, seat_counts("2-5"), ("greedy", "random"), b"base")
    assert [s.seats for s in specs] == [2, 3, 4, 5, 2, 3, 4, 5]
    assert specs[2].bots == ("greedy", "random", "greedy", "random")
    assert len({s.seed for s in specs}) == 8 and specs[0].seed == seeds.game_seed(b"base", 0)
    with pytest.raises(Exception, match="seats go low to high"):
        seat_counts("5-2")
    with pytest.raises(ValueError, match="a free-parking game has 2 to 8 seats, not 9"):
        seats_of("free-parking", 9)


def test_each_kind_gets_the_seats_it_allows():
    assert seats_of("free-parking", None) == 4 and seats_of("solitaire", None) == 1
    with pytest.raises(ValueError, match="a solitaire game has 1 seat"):
        seats_of("solitaire", 2)


def test_simulate_and_play_run_a_solitaire(tmp_path, capsys):
    assert service_main(["simulate", "solitaire", "--games", "3", "--seed", "9", "--jobs", "1", "--export", str(tmp_path)]) == 0
    assert len(list(tmp_path.iterdir())) == 3
    assert service_main(["play", "--kind", "solitaire", "--seed", "9"]) == 0
    assert "every command re-decided" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "base"), [("42", (42).to_bytes(32, "big")), ("0x2a", b"\x2a"), ("abc", b"\x0a\xbc")])
def test_a_base_seed_is_decimal_or_hex(text, base):
    assert seeds.parse_base(text) == base
    with pytest.raises(ValueError, match="neither a decimal integer nor hex"):
        seeds.parse_base("xyz")


def test_play_prints_one_audited_game_and_its_verdict(capsys):
    assert service_main(["play", "--seed", "3", "--seats", "2"]) == 0
    out = capsys.readouterr().out
    assert "game created: 2 seats" in out and "[hands 0: " in out  # the audit, every secret spelled out
    assert "final scores" in out and "winner: seat " in out
    assert "OK play-" in out and "every command re-decided" in out
    assert "play this game again with --seed 3" in out


def test_an_unknown_bot_is_refused(tmp_path, capsys):
    assert service_main(["simulate", "free-parking", "--games", "1", "--bots", "clever", "--export", str(tmp_path)]) == 2
    assert "unknown bot clever; known: " in capsys.readouterr().out


def test_an_error_answer_saved_as_the_export_says_what_the_service_said_and_exits_2(tmp_path, capsys):
    """``curl -o game.ndjson`` of an export before the game ended saves the 403 body: verify reads it out (the
    service's error, its code and message) instead of calling it a bad header."""
    body = tmp_path / "game.ndjson"
    body.write_text('{"error":{"code":"forbidden","message":"The full log is published when the game is over (or to '
                    'the admin)","detail":{"request_id":"56d528307e808930"}}}')
    assert replays_main(["verify", str(body)]) == 2
    (line,) = _lines(capsys)
    assert line.startswith(f"NOT AN EXPORT {body}: this is the service's error answer, not an exported log")
    assert "forbidden: The full log is published when the game is over (or to the admin)" in line


def test_an_error_answer_beside_a_good_log_exits_2_and_a_rejected_one_still_exits_1(logs, tmp_path, capsys):
    folder, _, _ = logs
    body = tmp_path / "error.ndjson"
    body.write_text('{"error": {"code": "not_found", "message": "No such game", "detail": {}}}\n')
    assert replays_main(["verify", str(folder / "a-good.ndjson"), str(body)]) == 2
    assert _lines(capsys)[-1] == "1 of 2 logs verified"
    assert replays_main(["verify", str(folder / "c-tampered.ndjson"), str(body)]) == 1
    assert _lines(capsys)[-1] == "0 of 2 logs verified, 1 rejected"
