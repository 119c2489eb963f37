"""``python -m service demo``: one game of each kind, played through the HTTP API, and each checked at its end with
what a player keeps — receipts with their signatures, the seed commitment, and at "your" games your key and client
seed, so the line that every move in your name is signed is there."""

from __future__ import annotations

import os
import random
import re

import httpx
import pytest

from service.__main__ import main
from service.cli import demo_player
from service.store.owner import Owner


@pytest.fixture
def embedded(monkeypatch):
    """The demo's own service on the embedded store (a temporary folder), whatever this machine's environment says."""
    for name in [k for k in os.environ if k == "REDIS_URL" or k.startswith("FREE_PARKING_")]:
        monkeypatch.delenv(name)


def test_the_demo_plays_every_kind_and_checks_each_verdicts_signatures(embedded, capsys):
    assert main(["demo", "--seed", "5", "--timeout", "240"]) == 0
    out = capsys.readouterr().out
    for kind in ("free-parking", "solitaire", "monopoly"):
        assert re.search(rf"^{kind} g_\w+ — \d+ events", out, re.M), kind  # its scores' table
    verdicts = re.findall(r"^  OK g_\w+: .*$", out, re.M)
    assert len(verdicts) == 3, out[-4000:]
    assert all("each signature checked" in v and "every command re-decided" in v for v in verdicts), verdicts
    card, solitaire, monopoly = verdicts
    for verdict in (card, solitaire):  # yours: the seed recomputed from your client seed, your moves signed by you
        assert re.search(r"seat \d brought client seed", verdict) and "they signed" in verdict, verdict
    assert "bot moves re-derived" in monopoly, monopoly
    signed = re.findall(r"✓ every move in your name is one you signed: (\d+) commands", out)
    assert len(signed) == 2 and all(int(n) > 0 for n in signed), out[-4000:]
    assert out.count("the audit's last lines:") == 3


def test_the_demo_on_a_data_folder_another_process_holds_is_refused_in_one_line(embedded, tmp_path, capsys):
    held = Owner(tmp_path / "data")
    try:
        assert main(["demo", "--data", str(tmp_path / "data")]) == 2
    finally:
        held.release()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"in use by process {os.getpid()}" in err[0], err


async def test_your_command_limited_by_the_service_waits_its_retry_after_and_is_chosen_again(monkeypatch):
    """Against a running service (``--url``) a player's commands are limited: a 429 is waited out, not the demo's end."""
    answers = iter([httpx.Response(429, headers={"retry-after": "2"}, json={"error": {"code": "rate_limited"}})])
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(demo_player.asyncio, "sleep", sleep)
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda request: next(answers)), base_url="http://x") as api:
        you = demo_player.You(api, demo_player.Kept("g_0123456789abcdef", "00" * 32), random.Random(1))
        await you.send(3, {"type": "end_turn"})
    assert slept == [2.0] and you.kept.receipts == {}
