"""The projector: reads the partition logs through a consumer group and brings each named game's read models up to date.

A partition-log entry only names a game and a seq range. For each entry the projector applies that game's own
stream from the game's checkpoint (``applied + 1``, by ``XRANGE``) and stores the new checkpoint with the read
models in one compare-and-set write (``Store.project_game``: a script on Redis, a journalled op on the embedded
store) that is refused when the checkpoint moved meanwhile — then it re-reads and tries again. So however many
projectors run, in one group or several, no game's events are applied twice or out of order. Entries whose range
is already applied are only acknowledged. A dead consumer's entries are taken over with ``XAUTOCLAIM`` once they
have been idle ``min_idle_ms``.

The consumer group itself (who read what) is soft state: on the embedded store it is not journalled — log entry
ids are re-stamped when the journal is replayed — so after a restart the group is created again from the start of
each log, and every entry already applied is simply acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from redis import exceptions as rex

from service.store.contract import text
from service.store.keys import PARTITIONS
from service.store.logtrim import trim_logs
from service.store.outage import Outage
from service.store.store import Store, StoreUnavailable

from .apply import MAX_EVENTS, ProjectionFailed, Stats, project_game, project_games, tell_players

__all__ = ["MAX_EVENTS", "ProjectionFailed", "Projector", "Stats", "project_game", "project_games", "tell_players"]

log = logging.getLogger(__name__)

TRIM_EVERY_S = 10.0
"""How often a running projector trims the partition logs (when it is given a ``log_keep_ms``)."""
PASS_SHARE_PAUSE = 4
"""After a pass that applied something, the projector rests at least this many times as long as the pass took."""


class Projector:
    """One consumer of the projectors' group; run several (in one process or many) to share the partitions' work."""

    def __init__(
        self,
        store: Store,
        consumer_name: str,
        group: str = "projectors",
        *,
        count: int = 200,
        min_idle_ms: int = 60_000,
        max_events: int = MAX_EVENTS,
        concurrency: int | None = None,
        partitions: range | list[int] | None = None,
        log_keep_ms: int | None = None,
    ) -> None:
        self.store = store
        self.log_keep_ms = log_keep_ms  # trim the partition logs past what every group applied (None: never)
        self.consumer = consumer_name
        self.group = group
        self.count = count
        self.min_idle_ms = min_idle_ms
        self.max_events = max_events
        self.concurrency = concurrency or (1 if store.name == "embedded" else 16)
        self.partitions = list(partitions if partitions is not None else range(PARTITIONS))
        self.stats = Stats()
        self.outage = Outage(log, f"projector {consumer_name}")
        self._groups_ready = False
        self._own_pending = set(self.partitions)  # partitions whose pending entries of ours must be read again
        # one pass at a time: a ``catch_up`` beside ``run_forever`` waits for the pass in flight (whose entries a new
        # read would not show it) instead of returning before they are applied
        self._turn = asyncio.Lock()
        self._backlog = False  # the last read of a log came back full: there is more to read at once

    # --- the consumer group ------------------------------------------------------------------

    async def ensure_groups(self) -> None:
        """Create the group on every partition log (from its start; the log is created if missing)."""
        for p in self.partitions:
            try:
                create = self.store.r.xgroup_create(self.store.keys.log(p), self.group, id="0", mkstream=True)
                await self.store._read(create)
            except rex.ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise
        self._groups_ready = True

    async def step(self) -> int:
        """One pass over the partitions: our own pending entries where needed, then new ones; answers entries acked.

        Each read covers every partition in one pipeline (one round trip), and the games named are applied concurrently.
        """
        async with self._turn:
            return await self._step()

    async def _step(self) -> int:
        if not self._groups_ready:
            await self.ensure_groups()
        done = 0
        if self._own_pending:
            parts, self._own_pending = sorted(self._own_pending), set()  # _process adds back any whose game fails again
            try:
                starts = {p: "0" for p in parts}
                while starts:
                    batch = await self._read_groups(starts)
                    done += await self._process(batch)
                    starts = {p: text(e[-1][0]) for p, e in batch.items() if len(e) >= self.count}
            except BaseException:
                self._own_pending.update(parts)
                raise
        try:
            done += await self._process(await self._read_groups({p: ">" for p in self.partitions}))
        except BaseException:
            # the read may have reached Redis and its answer been lost (or the entries' processing failed): the
            # entries it delivered are pending under our name now, and a ">" read never shows them again
            self._own_pending.update(self.partitions)
            raise
        return done

    async def reclaim(self, min_idle_ms: int | None = None) -> int:
        """Take over entries another consumer left pending ``min_idle_ms`` and process them; answers entries acked."""
        async with self._turn:
            return await self._reclaim(min_idle_ms)

    async def _reclaim(self, min_idle_ms: int | None) -> int:
        if not self._groups_ready:
            await self.ensure_groups()
        idle = self.min_idle_ms if min_idle_ms is None else min_idle_ms
        done = 0
        starts = {p: "0-0" for p in self.partitions}
        while starts:
            pipe = self.store.r.pipeline(transaction=False)
            for p, start in starts.items():
                pipe.xautoclaim(self.store.keys.log(p), self.group, self.consumer, idle, start, count=self.count)
            replies = await self.store._read(pipe.execute())
            batch, following = {}, {}
            for p, reply in zip(starts, replies, strict=True):
                cursor, claimed = text(reply[0]), reply[1]
                if claimed:
                    batch[p] = claimed
                    self.stats.reclaimed += len(claimed)
                if cursor != "0-0":
                    following[p] = cursor
            done += await self._process(batch)
            starts = following
        return done

    async def catch_up(self, *, reclaim: bool = True) -> Stats:
        """Process until there is nothing new and nothing to reclaim; raise ``ProjectionFailed`` if a game failed."""
        counted = ("entries", "skipped", "reclaimed", "applies", "events", "conflicts", "results", "errors")
        before = {k: getattr(self.stats, k) for k in counted}
        self.stats.last_error = None
        while await self.step() or (reclaim and await self.reclaim()):
            pass
        ran = Stats(**{k: getattr(self.stats, k) - before[k] for k in counted})
        if ran.errors:
            last = self.stats.last_error
            raise ProjectionFailed(f"{ran.errors} game applies failed; the last: {last!r}") from last
        return ran

    async def run_forever(
        self, stop_event: asyncio.Event, poll_interval: float = 0.5, reclaim_interval: float | None = None
    ) -> None:
        """Project until ``stop_event`` is set: poll every ``poll_interval`` s when idle; reclaim every
        ``reclaim_interval`` s (default: half the idle time a dead consumer's entries must reach)."""
        reclaim_every = max(self.min_idle_ms / 2000, poll_interval) if reclaim_interval is None else reclaim_interval
        last_reclaim = last_trim = time.monotonic()
        while not stop_event.is_set():
            done = 0
            started = time.monotonic()
            try:
                done = await self.step()
                if time.monotonic() - last_reclaim >= reclaim_every:
                    last_reclaim = time.monotonic()
                    done += await self.reclaim()
                if self.log_keep_ms is not None and time.monotonic() - last_trim >= TRIM_EVERY_S:
                    last_trim = time.monotonic()
                    self.stats.trimmed += await trim_logs(self.store, self.log_keep_ms)
                self.outage.ok()
            except StoreUnavailable as e:
                self.outage.failed(e)
            except rex.ResponseError as e:
                if "NOGROUP" not in str(e):
                    log.exception("projector %s", self.consumer)
                self._groups_ready = False  # dropped by a rebuild: create it again
                self._own_pending = set(self.partitions)
            except Exception:
                log.exception("projector %s", self.consumer)
            if done and self._backlog:
                await asyncio.sleep(0)
                continue
            # Under a steady load, one pass per poll interval — or, when passes grow long (a busy worker: they share it
            # with its requests), a pause of PASS_SHARE_PAUSE times the pass: each pass then brings many events of each
            # game up to date in a few round trips, instead of a pass per command competing with the commands.
            pause = max(poll_interval, (time.monotonic() - started) * PASS_SHARE_PAUSE) if done else poll_interval
            try:
                await asyncio.wait_for(stop_event.wait(), pause)
            except TimeoutError:
                pass

    # --- entries -----------------------------------------------------------------------------

    async def _read_groups(self, starts: dict[int, str]) -> dict[int, list[tuple[Any, Any]]]:
        """``XREADGROUP`` of each partition from its start (``>``: new entries; an id: our pending ones after it)."""
        pipe = self.store.r.pipeline(transaction=False)
        for p, start in starts.items():
            pipe.xreadgroup(self.group, self.consumer, {self.store.keys.log(p): start}, count=self.count)
        replies = await self.store._read(pipe.execute())
        batch = {p: reply[0][1] for p, reply in zip(starts, replies, strict=True) if reply and reply[0][1]}
        self._backlog = any(len(entries) >= self.count for entries in batch.values())
        return batch

    async def _read_group(self, p: int, start: str) -> list[tuple[Any, Any]]:
        return (await self._read_groups({p: start})).get(p, [])

    async def _process(self, batch: dict[int, list[tuple[Any, Any]]]) -> int:
        """Apply the games the entries name (each once, up to the highest seq named) and acknowledge their entries."""
        if not batch:
            return 0
        games: dict[str, list[Any]] = {}
        upto: dict[str, int] = {}
        home: dict[str, int] = {}
        acked: dict[int, list[Any]] = {}
        told: set[str] = set()
        for p, entries in batch.items():
            for entry_id, fields in entries:
                if not fields or b"game" not in fields:  # deleted from the log, or not a pointer: nothing to apply
                    acked.setdefault(p, []).append(entry_id)
                    continue
                game = fields[b"game"].decode()
                games.setdefault(game, []).append(entry_id)
                upto[game] = max(upto.get(game, 0), int(fields[b"to"]))
                home[game] = p
                if b"told" in fields:
                    told.add(game)
        outcome = {**await project_games(self.store, dict(upto), max_events=self.max_events, stats=self.stats),
                   **await tell_players(self.store, told)}  # a game whose players are not all told stays pending
        for game, done in outcome.items():
            if isinstance(done, Exception):  # one bad game must not stop the others; its entries stay pending
                log.error("projector %s: game %s failed to project", self.consumer, game, exc_info=done)
                self.stats.errors += 1
                self.stats.last_error = done
                self._own_pending.add(home[game])
                continue
            if done[0] == 0:
                self.stats.skipped += len(games[game])
            acked.setdefault(home[game], []).extend(games[game])
        if acked:
            pipe = self.store.r.pipeline(transaction=False)
            for p, ids in acked.items():
                pipe.xack(self.store.keys.log(p), self.group, *ids)
            await self.store._read(pipe.execute())
        n = sum(len(ids) for ids in acked.values())
        self.stats.entries += n
        return n
