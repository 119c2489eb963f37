"""The runner's bots choose in a thread while the worker goes on answering requests: a move is chosen on, named after
and appended at one version of the game, or not at all (service/api/runner.py)."""

from __future__ import annotations

import asyncio

from service.api import runner as runner_module
from service.api.games import Games
from service.api.runner import Runner
from tests.api.conftest import make_settings, served
from tests.api.helpers import log_of, verified


async def test_a_bot_move_chosen_on_one_version_is_never_appended_after_another(store_kind, tmp_path, monkeypatch):
    """While the bots' thread chooses, a command lands on the game through the same worker (here the very move, sent
    under another id, as a player's command or a read folding the tail would move the cached game on): the move
    chosen before it is offered at the version it was chosen on — refused as stale — not appended after the other."""
    async with served(make_settings(store_kind, tmp_path, runner=False)) as api:
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
        for name in ("greedy", "greedy"):
            assert (await api.post(f"/games/{game_id}/seats", json={"bot": name})).status_code == 201
        games = Games(api.app.ctx.store)
        runner, loop, offered, landed = Runner(games), asyncio.get_running_loop(), [], []
        chosen_at = (await games.fresh(game_id)).version

        async def elsewhere(move):
            done = await Games.execute(games, game_id, move.command, lambda _: move.seat, actor_key="server",
                                       command_id="elsewhere", expected_version=chosen_at)
            landed.append(done.envelopes[-1].seq)

        def choose_while_the_game_moves_on(game, now, idle_ms, server_move=runner_module.server_move):
            move = server_move(game, now, idle_ms)
            asyncio.run_coroutine_threadsafe(elsewhere(move), loop).result()
            return move

        async def execute(*args, **kwargs):
            offered.append((kwargs["command_id"], kwargs["expected_version"]))
            return await Games.execute(games, *args, **kwargs)

        monkeypatch.setattr(games, "execute", execute)
        monkeypatch.setattr(runner_module, "server_move", choose_while_the_game_moves_on)
        assert not await runner.act(game_id), "a move chosen before the game moved on was applied after it"
        assert offered == [(f"bot:{game_id}:{chosen_at}", chosen_at)]
        version, _, log = await log_of(api, game_id)
        assert version == landed[0], "the stale move was appended"
        for e in log:
            if (e.get("command_id") or "").startswith("bot:"):
                assert e["command_id"] == f"bot:{game_id}:{e['seq'] - 1}"
        await verified(api, game_id)
