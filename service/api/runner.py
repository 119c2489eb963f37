"""The server's own moves: overdue deadlines and server-seated bots, found through the partitions' due sets.

Any worker may run it; two that act on the same game at once collapse into one event, because each
move carries a command id derived from the game and version (``timeout:<game>:<seq>``,
``bot:<game>:<version>``) and the version it was decided on.
"""

from __future__ import annotations

import asyncio
import logging

from service.events.store import StoreUnavailable
from service.rules.errors import RuleViolation

from .errors import ApiError
from .games import Games, now_ms
from .schedule import server_move

log = logging.getLogger("free_parking.runner")


class Runner:
    def __init__(self, games: Games, *, interval_ms: int = 200) -> None:
        self.games = games
        self.interval = interval_ms / 1000

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                busy = await self.tick()
            except StoreUnavailable as e:
                log.warning("runner: store unavailable (%s); retrying", e)
                busy = False
            except Exception:
                log.exception("runner: unexpected error; carrying on")
                busy = False
            if not busy:
                try:
                    await asyncio.wait_for(stop.wait(), self.interval)
                except TimeoutError:
                    pass

    async def tick(self) -> bool:
        """Act on every game that is due; whether anything was done."""
        now = now_ms()
        acted = False
        for game_id, _ in await self.games.store.due_games(now):
            acted |= await self.act(game_id)
        return acted

    async def act(self, game_id: str) -> bool:
        game = await self.games.fresh(game_id)
        move = server_move(game, now_ms())
        if move is None:
            await self.games.store.clear_due(game_id, game.version)
            return False
        try:
            await self.games.execute(
                game_id,
                move.command,
                move.seat,
                actor_key=f"seat:{move.seat}" if move.seat is not None else "server",
                command_id=move.command_id,
                expected_version=game.version,
            )
        except (ApiError, RuleViolation) as e:
            log.debug("runner: %s on %s not applied: %s", move.command_id, game_id, e)
            return False
        return True
