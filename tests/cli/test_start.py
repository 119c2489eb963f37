"""What a newcomer meets first: ``--help``, and the starts the operator must fix — a port in use, a data folder
another service holds, a keyring others may read or write — each refused in one line on stderr, exit status 2
(README, docs/operating.md "At start")."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from service.__main__ import main, parser
from service.cli import demo
from service.api.app import StartupRefused, receipts_for
from service.api.settings import Settings
from service.api.signing import KEYRING, keyring_at
from tests.servers import free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("serve", "demo", "play", "simulate", "solitaire-rates", "bot-league", "rebuild", "project", "keys", "archive",
            "golden")


def env() -> dict[str, str]:
    """This machine's environment without a store or settings of its own: the embedded store under ``--data``."""
    return {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}


def service(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "service", *args], cwd=ROOT, env=env(), text=True, **popen)


def refused(*args: str) -> str:
    """Run ``python -m service ARGS`` expecting a refused start: its one line of stderr."""
    done = subprocess.run([sys.executable, "-m", "service", *args], cwd=ROOT, env=env(), capture_output=True, text=True,
                          timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, done.stderr[-3000:])
    assert done.stdout == "", done.stdout[-3000:]  # refused before Sanic said a word
    return lines[0]


def test_the_top_level_help_lists_serves_options_and_every_command(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for option in ("--port", "--host", "--data", "--workers", "--keys"):
        assert f"  {option} " in text, option
    for command in COMMANDS:
        assert f"    {command} " in text, command


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_still_has_its_own_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m service {command} ")


def test_a_commands_option_that_begins_one_of_serves_is_its_own():
    """demo's ``--games`` begins serve's ``--games-burst``: serve's options beside the commands must not take it."""
    args = parser().parse_args(["demo", "--games", "1"])
    assert (args.func, args.games) == (demo.main, 1)
    assert parser().parse_args(["serve", "--po", "9001"]).port == 9001  # serve's own abbreviations still work


def test_a_port_in_use_is_refused_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = refused("--port", str(port), "--data", str(tmp_path / "data"))
    assert line.startswith("free-parking: not started: ") and f"127.0.0.1:{port} is in use" in line, line
    assert not (tmp_path / "data" / "journal.bin").exists()  # refused before the store was opened


@pytest.fixture
def first(tmp_path):
    """A service on ``tmp_path/data``, killed (SIGKILL) at the end if the test did not."""
    port = free_port()
    proc = service("--port", str(port), "--data", str(tmp_path / "data"), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        yield proc, port
    finally:
        proc.kill()
        proc.wait(30)


def test_a_second_service_on_one_data_folder_is_refused_naming_the_first(tmp_path, first):
    proc, port = first
    line = refused("--port", str(free_port()), "--data", str(tmp_path / "data"))
    assert line.startswith("free-parking: not started: ") and f"in use by process {proc.pid}" in line, line
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200  # the first one goes on


@pytest.fixture
def no_store_settings(monkeypatch):
    """This process's own commands (run in it, fast) on the embedded store, as ``env()`` gives the service's."""
    for name in [k for k in os.environ if k == "REDIS_URL" or k.startswith("FREE_PARKING_")]:
        monkeypatch.delenv(name)


@pytest.mark.parametrize("command", ["rebuild", "project", "archive", "compact"])
def test_the_commands_that_write_the_data_folder_are_refused_while_the_service_runs(tmp_path, first, no_store_settings,
                                                                                    command, capsys):
    proc, _ = first
    assert main([command, "--data", str(tmp_path / "data")]) == 2
    said = capsys.readouterr()
    assert f"in use by process {proc.pid}" in said.out + said.err, said


def test_keys_list_reads_the_folder_beside_the_running_service(tmp_path, first, no_store_settings, capsys):
    assert main(["keys", "list", "--json", "--keys", str(tmp_path / "data" / "keys")]) == 0
    assert len(json.loads(capsys.readouterr().out)["keys"]) == 1


def test_a_service_killed_dash_nine_leaves_a_lock_file_that_blocks_no_restart(tmp_path, first):
    proc, _ = first
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert (tmp_path / "data" / "lock").read_text().strip() == str(proc.pid)  # the file stays; its flock went
    port = free_port()
    again = service("--port", str(port), "--data", str(tmp_path / "data"), stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, again)
        assert (tmp_path / "data" / "lock").read_text().strip() == str(again.pid)
    finally:
        again.terminate()
        again.wait(30)


def test_a_keyring_others_may_write_is_refused_with_the_fix(tmp_path, no_store_settings):
    keys = tmp_path / "data" / "keys"
    keyring_at(keys, 0)  # made, 0600
    ring = keys / KEYRING
    ring.chmod(0o666)
    line = refused("--port", str(free_port()), "--data", str(tmp_path / "data"))
    assert line.startswith("free-parking: not started: ") and f"chmod 600 {ring}" in line, line
    assert ring.stat().st_mode & 0o777 == 0o666  # left as it was: the operator decides (and rotates, if it was read)


@pytest.mark.parametrize("mode", [0o620, 0o640, 0o604, 0o602])
def test_a_keyring_the_group_or_others_may_read_or_write_refuses_the_start(tmp_path, mode):
    settings = Settings(data_dir=tmp_path / "data")
    receipts_for(settings)
    ring = settings.keys_folder / KEYRING
    ring.chmod(mode)
    with pytest.raises(StartupRefused, match=f"chmod 600 {ring}"):
        receipts_for(settings)
    assert ring.stat().st_mode & 0o777 == mode


def test_port_zero_takes_a_free_port_and_the_start_line_names_it(tmp_path):
    log = tmp_path / "service.log"
    with log.open("w") as out:
        proc = service("--port", "0", "--data", str(tmp_path / "data"), stdout=subprocess.DEVNULL, stderr=out)
    try:
        deadline = time.monotonic() + 60  # a bound only to fail instead of hang
        while proc.poll() is None and "open http://" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        found = re.search(r"open http://127\.0\.0\.1:(\d+)/", log.read_text())
        assert found, log.read_text()[-2000:]
        port = int(found[1])
        assert port != 0 and httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    finally:
        proc.kill()
        proc.wait(30)


@pytest.mark.parametrize("flags, env, says", [
    (["--proxies-count", "-1"], {}, "--proxies-count: invalid count (0 or more) value: '-1'"),
    ([], {"FREE_PARKING_PROXIES_COUNT": "-2"}, "FREE_PARKING_PROXIES_COUNT: Expected `int` >= 0"),
    ([], {"FREE_PARKING_WORKERS": "two"}, "FREE_PARKING_WORKERS: Expected `int`, got `str`"),
], ids=["negative-proxies-flag", "negative-proxies-env", "workers-not-a-number"])
def test_a_setting_that_cannot_be_is_refused_in_one_line_naming_it(tmp_path, monkeypatch, capsys, flags, env, says):
    """Found: a negative --proxies-count (or FREE_PARKING_PROXIES_COUNT) passed every check and stopped Sanic's start
    with its traceback; a FREE_PARKING_ variable that was not a number was msgspec's traceback before any option was
    read. Expected: one line naming the flag or variable, exit status 2, nothing started."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        code = main(["serve", "--port", "0", "--data", str(tmp_path / "data"), *flags])
    except SystemExit as e:  # argparse's own refusal of a flag
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and says in err[-1], err
    assert not (tmp_path / "data").exists()
