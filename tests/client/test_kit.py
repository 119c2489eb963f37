"""The bot kit against the live service, on the embedded store and Redis: each example bot plays its games through
the kit against the server's bots (the card game and Monopoly from the queue, solitaires the kit creates), every
game finishes and ``replays verify`` accepts its log with the receipts the kit wrote; a bot that lets a conflict
happen is asked again on the new view; a bot that fails stops the run, naming the game, with nothing sent."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from examples.greedy_free_parking import GreedyFreeParking
from examples.greedy_monopoly import GreedyMonopoly
from examples.greedy_solitaire import GreedySolitaire
from free_parking_client import AsyncClient, Client, PlayerKey
from free_parking_client.kit import Bot, BotFailed, Kit, Plan, Played
from replays.__main__ import main as replays
from tests.client.play import ROOT
from tests.depth import count

pytestmark = pytest.mark.shared_live
GAMES = count("FREE_PARKING_KIT_GAMES", 3, 20)
"""Games each example plays over HTTP: 3 in ``make test``, 20 in ``make soak`` (issue 33)."""
ENDINGS = {"free-parking": {"game_won"}, "monopoly": {"game_ended"}, "solitaire": {"game_won", "game_lost"}}
FAST_QUEUE = {"queue_fill_ms": 200, "queue_interval_ms": 50}
EXAMPLES = [
    ("free-parking", GreedyFreeParking, 2, None),
    ("monopoly", GreedyMonopoly, 2, {"max_rounds": 8}),
    ("solitaire", GreedySolitaire, None, None),
]


def url_of(live) -> str:
    return str(live.base_url).rstrip("/")


def verified(played: Played) -> str:
    """``python -m replays verify`` with the arguments the kit kept, run here; its report (it must accept)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = replays(["verify", *played.verify])
    assert code == 0, out.getvalue()
    return out.getvalue()


async def kit_run(url: str, kind: str, bot, seats, options, out: Path, games: int) -> tuple[list[Played], AsyncClient]:
    client = AsyncClient(url, key=PlayerKey.generate())
    assert (await client.register(bot.__name__, account="bot")).account == "bot"
    kit = Kit(client, bot, Plan(kind, games, out, seats, options, parallel=games))
    return await kit.run(), client


@pytest.mark.live_settings(**FAST_QUEUE)
async def test_each_example_plays_its_games_through_the_kit_and_every_game_verifies(live, tmp_path):
    runs = await asyncio.gather(*(kit_run(url_of(live), kind, bot, seats, options, tmp_path / kind, GAMES)
                                  for kind, bot, seats, options in EXAMPLES))
    for (kind, *_), (played, client) in zip(EXAMPLES, runs):
        async with client:
            assert len(played) == GAMES and len({p.game_id for p in played}) == GAMES
            for p in played:
                view = await client.view(p.game_id)
                won = view.raw["result"] == "won" if kind == "solitaire" else view.winner == p.seat
                assert view.finished and p.kind == kind and p.won == won and p.ended_by in ENDINGS[kind]
                others = getattr(view, "players", None) or getattr(view, "seats", [])
                assert all(o.bot for o in others if o.seat != p.seat)  # the server's bots at every other seat
                report = await asyncio.to_thread(verified, p)
                assert "receipts agree" in report and "one they signed" in report, report
                assert p.log.exists() and p.receipts.exists()


class ConflictedOnce(Bot):
    """Makes the seat's move itself (as another window of the player might) before answering the view it was asked
    about, so the kit's command meets a 409; then resigns."""

    def __init__(self, client: Client) -> None:
        self.client, self.asked = client, []

    def act(self, view):
        self.asked.append(view.version)
        if len(self.asked) == 1:
            self.client.act(view.game_id, view.legal[0], view=view)
            return view.legal[0]
        return {"type": "resign"}


