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
from dataclasses import dataclass, field
from typing import Any

from redis import exceptions as rex

from service.store.contract import text
from service.events.envelope import Envelope
from service.store.keys import PARTITIONS
from service.store.logtrim import trim_logs
from service.store.outage import Outage
from service.store.store import Store, StoreUnavailable

from . import audit, leaderboard, ratings, results, scores, solitaire_stats, standings

log = logging.getLogger(__name__)

MAX_EVENTS = 2000
"""Events read and applied in one compare-and-set write (a longer game takes several)."""


@dataclass
class Stats:
    entries: int = 0  # log entries acknowledged
    skipped: int = 0  # of which their range was already applied (by us earlier, or by another projector)
    reclaimed: int = 0  # entries taken over from another consumer
    applies: int = 0  # compare-and-set writes that went through
    events: int = 0  # events applied
    conflicts: int = 0  # writes refused because another projector moved the checkpoint first
    results: int = 0  # players' results upserted
    errors: int = 0  # games that failed to apply (their entries stay pending and are retried)
    trimmed: int = 0  # partition log entries let go, every group past them (service/store/logtrim.py)
    last_error: BaseException | None = field(default=None, repr=False)

    def add(self, other: Stats) -> None:
        for name in ("entries", "skipped", "reclaimed", "applies", "events", "conflicts", "results", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.last_error = other.last_error or self.last_error


class ProjectionFailed(Exception):
    """Some games could not be projected; their log entries are still pending."""


async def project_game(
    store: Store, game_id: str, upto: int | None = None, *, max_events: int = MAX_EVENTS, stats: Stats | None = None
) -> int:
    """Apply ``game_id``'s stream from its checkpoint until that reaches ``upto`` (``None``: the stream's end).

    Answers the checkpoint reached. Safe to run anywhere at any time: every write is a compare-and-set.
    """
    stats = stats if stats is not None else Stats()
    while True:
        applied, model = await scores.load(store, game_id)
        if upto is not None and applied >= upto:
            return applied
        envelopes = await store.read(game_id, after=applied, count=max_events)
        if not envelopes:
            return applied
        new, lines = _models(model, envelopes)
        await _record_outside(store, game_id, model, new, envelopes, stats)
        done = await store.project_game(game_id, applied, new.version, scores.encode(new), lines)
        if not done.applied:
            stats.conflicts += 1
            continue
        await _record_outside(store, game_id, model, new, envelopes, None)
        stats.applies += 1
        stats.events += len(envelopes)
        if len(envelopes) < max_events and (upto is None or new.version >= upto):
            return new.version


async def _record_outside(
    store: Store, game_id: str, model: scores.Scores | None, new: scores.Scores, envelopes: list[Envelope], stats: Stats | None
) -> None:
    """The read models outside the game's slot (results, leaderboard, ratings, solitaire statistics, standings), which cannot
    share its compare-and-set: idempotent upserts, made before the checkpoint moves (a crash between the two writes
    repeats them, changing nothing) and once more after it moved (``stats`` None) — a rebuild that dropped them in
    between would otherwise leave a checkpoint past a result that no longer exists, and nothing would write it again."""
    if new.status == "finished" and (model is None or model.status != "finished"):
        added = await results.record(store, new)
        if stats is not None:
            stats.results += added
        await leaderboard.record_game(store, new)
    await ratings.record(store, new)  # every apply of a finished game: its entry follows the game's last event
    await solitaire_stats.record(store, model, new)  # from the deal on: a game counts as started, not only finished
    if standings.changes(new, envelopes):
        await standings.record(store, game_id, new.version)


def _models(model: scores.Scores | None, envelopes: list[Envelope]) -> tuple[scores.Scores, list[str]]:
    """The scores after ``envelopes`` and their audit lines, each event's public part decoded once for both."""
    kind = scores.kind_of(model, envelopes)
    events = scores.decode_public(kind, envelopes)
    return scores.fold(model, envelopes, events), audit.lines(kind, envelopes, events)


TRIM_EVERY_S = 10.0
"""How often a running projector trims the partition logs (when it is given a ``log_keep_ms``)."""
PASS_SHARE_PAUSE = 4
"""After a pass that applied something, the projector rests at least this many times as long as the pass took."""

BATCH_GAMES = 64
"""Games brought up to date together: their checkpoints, their new events and their writes each in one round trip."""
BATCH_EVENTS = 500
"""Events read per game in such a batch; a game with more goes on alone (``project_game``)."""


async def project_games(
    store: Store,
    upto: dict[str, int | None],
    *,
    max_events: int = MAX_EVENTS,
    stats: Stats | None = None,
    batch_games: int = BATCH_GAMES,
    batch_events: int = BATCH_EVENTS,
) -> dict[str, tuple[int, int] | Exception]:
    """``project_game`` of many games at once, in three round trips per ``BATCH_GAMES`` games whatever the number
    of games: their checkpoints in one pipeline, their new events in another, their compare-and-set writes in a
    third (the client's per-call cost, not Redis, is what a projector pass spends). A game whose write is refused
    (another projector moved it) or that has more events than one batch reads goes on through ``project_game``.

    Answers per game ``(writes, events)`` applied, or the exception that stopped it (its log entries stay pending).
    ``StoreUnavailable`` stops everything.
    """
    stats = stats if stats is not None else Stats()
    out: dict[str, tuple[int, int] | Exception] = {}
    ids = list(upto)
    for i in range(0, len(ids), batch_games):
        await _project_batch(store, ids[i : i + batch_games], upto, min(max_events, batch_events), max_events, stats, out)
    return out


async def _project_batch(
    store: Store,
    ids: list[str],
    upto: dict[str, int | None],
    batch_events: int,
    max_events: int,
    stats: Stats,
    out: dict[str, tuple[int, int] | Exception],
) -> None:
    checkpoints = await scores.load_many(store, ids)
    todo = [(g, applied, model) for g, (applied, model) in zip(ids, checkpoints, strict=True)
            if upto[g] is None or applied < upto[g]]  # type: ignore[operator]
    for g in ids:
        out[g] = (0, 0)
    reads = await store.read_many([(g, applied, batch_events) for g, applied, _ in todo])
    writes: list[tuple[str, int, int, bytes, list[str]]] = []
    alone: list[str] = []
    read_of: dict[str, int] = {}
    folded: dict[str, tuple[scores.Scores | None, scores.Scores, list[Envelope]]] = {}
    for (g, applied, model), envelopes in zip(todo, reads, strict=True):
        if not envelopes:
            continue
        try:
            new, lines = _models(model, envelopes)
            await _record_outside(store, g, model, new, envelopes, stats)  # before the checkpoint, as in project_game
        except StoreUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 (one bad game must not stop the others)
            out[g] = e
            continue
        writes.append((g, applied, new.version, scores.encode(new), lines))
        read_of[g] = len(envelopes)
        folded[g] = (model, new, envelopes)
        await asyncio.sleep(0)  # let the worker's requests in between games: a pass must not hold their latency up
    for (g, *_), done in zip(writes, await store.project_games(writes), strict=True):
        if isinstance(done, Exception):
            out[g] = done
        elif not done.applied:
            stats.conflicts += 1
            alone.append(g)
        else:
            try:
                await _record_outside(store, g, *folded[g], None)  # once more, as in project_game
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (as above: this game's error is its answer, the others go on)
                out[g] = e
                continue
            stats.applies += 1
            stats.events += read_of[g]
            out[g] = (1, read_of[g])
            target = upto[g]
            if read_of[g] >= batch_events and (target is None or done.version < target):
                alone.append(g)
            await asyncio.sleep(0)  # progress is visible (stats) and the worker's requests get in, game by game
    gate = asyncio.Semaphore(16)

    async def one(g: str) -> None:
        async with gate:
            mine = Stats()
            try:
                await project_game(store, g, upto[g], max_events=max_events, stats=mine)
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (as above: this game's error is its answer, the others go on)
                out[g] = e
                return
            finally:
                stats.add(mine)
            writes_before, events_before = out[g]  # type: ignore[misc]
            out[g] = (writes_before + mine.applies, events_before + mine.events)

    await asyncio.gather(*(one(g) for g in alone))


async def tell_players(store: Store, games: set[str]) -> dict[str, Exception]:
    """Relay the outboxes of ``games`` to their players' streams (``Store.tell_players``: a no-op where the appending
    worker did it already); answers the games that failed, with their error. ``StoreUnavailable`` stops everything."""
    gate = asyncio.Semaphore(16)

    async def one(game: str) -> Exception | None:
        async with gate:
            try:
                await store.tell_players(game)
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (one game's error must not stop the others)
                return e
            return None

    failed = await asyncio.gather(*(one(g) for g in sorted(games)))
    return {g: e for g, e in zip(sorted(games), failed, strict=True) if e is not None}


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
