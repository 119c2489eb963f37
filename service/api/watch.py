"""One reader of a game's new events per worker, fanned out to every event stream open on it (``live.py``).

Five hundred streams on one game used to poll the store five hundred times a tick, each holding a connection
while it did: past the pool's size streams were cut off. Now the first stream of a game starts its ``GameWatch``,
which alone reads the game's new events and keeps the newest ``BUFFER`` of them; every stream sends from that buffer
and waits on the watch, holding nothing of the store's. A stream behind the buffer (a resume from long ago) catches
up from the store in pages, then follows the buffer. The last stream to close stops the watch.

A watch looks when the game may have moved, not on a clock: at once when this worker appends to it, and when the
worker's ``ChangeFeed`` — one reader of every partition log, for all the worker's watches — sees another worker's
append to it. So idle streams cost the store nothing per game; each watch still looks every ``SAFETY_SECONDS`` (or
``POLL_SECONDS`` while the feed cannot read), in case an append was missed. The embedded store has one worker: its
appends are all this worker's own, so it needs no feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from service.events.envelope import Envelope
from service.rules.engine import Game
from service.store.store import Store

from . import metrics

log = logging.getLogger("free_parking")

POLL_SECONDS = 0.2  # how often a watch looks while no feed tells it of appends
SAFETY_SECONDS = 5.0  # how often it looks anyway
FEED_BLOCK_MS = 1000  # a single server's feed waits this long for an append in one read (a cluster's polls)
BUFFER = 500  # events kept per watched game: a stream further behind reads the store


def _go_on() -> None:
    """Raise ``CancelledError`` if this task was asked to stop. A client library that catches the ``CancelledError``
    it was sent and answers as if nothing happened (seen once with redis-py's cluster pipeline: the change feed went on
    polling, and the worker's event loop never closed) must not keep alive a loop its owner cancelled."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class Games(Protocol):
    """What a watch needs of a worker's games (``games.py``, which holds the watches): the store, and a game as it
    stands now. Named here, not imported, so that the two modules do not import each other."""

    store: Store

    async def fresh(self, game_id: str) -> Game: ...


class GameWatch:
    """The events of one game as this worker learns of them, for the streams that follow it."""

    def __init__(self, games: Games, game_id: str, fed: Callable[[], bool] = lambda: False) -> None:
        self.games, self.game_id, self._fed = games, game_id, fed
        self.version = -1  # the last event read (-1: not looked yet)
        self.finished = False  # whether the game is over at ``version``
        self.failed: BaseException | None = None  # why the watch stopped early (the store went away)
        self.recent: deque[Envelope] = deque(maxlen=BUFFER)
        self.streams = 0
        self.looks = 0  # how often it read the store: an idle game's watch looks only when woken (tests count it)
        self._changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._woken = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """This worker appended to the game: look now, not at the next poll."""
        self._woken.set()

    def since(self, after: int) -> list[Envelope] | None:
        """The events after ``after`` that the watch holds (``[]``: none yet), or ``None`` if ``after`` is older than
        the buffer: that stream reads the store first."""
        if after >= self.version:
            return []
        if not self.recent or after < self.recent[0].seq - 1:
            return None
        return list(self.recent)[after - self.recent[0].seq + 1 :]

    async def changed(self, after: int, timeout: float) -> None:
        """Until there is news for a stream that has sent up to ``after`` (an event, the end, a failure), or
        ``timeout`` seconds pass. Every stream waits on the same future: one wake-up reaches them all."""
        if self.version > after or self.finished or self.failed is not None:
            return
        await asyncio.wait([self._changed], timeout=timeout)

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
        changed.set_result(None)

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self.streams and not self.finished:
            _go_on()
            self._woken.clear()  # before the read: an append after it wakes the wait below
            try:
                await self._look()
            except Exception as e:  # the store went away: every stream ends; clients resume from Last-Event-ID
                log.warning("event streams of %s ended early: %s", self.game_id, e)
                self.failed = e
                self._notify()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), SAFETY_SECONDS if self._fed() else POLL_SECONDS)

    async def _look(self) -> None:
        self.looks += 1
        game = await self.games.fresh(self.game_id)
        version, finished = game.version, game.rules.status_of(game.state) == "finished"  # one state, before any await
        if self.version < 0:
            self.version = version
        elif version > self.version:
            new = await self.games.store.read(self.game_id, after=self.version, count=version - self.version)
            if not new:
                return
            self.recent.extend(new)
            self.version = new[-1].seq
        else:
            return
        self.finished = finished and self.version >= version
        self._notify()