@pytest.mark.parametrize("live_kind", ["embedded"])  # the stores: the test above
async def test_a_conflict_is_read_again_and_the_bot_asked_anew(live, tmp_path):
    async with AsyncClient(url_of(live), key=PlayerKey.generate()) as client:
        await client.register("Conflicted", account="bot")
        with Client(url_of(live), token=client.token, key=client.key) as other:
            bots: list[ConflictedOnce] = []

            def make() -> ConflictedOnce:
                bots.append(ConflictedOnce(other))
                return bots[-1]

            played = await Kit(client, make, Plan("solitaire", 1, tmp_path)).run()
            (bot,) = bots
        assert bot.asked == [bot.asked[0], bot.asked[0] + 1]  # asked again on the view after the other move
        assert not played[0].won and (await client.view(played[0].game_id)).raw["reason"] == "resigned"


class Illegal(Bot):
    def act(self, view):
        return {"type": "move", "card": "AS", "to": {"row": 0, "slot": 1}}  # aces are out of play


class Broken(Bot):
    def act(self, view):
        raise ZeroDivisionError("the bot's own bug")


@pytest.mark.parametrize("live_kind", ["embedded"])
@pytest.mark.parametrize("bot", [Illegal, Broken])
async def test_a_bot_that_fails_stops_the_run_naming_the_game_and_nothing_is_sent(live, tmp_path, bot):
    async with AsyncClient(url_of(live), key=PlayerKey.generate()) as client:
        await client.register("Failing", account="bot")
        with pytest.raises(BotFailed) as failed:
            await Kit(client, bot, Plan("solitaire", 1, tmp_path)).run()
        view = await client.view(failed.value.game_id)
        assert view.version == failed.value.version and not view.finished


@pytest.mark.parametrize("live_kind", ["embedded"])
@pytest.mark.live_settings(**FAST_QUEUE)
async def test_the_play_command_queues_plays_prints_the_rating_and_how_to_verify(live, tmp_path):
    """``python -m free_parking_client play`` end to end, as the README's bot author runs it."""
    command = [sys.executable, "-m", "free_parking_client", "play", "examples/greedy_free_parking.py:GreedyFreeParking",
               "--url", url_of(live), "--kind", "free-parking", "--seats", "2", "--games", "2"]
    ran = await asyncio.to_thread(subprocess.run, [*command, "--out", str(tmp_path / "out")], cwd=ROOT,
                                  capture_output=True, text=True, timeout=300, env=client_env())
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("GreedyFreeParking (player p_") and "plays 2 free-parking game(s)" in lines[0]
    assert [line.split()[0] for line in lines[1:3]] == ["[1/2]", "[2/2]"] and "won" in ran.stdout
    rating = next(line for line in lines if line.startswith("rating in free-parking: "))
    assert "2 rated game(s)" in rating
    player_id = re.search(r"\(player (p_\w+)\)", lines[0]).group(1)
    assert (await live.get(f"/players/{player_id}")).json()["account"] == "bot"  # registered as a bot account
    commands = (tmp_path / "out" / "verify.sh").read_text().splitlines()
    assert len(commands) == 2 and commands[0] in ran.stdout
    check = await asyncio.to_thread(subprocess.run, commands[1], shell=True, cwd=ROOT, capture_output=True, text=True,
                                    timeout=120)
    assert check.returncode == 0 and "receipts agree" in check.stdout, check.stdout + check.stderr

    again = await asyncio.to_thread(subprocess.run, [*command[:-2], "--games", "1", "--out", str(tmp_path / "out")],
                                    cwd=ROOT, capture_output=True, text=True, timeout=300, env=client_env())
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"(player {player_id}, as before)" in again.stdout.splitlines()[0]  # the same player: its rating goes on
    assert "3 rated game(s)" in next(line for line in again.stdout.splitlines() if line.startswith("rating in ")), again.stdout


def client_env() -> dict[str, str]:
    """This checkout's client and service first on the path (a worktree's, not the one installed)."""
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "client"), str(ROOT)])}
