"""The client against the live service, on the embedded store and Redis: a keyed player plays a game from its
stream to the end and its receipts and signatures verify; the queue, ratings and exports; what it refuses to send,
and a 409 handed back, not retried."""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import subprocess
import sys

import httpx
import pytest

from free_parking_client import ApiError, AsyncClient, Client, NotLegal, PlayerKey, QueueEvent, Turn
from free_parking_client.core import OPERATIONS, Core
from tests.client.play import ROOT, play, two_seats_with_a_bot, verify

pytestmark = pytest.mark.shared_live


def url_of(live: httpx.AsyncClient) -> str:
    return str(live.base_url).rstrip("/")


def test_both_clients_carry_every_operation_of_the_core_with_its_signature():
    assert {"act", "register", "join", "join_queue", "export", "ratings"} <= set(OPERATIONS)
    for name in OPERATIONS:
        core = getattr(Core, name)
        assert inspect.signature(getattr(Client, name)) == inspect.signature(core)
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)) and getattr(AsyncClient, name).__doc__ == core.__doc__


async def test_a_keyed_player_plays_from_its_stream_and_its_receipts_and_signatures_verify(live, tmp_path):
    with Client(url_of(live), key=PlayerKey.generate()) as fp:
        created = fp.register("Ann")
        game_id = two_seats_with_a_bot(fp, url_of(live))
        last = await asyncio.to_thread(play, fp, game_id, 6)
        assert last.finished and last.seat_key == fp.key.public_key
        kept = fp.receipts.evidence(game_id)
        assert (kept.seat, kept.public_key) == (0, fp.key.public_key) and kept.commitment and kept.client_seed
        assert len(fp.receipts.of(game_id)) > 6
        result = await asyncio.to_thread(verify, fp, game_id, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "receipts agree" in result.stdout and "each signature checked" in result.stdout
        assert "one they signed" in result.stdout and "seat 0 brought client seed" in result.stdout
        assert fp.player(created.player_id).name == "Ann"


async def test_a_command_outside_legal_is_refused_and_nothing_is_sent(live):
    with Client(url_of(live), key=PlayerKey.generate()) as fp:
        fp.register("Bea")
        game_id = fp.create_game("solitaire").game_id
        fp.join(game_id)
        view = fp.view(game_id)
        with pytest.raises(NotLegal):
            fp.act(game_id, {"type": "move", "card": "AS", "to": {"row": 9, "slot": 9}}, view=view)
        with pytest.raises(NotLegal):
            fp.act(game_id, {**view.legal[0], "extra": 1}, view=view)
        assert fp.view(game_id).version == view.version  # nothing was sent
        with pytest.raises(ApiError) as refused:  # told to send it: the service decides
            fp.act(game_id, {"type": "move", "card": "AS", "to": {"row": 9, "slot": 9}}, view=view, check_legal=False)
        assert refused.value.status == 400 and fp.view(game_id).version == view.version
        answer = fp.act(game_id, view.legal[0], view=view)
        assert answer.version > view.version and answer.events[0].sig  # a keyed seat's command carries its signature


async def test_a_stale_version_is_handed_back_as_409_not_retried(live):
    with Client(url_of(live)) as fp:
        fp.register("Cy")
        game_id = fp.create_game("solitaire").game_id
        fp.join(game_id)
        stale = fp.view(game_id)
        moved = fp.act(game_id, {"type": "redeal"} if {"type": "redeal"} in stale.legal else stale.legal[0], view=stale)
        now = fp.view(game_id)
        command = next(c for c in stale.legal if c in now.legal)
        with pytest.raises(ApiError) as conflict:
            fp.act(game_id, command, view=stale)
        assert conflict.value.conflict and conflict.value.code == "version_conflict"
        assert fp.view(game_id).version == moved.version  # not resent at a newer version behind the caller's back


async def test_queueing_twice_is_the_services_409_raised_as_an_api_error(live):
    """Under the default fill wait (20 s: no table is made between the two calls), a second queueing is refused."""
    async with AsyncClient(url_of(live)) as fp:
        await fp.register("Dot")
        assert (await fp.join_queue("monopoly", seats=4)).queue_id
        with pytest.raises(ApiError) as twice:
            await fp.join_queue("monopoly", seats=4)
        assert (twice.value.status, twice.value.code) == (409, "already_queued")
        assert await fp.leave_queue()


@pytest.mark.live_settings(queue_fill_ms=200, queue_interval_ms=50)
async def test_an_unkeyed_player_queues_is_seated_by_its_stream_and_reads_ratings(live, tmp_path):
    """The async client: the queue tells the player's stream it is waiting, then seated (bots fill the table after
    the fill wait); the player resigns at its first turn, the game's ratings are read, the verdict holds."""
    async with AsyncClient(url_of(live)) as fp:
        await fp.register("Dee")
        assert (await fp.join_queue("free-parking", seats=2)).queue_id
        told, game_id = [], None
        async for event in fp.player_events():
            told.append(event)
            if isinstance(event, QueueEvent) and event.status == "seated":
                game_id = event.game_id
            if isinstance(event, Turn) and event.game_id == game_id:
                await fp.act(game_id, {"type": "resign"})
                break
        assert [e.status for e in told if isinstance(e, QueueEvent)] == ["waiting", "seated"]
        status = await fp.queue_status()
        assert (status.state, status.game_id) == ("seated", game_id)
        assert (await fp.view(game_id)).finished
        ratings = await fp.game_ratings(game_id)
        assert ratings.game_id == game_id and ratings.kind == "free-parking"
        assert (await fp.ratings("free-parking")).kind == "free-parking"
        kept = fp.receipts.evidence(game_id)
        assert kept.seat == status.seat and kept.client_seed
        with Client(url_of(live), token=fp.token, receipts=fp.receipts) as sync:
            result = await asyncio.to_thread(verify, sync, game_id, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"seat {status.seat} brought client seed" in result.stdout


@pytest.mark.parametrize("live_kind", ["embedded"])  # the stores: the tests above
@pytest.mark.live_settings(queue_fill_ms=200, queue_interval_ms=50)
async def test_the_readmes_bot_plays_a_game_to_its_end_and_what_it_kept_verifies(live, tmp_path):
    """client/README.md's twenty lines, run as they are (the service's address aside) in a folder of their own: the
    game is played out, and the verify arguments it prints are accepted by ``replays verify``."""
    readme = (ROOT / "client" / "README.md").read_text()
    example = re.search(r"## Play now.*?```python\n(.*?)```", readme, re.S).group(1)
    script = tmp_path / "bot.py"
    script.write_text(example.replace("http://127.0.0.1:8000", url_of(live)))
    ran = await asyncio.to_thread(subprocess.run, [sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    outcome, _, args = ran.stdout.strip().partition(" ")
    assert outcome in ("won", "lost") and (tmp_path / "me.key").exists()
    verified = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "replays", "verify", *ast.literal_eval(args)],
                                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "one they signed" in verified.stdout and "receipts agree" in verified.stdout


async def test_leaving_the_queue(live):
    async with AsyncClient(url_of(live)) as fp:
        await fp.register("Eve")
        assert not await fp.leave_queue()
        await fp.join_queue("monopoly", seats=2)
        assert (await fp.queue_status()).state == "waiting"
        assert await fp.leave_queue()
        assert (await fp.queue_status()).state == "none"
