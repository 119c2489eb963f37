"""The README's "A worked example with curl", run as written: its ```sh blocks, taken from the README's text at test
time, pasted into one bash against a fresh service — so the test fails the day the text stops working.

Only the base URL is changed: the text's ``B=http://127.0.0.1:8000`` becomes this service's free port. Around the
text, not in it: ``set -e -o pipefail`` before it (any command that fails fails the test), bash runs in a folder of the test's own holding ``.venv`` (a link to this interpreter's environment,
as a clone's ``make run`` makes one) with this checkout on ``PYTHONPATH``, and the service's bots do not wait before
their moves (``human_pace_ms=0``: the text's loop waits for Ann's turn whatever the pace, only sooner). On the embedded
store: the text plays over HTTP only, which every store serves the same (``test_play_over_http.py`` covers them all).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A worked example with curl"
BASE = "B=http://127.0.0.1:8000"


def walkthrough_blocks(readme: str) -> list[str]:
    """The ```sh blocks of the README's curl section, in order (the section ends at the next ``## `` heading)."""
    start = readme.index(SECTION) + len(SECTION)
    end = readme.find("\n## ", start)
    section = readme[start : end if end != -1 else None]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.S | re.M)


def test_the_section_has_the_blocks_the_test_runs():
    blocks = walkthrough_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 2, "the curl walk-through lost its ```sh blocks"
    assert blocks[0].count(BASE) == 1, f"the walk-through no longer starts with {BASE!r}: the test substitutes only that"
    assert "replays verify" in blocks[-1]


@pytest.mark.parametrize("live_kind", ["embedded"])
@pytest.mark.live_settings(human_pace_ms=0)
async def test_the_curl_walkthrough_runs_verbatim_to_a_verified_finished_game(live, tmp_path):
    script = "set -e -o pipefail\n" + "\n".join(walkthrough_blocks((ROOT / "README.md").read_text()))
    script = script.replace(BASE, f"B={str(live.base_url).rstrip('/')}", 1)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        shutil.which("bash") or "/bin/bash", "-c", script, cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=600)  # a bound to fail, not to hang
    except TimeoutError:
        proc.kill()
        pytest.fail("the walk-through did not end")
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-4000:]
    lines = text.strip().splitlines()
    assert lines[-1].startswith("OK g_"), text[-4000:]
    assert "receipts agree" in lines[-1] and "seat 0 brought client seed" in lines[-1], lines[-1]

    game_id = json.loads((tmp_path / "game.json").read_text())["game_id"]
    r = await live.get(f"/games/{game_id}")
    assert r.json()["status"] == "finished"
    assert "finished" in lines, "the loop's last line prints the game's status"
    kept = (tmp_path / "ann-receipts.json").read_text().splitlines()
    assert kept and all(json.loads(line)["game_id"] == game_id for line in kept)
    assert (tmp_path / "game.ndjson").read_text().startswith('{"'), "the export saved is a log"
    assert not json.loads((tmp_path / "game.ndjson").read_text().splitlines()[0]).get("error")
    log = [json.loads(line) for line in (tmp_path / "game.ndjson").read_text().splitlines()[1:]]
    assert not any(e["type"] == "seat_resigned" for e in log), "Ann played the game out: the loop never resigns"
    assert any(e["type"] == "game_won" for e in log)