class ChangeFeed:
    """Every append of every worker, read off the partition logs (each append writes a pointer there: game and range)
    by one task per worker, for the watches it holds: a game's watch is woken when its game is named."""

    def __init__(self, store: Store, wake: Callable[[str], None]) -> None:
        self.store, self.wake = store, wake
        self.reads = 0  # reads of the logs that worked: a test waits on it, never on the clock
        self.pauses = 0  # pauses: a failed read (or start) after a working one; logged, counted in /metrics, and their end
        self.closed = False  # the worker is stopping: no stream starts the feed again
        self._paused_at: float | None = None
        self._state: str | None = None  # what /metrics says of this feed (metrics.FEED_STATES), None when stopped
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None  # set once the task knows where the logs stand

    @property
    def reading(self) -> bool:
        """Whether the last read worked (else the watches look on their own, every ``POLL_SECONDS``): what /metrics
        says of the feed, read back."""
        return self._state in ("blocking", "polling")

    @property
    def mode(self) -> str:
        """How the feed reads when it can: one blocking read on a single server; in turn, paced, on a cluster (whose
        logs live in different slots, which one XREAD cannot block on)."""
        return "polling" if self.store.cluster else "blocking"

    def _say(self, state: str | None) -> None:
        if state != self._state:
            if self._state is not None:
                metrics.FEED.labels(self._state).dec()
            if state is not None:
                metrics.FEED.labels(state).inc()
            self._state = state

    def _paused(self, error: BaseException) -> None:
        if self._paused_at is None:  # a pause begins (a start that failed is one too): once, however long it lasts
            self.pauses += 1
            metrics.FEED_PAUSES.inc()
            self._paused_at = time.monotonic()
            log.warning("change feed paused (event streams poll the store meanwhile): %s", error)
        self._say("paused")

    def _resumed(self) -> None:
        if self._paused_at is not None:
            log.warning("change feed resumed after %.1f s", time.monotonic() - self._paused_at)
            self._paused_at = None
        self.reads += 1
        self._say(self.mode)

    async def start(self) -> None:
        """Read from the logs' newest entries on; once this returns, no later append is missed. Many streams open at
        once share the one start (and the one task); a start that cannot read the logs keeps trying, paused, while the
        streams poll — never left for the next stream to retry."""
        if self.closed:
            return
        if self._task is None or self._task.done():
            loop = asyncio.get_running_loop()
            ready = loop.create_future()
            task = loop.create_task(self._run(ready))
            # a task cancelled before its first step never runs _run's finally: its waiters are released here
            task.add_done_callback(lambda _: ready.done() or ready.set_result(None))
            self._ready, self._task = ready, task
        await asyncio.shield(self._ready)

    def stop(self) -> asyncio.Task[None] | None:
        """Cancel the reading task (answered, to be awaited by a caller that must see it end)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        if self._paused_at is not None:  # the pause ends with the feed, not at some later start
            log.warning("change feed stopped while paused (%.1f s): no stream left", time.monotonic() - self._paused_at)
            self._paused_at = None
        self._say(None)
        return task

    async def _run(self, ready: asyncio.Future[None]) -> None:
        heads: dict[int, bytes] | None = None
        while heads is None:
            _go_on()
            try:
                heads = await self.store.log_heads()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - the watches poll meanwhile; the feed tries again, paused
                self._paused(e)
            finally:
                if not ready.done():  # the streams go on at once, polling until the feed reads
                    ready.set_result(None)
            if heads is None:
                await asyncio.sleep(POLL_SECONDS * 5)
        self._resumed()
        await self._follow(heads)

    async def _follow(self, heads: dict[int, bytes]) -> None:
        while True:
            _go_on()
            try:
                appended = await self.store.appended_since(heads, FEED_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - the store is away: the watches poll until it is back
                self._paused(e)
                await asyncio.sleep(POLL_SECONDS * 5)
                continue
            self._resumed()
            for p, entry, game_id in appended:
                heads[p] = entry
                self.wake(game_id)
            if self.store.cluster and not appended:  # a cluster's read does not wait: pace it
                await asyncio.sleep(POLL_SECONDS)


class Watches:
    """A worker's watches, one per game that has streams open, and the feed that wakes them (a real Redis only)."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self._by_game: dict[str, GameWatch] = {}
        self.feed = ChangeFeed(games.store, self.wake) if games.store.name != "embedded" else None

    async def stop(self) -> None:
        """The worker stops: the feed's read ends before the store's connections are closed under it."""
        if self.feed is not None:
            self.feed.closed = True
        task = self.feed.stop() if self.feed is not None else None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def _fed(self) -> bool:
        return self.feed is None or self.feed.reading

    def wake(self, game_id: str) -> None:
        watch = self._by_game.get(game_id)
        if watch is not None:
            watch.wake()

    @contextlib.asynccontextmanager
    async def follow(self, game_id: str) -> AsyncIterator[GameWatch]:
        """The game's watch, started for this stream if it is the first; stopped when the last one leaves (and the
        feed with the last watch)."""
        if self.feed is not None:
            try:
                await self.feed.start()
            except asyncio.CancelledError:  # the client left while the feed started: no watch will stop it
                if not self._by_game:
                    self.feed.stop()
                raise
        watch = self._by_game.get(game_id)
        if watch is None or watch.failed is not None:  # a failed watch stays failed for the streams it had
            watch = self._by_game[game_id] = GameWatch(self.games, game_id, self._fed)
        watch.streams += 1
        watch._start()
        try:
            yield watch
        finally:
            watch.streams -= 1
            if not watch.streams and self._by_game.get(game_id) is watch:
                del self._by_game[game_id]
                watch.wake()  # it sees no stream left and stops
            if not self._by_game and self.feed is not None:
                self.feed.stop()
