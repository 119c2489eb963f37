"""The server's own moves: overdue deadlines and server-seated bots.

A bot's move in a game where no person sits (bots alone, or with bot accounts only) is charged to the command budget
of the address that created the game (``bot_budget.py``); with none left, the game waits for it, its next look
recorded like any due time.

Each append records when the game next needs the server (its partition's ``due`` set). The worker that
appended also keeps that time in a local schedule, so a bot answers or a deadline fires on time without
polling; every worker also scans the due sets now and then — at start, too — so games whose worker died
or restarted are found again.

A bot's move is chosen in a thread of its own (``BOT_THREAD``), never on the event loop: the expert's search takes
tens of milliseconds, and requests go on being answered meanwhile.

Any worker may act; two that act on the same game at once collapse into one event, because each move
carries a command id derived from the game and version (``timeout:<game>:<seq>``, ``bot:<game>:<version>``)
and the version it was decided on.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from concurrent.futures import ThreadPoolExecutor

from service.store.archive import ArchiveError
from service.store.outage import Outage
from service.store.store import StoreUnavailable
from service.rules.errors import RuleViolation

from . import chances
from .archiver import RETRY_MS, Archiver
from .bot_budget import BotBudget
from .errors import ApiError
from .games import Games, now_ms
from .schedule import archive_due, idle_due, server_move

log = logging.getLogger("free_parking.runner")

BOT_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bots")
"""Where server moves are chosen: one thread, so that two games' bots never search at once in one worker (the
seated bots they keep are this thread's alone)."""


class Runner:
    def __init__(
        self, games: Games, *, interval_ms: int = 1000, archiver: Archiver | None = None, budget: BotBudget | None = None,
    ) -> None:
        self.games = games
        self.archiver = archiver
        self.budget = budget
        self.scan_ms = interval_ms
        self.outage = Outage(log, "runner")
        self._schedule: list[tuple[int, str, int]] = []
        self._wake = asyncio.Event()
        games.on_due = self.schedule

    def schedule(self, game_id: str, at: int, version: int) -> None:
        """Look at ``game_id`` again at ``at`` (ms), if it is still at ``version`` then: a later append scheduled its own
        look (or, another worker's, recorded it in the store's due set), and this one must not move a bot early."""
        heapq.heappush(self._schedule, (at, game_id, version))
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        last_scan = 0
        while not stop.is_set():
            now = now_ms()
            try:
                while self._schedule and self._schedule[0][0] <= now:
                    _, game_id, version = heapq.heappop(self._schedule)
                    await self.act(game_id, clear=False, version=version)
                if now - last_scan >= self.scan_ms:
                    last_scan = now
                    await self.scan(now)
                    self.outage.ok()
            except StoreUnavailable as e:
                self.outage.failed(e)
            except Exception:
                log.exception("runner: unexpected error; carrying on")
            await self._sleep(stop, last_scan)

    async def _archive(self, game_id: str, version: int, cold: int) -> bool:
        """A finished game due for the archive at ``cold``: archived, or looked at again then (not yet) or in a
        while (its read models lag, another worker holds its partition, the archive failed: see ``Archiver``)."""
        try:
            outcome = await self.archiver.archive_game(game_id)  # type: ignore[union-attr]
        except ArchiveError as e:
            log.warning("archive: %s; the game stays in the store", e)
            outcome = "failed"
        if outcome == "already":  # another worker archived it: nothing is due any more
            await self.games.store.clear_due(game_id, version)
        elif outcome != "archived":
            later = cold if outcome == "not_yet" else now_ms() + RETRY_MS.get(outcome, RETRY_MS["failed"])
            await self.games.store.clear_due(game_id, version, later=later)
        return outcome == "archived"

    async def _sleep(self, stop: asyncio.Event, last_scan: int) -> None:
        wake_at = last_scan + self.scan_ms
        if self._schedule:
            wake_at = min(wake_at, self._schedule[0][0])
        delay = max(0, wake_at - now_ms()) / 1000
        self._wake.clear()
        waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self._wake.wait())]
        try:
            await asyncio.wait(waits, timeout=delay, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def scan(self, now: int) -> bool:
        """Act on every game the store says is due; whether anything was done."""
        acted = False
        for game_id, _ in await self.games.store.due_games(now):
            acted |= await self.act(game_id, clear=True)
        return acted

    # Kept for callers that drive the runner by hand (tests, tools).
    tick = scan

    async def act(self, game_id: str, *, clear: bool = True, version: int | None = None) -> bool:
        """Do what ``game_id`` is owed now. ``version``: the one a look was scheduled for; a game gone past it was
        scheduled again by the append that moved it (its wait, a person's chance, counts from that one)."""
        # the cached game moves on while the thread chooses (a player's command, a read folding the tail): the move
        # is chosen on, named after and appended at one version, or refused as stale (409) and chosen again
        game = (await self.games.fresh(game_id)).snapshot()
        if version is not None and game.version > version:
            return False
        move = await asyncio.get_running_loop().run_in_executor(BOT_THREAD, server_move, game, now_ms(), self.games.idle_ms)
        if move is None:
            if clear:
                meta = await self.games.store.meta(game_id)
                if meta is not None and int(meta.get("version", 0)) < game.version:
                    # the store says the game needs the server, this cache is past that: the store lost events the
                    # cache holds (Redis restarted without them). Forget them; the next look folds the store again.
                    self.games.cache.pop(game_id, None)
                    return False
                if self.archiver is not None and (cold := archive_due(game, self.archiver.after_ms)) is not None:
                    return await self._archive(game_id, game.version, cold)  # the store agrees: it is over
                # nothing owed now (a bot let the moment pass): only the idle close is left to come, if any
                await self.games.store.clear_due(game_id, game.version, later=idle_due(game, self.games.idle_ms))
            return False
        charged = None  # a bot's move names its seat; a timeout or a close names none, and is never charged
        if self.budget is not None and move.seat is not None and not chances.people(game.state):
            charged, wait = await self.budget.take(game_id)
            if wait:  # the address that made this game of bots alone has no token: its bots wait for one
                await self._later(game_id, game.version, now_ms() + wait)
                return False
        try:
            await self.games.execute(
                game_id,
                move.command,
                lambda _: move.seat,  # decided on ``game`` (the expected version below): its seats are the ones it has
                actor_key="server",
                command_id=move.command_id,
                expected_version=game.version,
            )
        except (ApiError, RuleViolation) as e:
            log.debug("runner: %s on %s not applied: %s", move.command_id, game_id, e)
            if charged is not None and self.budget is not None:
                await self.budget.give_back(charged)
            return False
        return True

    async def _later(self, game_id: str, version: int, at: int) -> None:
        """Look at ``game_id`` again at ``at`` if it is still at ``version``: in the store's due set, so any worker
        finds it then (this one, or one started after it), and in this worker's schedule."""
        await self.games.store.clear_due(game_id, version, later=at)
        self.schedule(game_id, at, version)
