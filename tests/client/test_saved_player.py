"""The bot kit's player is kept between runs (``OUT/player.json``): a rating is a player's, so the next run of
``python -m free_parking_client play`` goes on as the same player — where the file still fits: the same service, the
same key, a service that still knows the player and its token. Otherwise a new player is registered and kept; a file
that holds no player is refused, never overwritten."""

from __future__ import annotations

import asyncio
import os
import stat

import msgspec
import pytest

from free_parking_client import PlayerKey
from free_parking_client.__main__ import load_bot, main, parse, play
from free_parking_client.saved import SavedPlayer
from tests.client.test_kit import url_of

pytestmark = [pytest.mark.shared_live, pytest.mark.parametrize("live_kind", ["embedded"])]
BOT = "examples/greedy_solitaire.py:GreedySolitaire"


def args_for(url: str, out, *more: str):
    return parse(["play", BOT, "--url", url, "--kind", "solitaire", "--games", "1", "--out", str(out), *more])


async def run(url: str, out, *more: str) -> SavedPlayer:
    """One kit run of one solitaire; the player it kept."""
    args = args_for(url, out, *more)
    await play(args, load_bot(BOT))
    return msgspec.json.decode((args.player or out / "player.json").read_bytes(), type=SavedPlayer)


async def test_the_next_run_plays_as_the_same_player_kept_readable_by_its_owner_only(live, tmp_path, capsys):
    first = await run(url_of(live), tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / "player.json").st_mode) == 0o600  # the token acts as the player
    assert first.account == "bot" and first.public_key == PlayerKey.load(tmp_path / "bot.key").public_key
    assert (await live.get(f"/players/{first.player_id}")).json()["account"] == "bot"
    capsys.readouterr()
    second = await run(url_of(live), tmp_path)
    assert msgspec.structs.replace(second, last_event=None) == msgspec.structs.replace(first, last_event=None)
    assert f"(player {first.player_id}, as before)" in capsys.readouterr().out
    assert _position(second.last_event) > _position(first.last_event)  # the next run reads its stream on from there


async def test_a_game_an_earlier_run_finished_is_never_counted_again(live, tmp_path):
    """Read from where the last run stopped, the stream tells nothing of its games; read from the oldest kept (a
    file without its position: a run killed before it was written), it tells their seats again, and the kit sees each
    is over before its bot is asked: this run's game is a new one either way."""
    first = await run(url_of(live), tmp_path)
    before = {p.name for p in tmp_path.glob("g_*.ndjson")}
    assert len(before) == 1
    await run(url_of(live), tmp_path)
    (tmp_path / "player.json").write_bytes(msgspec.json.encode(msgspec.structs.replace(first, last_event=None)))
    await run(url_of(live), tmp_path)
    assert len({p.name for p in tmp_path.glob("g_*.ndjson")}) == 3  # three runs, three games


def _position(entry_id: str | None) -> tuple[int, int]:
    ms, seq = (entry_id or "0-0").split("-")
    return int(ms), int(seq)


async def test_a_token_the_service_no_longer_takes_registers_a_new_player(live, tmp_path, capsys):
    first = await run(url_of(live), tmp_path)
    (tmp_path / "player.json").write_bytes(msgspec.json.encode(msgspec.structs.replace(first, token="t_" + "0" * 40)))
    second = await run(url_of(live), tmp_path)
    assert second.player_id != first.player_id and "registering a new one" in capsys.readouterr().out


async def test_a_player_of_another_service_or_key_is_not_played(live, tmp_path, capsys):
    first = await run(url_of(live), tmp_path)
    elsewhere = msgspec.structs.replace(first, url="http://127.0.0.1:1")
    (tmp_path / "player.json").write_bytes(msgspec.json.encode(elsewhere))
    assert (await run(url_of(live), tmp_path)).player_id != first.player_id
    other_key = await run(url_of(live), tmp_path, "--key", str(tmp_path / "other.key"))
    assert other_key.public_key == PlayerKey.load(tmp_path / "other.key").public_key
    assert "with another key" in capsys.readouterr().out


async def test_a_file_that_holds_no_player_stops_the_run_and_is_left_as_it_is(live, tmp_path, capsys):
    (tmp_path / "player.json").write_text("my notes\n")
    code = await asyncio.to_thread(main, ["play", BOT, "--url", url_of(live), "--kind", "solitaire", "--games", "1", "--out",
                                                 str(tmp_path)])
    assert code == 1 and "holds no saved player" in capsys.readouterr().err
    assert (tmp_path / "player.json").read_text() == "my notes\n"
