"""The embedded store: fakeredis in this process, every write journalled to a file under ``--data``.

One process owns the data, so the append contract is carried out in Python under a lock instead of
by the Lua script (fakeredis interprets Lua at a few thousand calls a second); the store contract
tests run the same cases against both and against the script on a real server. Writes are journalled
as ``(op, args)`` records and replayed through the same code at start; a journal whose damage only a
repair may drop is refused first (``check_journal``, ``journal.py``).
"""

from __future__ import annotations

import asyncio
import logging
import functools
from pathlib import Path
from typing import Any

import fakeredis
import msgspec

from service.events.envelope import Envelope
from .buckets import InProcessBuckets
from .compaction import Compaction
from .journal import RECORD_HEAD, Dropped, Journal, JournalCorrupt
from .keys import STATUSES
from .oplog import Op as _Op, decode_op, decode_request, describe, encode
from .owner import Owner
from .pool import CONNECTIONS, WAIT_MS, WaitingPool
from .told import Told
from .store import (Appended, AppendRequest, CommandRecord, Projected, ProjectionCorrupt, Store, StoreUnavailable, append_args,
                    parse_record)

log = logging.getLogger("free_parking.store")


JOURNAL = "journal.bin"


def check_journal(data_dir: Path, *, repair: bool = False, fsync: bool = False) -> Dropped | None:
    """What ``EmbeddedStore.open`` does to the journal before it replays it: refuse it (``JournalCorrupt``), cut
    a torn tail off, or, with ``repair``, set its damaged part aside; the answer says what was cut."""
    return Journal.load(data_dir / JOURNAL, repair=repair, fsync=fsync, describe=describe)[1]


class EmbeddedStore(InProcessBuckets, Store):
    name = "embedded"

    def __init__(
        self, data_dir: Path | None, namespace: str = "fp", *, fsync: bool = False, repair: bool = False,
        connections: int = CONNECTIONS, wait_ms: int = WAIT_MS,
    ) -> None:  # fmt: skip
        pool = functools.partial(WaitingPool, timeout=wait_ms / 1000)  # requests wait for a connection (pool.py)
        server = fakeredis.FakeServer()
        client = fakeredis.FakeAsyncRedis(server=server, decode_responses=False, connection_pool_class=pool,
                                          max_connections=connections)
        super().__init__(client, namespace)
        # the same server called without asyncio, for the writes: fakeredis does a command's work in the call that
        # sends it, so the asyncio client's pool, queues and retries are only cost here (a write is ~40% cheaper)
        self._now = fakeredis.FakeRedis(server=server, decode_responses=False)
        self._lock = asyncio.Lock()
        self._journal_path = data_dir / JOURNAL if data_dir else None
        self._owner: Owner | None = None  # the data folder's lock, held from open to close (owner.py)
        self._journal: Journal | None = None
        self._fsync = fsync
        self._repair = repair  # drop what the journal cannot read past, kept beside it (``check_journal``)
        self.dropped: Dropped | None = None  # what ``open`` cut off the journal
        self._broken: str | None = None  # why writes are refused: the journal failed, memory is ahead of it
        # This process is the only writer, so it may remember each game's version and status: appends then
        # skip two reads and the index moves that change nothing, and a read past the end skips fakeredis.
        self._version: dict[str, int] = {}
        self._status: dict[str, str] = {}
        # and the rest of what an append checks or clears: each game's command ids (its first answers, for a resend)
        # and which games have an entry in their partition's due set, so an append makes one call to fakeredis
        self._commands: dict[str, dict[str, str]] = {}
        self._due: set[str] = set()
        self.compaction = Compaction(self)  # the journal rewritten to what is live (compaction.py)

    async def open(self) -> EmbeddedStore:
        """Take the data folder (``DataInUse`` when another process holds it), replay the journal into a fresh
        in-memory server, then start journalling."""
        if self._journal_path is not None:
            self._owner = Owner(self._journal_path.parent)
            try:
                await self._load()
            except BaseException:
                self._owner.release()
                raise
        return self

    async def _load(self) -> None:
        """Replay the journal (cutting what ``repair`` allows), then open it for appends."""
        assert self._journal_path is not None
        path = self._journal_path
        self.compaction.clear_leftover()
        cut = self.compaction.check_whole()  # a snapshot cut short is damage, not a torn write
        try:
            records, self.dropped = Journal.load(path, repair=self._repair, fsync=self._fsync, describe=describe)
        except JournalCorrupt as e:
            raise self.compaction.refusal(e) from None
        self.dropped = self.dropped or cut
        offset, records, kinds = self.compaction.load(records)  # a snapshot first, if the journal begins with one
        for n, payload in enumerate(records):
            refusal = await self._replay(payload, kinds)
            if refusal is not None:  # its checksum holds, yet it is not a write that took: cut here, or refuse
                reason = f"record {n} does not replay ({refusal})"
                self.dropped = Journal.cut(path, offset, reason, repair=self._repair, fsync=self._fsync, describe=describe)
                break
            offset += RECORD_HEAD + len(payload)
        self._journal = Journal(self._journal_path, fsync=self._fsync)

    async def _replay(self, payload: bytes, kinds: dict[str, str]) -> str | None:
        """Apply one journalled write again; why it cannot be, if it cannot (``None``: it took, as it did first)."""
        try:
            op = decode_op(payload)
            apply = getattr(self, f"_op_{op.op}", None)
            if apply is None:
                return f"an operation this store does not know: {op.op[:40]!r}"
            args = [_with_kind(decode_request(op.args[0]), kinds)] if op.op == "append" else op.args
            result = await apply(*args)
        except (msgspec.MsgspecError, TypeError, ValueError, IndexError) as e:
            return f"not a store operation: {type(e).__name__}"
        if not _changed(result):  # only writes that took were journalled: each must take again
            return f"{op.op} did not apply again: {result!r}"[:200]
        return None

    async def _write(self, op: str, *args: Any) -> Any:
        """Carry out and journal one write, to its end even if the request that asked for it is cancelled (its client
        hung up): fakeredis applies a transaction before its answers are read, so a cancel in between would leave
        memory ahead of this store's versions and of the journal — and every later write to the game failing."""
        task = asyncio.ensure_future(self._write_whole(op, *args))
        task.add_done_callback(_retrieved)
        return await asyncio.shield(task)

    async def _write_whole(self, op: str, *args: Any) -> Any:
        async with self._lock:
            self._refuse_if_broken()
            result = await getattr(self, f"_op_{op}")(*args)
            if isinstance(result, _Trimmed):  # journalled as what replays alike: the count of oldest entries dropped
                op, args = "trim_log_oldest", (args[0], int(result))
            if self._journal is not None and _changed(result):
                stored = [encode(args[0])] if op == "append" else list(args)
                try:
                    self._journal.write(encode(_Op(op, stored)))
                except OSError as e:
                    # this write is in memory but not in the journal: later writes would build on it and
                    # then fail to replay, so none is accepted until a restart reloads the journal
                    self._broken = f"the journal {self._journal_path} could not be written ({e}); restart the service"
                    raise StoreUnavailable(self._broken) from e
            return result

    async def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
        if self._owner is not None:
            self._owner.release()
        await super().close()

    async def _op_append(self, req: AppendRequest) -> Appended:
        """The append script's contract, step for step (``append.lua``)."""
        keys, _ = append_args(self.keys, req)
        stream, meta, commands, log, *indexes, due, outbox = keys[:9]
        by_kind = keys[9:12] if req.kind else []
        if req.command_key:
            record = self._commands.get(req.game_id, {}).get(req.command_key)
            if record is not None:
                digest, first, last = record.split(":")
                same = digest == req.command_digest  # exactly the recorded digest, not a prefix of it
                return Appended("duplicate" if same else "command_id_reused", int(last), int(first), int(last))
        if req.claim:
            holder = self._now.hget(req.claims, req.claim)
            if holder is not None and holder.decode() != req.game_id:
                return Appended("claimed", 0, holder=holder.decode())
        version = self._version.get(req.game_id, 0)
        if version != req.expected_version:
            return Appended("conflict", version)
        last = version + len(req.entries)
        # no MULTI/EXEC: fakeredis carries out a pipeline's commands in one synchronous call, so no other coroutine's
        # command comes between them, and this lock keeps out every other write (a transaction would parse each twice)
        pipe = self._now.pipeline(transaction=False)
        for i, entry in enumerate(req.entries, start=1):
            pipe.xadd(stream, {"e": entry}, id=f"{version + i}-0")
        pipe.hset(meta, mapping={"version": last, "head": req.head, "status": req.status, **req.meta})
        record = f"{req.command_digest}:{version + 1}:{last}"
        if req.command_key:
            pipe.hset(commands, req.command_key, record)
        if req.told:
            pipe.xadd(outbox, {"v": last, "e": req.told})
            pipe.xadd(log, {"game": req.game_id, "from": version + 1, "to": last, "told": 1})
        else:
            pipe.xadd(log, {"game": req.game_id, "from": version + 1, "to": last})
        if self._status.get(req.game_id) != req.status:
            for group in (indexes, by_kind) if by_kind else (indexes,):
                for index in group:
                    pipe.zrem(index, req.game_id)
                pipe.zadd(group[STATUSES.index(req.status)], {req.game_id: req.created_at})
        if req.claim:
            pipe.hset(req.claims, req.claim, req.game_id)
        if req.due_at is not None:
            pipe.zadd(due, {req.game_id: req.due_at})
        elif req.game_id in self._due:
            pipe.zrem(due, req.game_id)
        self._execute(pipe)
        self._version[req.game_id], self._status[req.game_id] = last, req.status
        if req.command_key:
            self._commands.setdefault(req.game_id, {})[req.command_key] = record
        self._mark_due(req.game_id, req.due_at is not None)
        return Appended("ok", last, version + 1, last)

    def _execute(self, pipe: Any) -> list[Any]:
        """A write's pipeline; one that fails part-way leaves memory ahead of this store's own records and of the
        journal, so no write is accepted after it until a restart replays the journal."""
        try:
            return pipe.execute()
        except Exception as e:
            self._broken = f"a write failed part-way ({type(e).__name__}: {e}); restart the service"[:300]
            raise StoreUnavailable(self._broken) from e

    def _mark_due(self, game_id: str, due: bool) -> None:
        if due:
            self._due.add(game_id)
        else:
            self._due.discard(game_id)

    async def trim_logs_below(self, below: dict[int, str]) -> int:
        """``Store.trim_logs_below``, journalled: a trim not journalled came back at every restart (the logs' entries
        of every append ever made, replayed), and so into every compaction's snapshot taken at start."""
        return sum([await self._write("trim_log", p, min_id) for p, min_id in below.items()])

    async def _op_trim_log(self, p: int, min_id: str) -> _Trimmed:
        """A log's entry ids are the clock's at each append — a replay gives them new ones —, so the trim is journalled
        as the count of oldest entries it dropped (``trim_log_oldest``), not by an id."""
        return _Trimmed(self._now.xtrim(self.keys.log(p), minid=min_id, approximate=False))

    async def _op_trim_log_oldest(self, p: int, count: int) -> _Trimmed:
        """Drop the ``count`` oldest entries of a partition log: appends only add newer ones, so where the record falls
        among them does not change which go."""
        key = self.keys.log(p)
        length = self._now.xlen(key)
        if length < count:  # the trim took more than the log now holds: not the log that was trimmed
            return _Trimmed(0)
        return _Trimmed(self._now.xtrim(key, maxlen=length - count, approximate=False))

    async def _op_clear_due(self, game_id: str, version: int, later: int | None = None) -> None:
        """``Store.clear_due`` with the version this store knows; it removes an entry its memory does not know of
        too (a stale one: the runner clears what it was told is due), so it never leaves one behind."""
        if self._version.get(game_id) != version:
            return
        due = self.keys.due(self._partition(game_id))
        if later is not None and self._now.hget(self.keys.meta(game_id), "archived") == b"1":
            later = None  # an archived game is owed nothing: a stale entry goes, none is set again
        if later is None:
            self._now.zrem(due, game_id)
        else:
            self._now.zadd(due, {game_id: later})
        self._mark_due(game_id, later is not None)

    async def _op_forget_events(self, game_id: str, version: int) -> Projected:
        forgotten = await super()._op_forget_events(game_id, version)
        if forgotten.applied:  # its command ids and its due entry went with its events
            self._commands.pop(game_id, None)
            self._mark_due(game_id, False)
        return forgotten

    async def command_record(self, game_id: str, key: str) -> CommandRecord | None:
        self._refuse_if_broken()
        record = self._commands.get(game_id, {}).get(key)
        return parse_record(record) if record is not None else None

    async def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[Envelope]:
        if self._broken is None and game_id in self._version and after >= self._version[game_id]:
            return []
        return await super().read(game_id, after, count)

    async def read_many(self, wanted: list[tuple[str, int, int | None]]) -> list[list[Envelope]]:
        # no round trip to save in this process: each read alone, so a read past a game's end skips fakeredis
        return [await self.read(game_id, after, count) for game_id, after, count in wanted]

    async def _read(self, coro: Any) -> Any:
        if self._broken is not None:  # memory may hold a write the journal lacks: show nothing unacknowledged
            getattr(coro, "close", lambda: None)()  # never awaited: close it, or Python warns
        self._refuse_if_broken()
        return await super()._read(coro)

    def _refuse_if_broken(self) -> None:
        if self._broken is not None:
            raise StoreUnavailable(self._broken)

    async def ping(self) -> bool:
        return self._broken is None and await super().ping()

    async def _op_project_game(
        self, game_id: str, expected: int, applied: int, model: bytes, lines: list[str]
    ) -> Projected:
        """The projection script's contract (``project.lua``): compare-and-set of a game's checkpoint."""
        scores, audit = self.keys.game_projection("scores", game_id), self.keys.game_projection("audit", game_id)
        current = int(self._now.hget(scores, "applied") or 0)
        if current != expected:
            return Projected(False, current)
        if self._now.llen(audit) != current:
            raise ProjectionCorrupt(f"game {game_id}: its audit list does not hold {current} lines")
        pipe = self._now.pipeline(transaction=False)
        pipe.hset(scores, mapping={"applied": applied, "model": model})
        if lines:
            pipe.rpush(audit, *lines)
        self._execute(pipe)
        return Projected(True, applied)

    async def _op_project_result(
        self, player_id: str, game_id: str, version: int, entry: bytes, counters: dict[str, int]
    ) -> Projected:
        return await self._upsert(self.keys.projection("results", player_id), game_id, version, entry, counters)

    async def _op_project_standing(self, tournament_id: str, game_id: str, version: int, entry: bytes) -> Projected:
        return await self._upsert(self.keys.tournament_projection("standings", tournament_id), game_id, version, entry, {})

    async def _op_project_rated_game(self, kind: str, game_id: str, version: int, entry: bytes) -> Projected:
        return await self._upsert(self.keys.ratings(kind), game_id, version, entry, {})

    async def _op_project_leaderboard(self, player_id: str, seq: int, scores: dict[str, float]) -> Projected:
        """The leaderboard script's contract (``LEADERBOARD_LUA``): a player's newer snapshot replaces an older one."""
        marks = self.keys.leaderboard("seq")
        stored = int(self._now.hget(marks, player_id) or 0)
        if stored >= seq:
            return Projected(False, stored)
        pipe = self._now.pipeline(transaction=False)
        pipe.hset(marks, player_id, seq)
        for board, score in scores.items():
            pipe.zadd(self.keys.leaderboard(board), {player_id: score})
        self._execute(pipe)
        return Projected(True, seq)

    async def _op_project_solitaire_game(
        self, player_id: str, game_id: str, version: int, buckets: list[str], bucket: str, started_at: int,
        finished_at: int | None, time_ms: int | None, won: bool,
    ) -> Projected:  # fmt: skip
        """The statistics script's contract (``solitaire_stats.lua``), step for step."""
        versions, latest, *sets = self._solitaire_keys(player_id, buckets)
        stored = self._now.hget(versions, game_id)
        if stored is not None and int(stored) >= version:
            return Projected(False, int(stored))
        i = 4 * buckets.index(bucket)
        started, finished, times, wins = sets[i : i + 4]
        pipe = self._now.pipeline(transaction=False)
        for name in sets:
            pipe.zrem(name, game_id)
        pipe.zadd(started, {game_id: started_at})
        if finished_at is not None:
            pipe.zadd(finished, {game_id: finished_at})
            if time_ms is not None:
                pipe.zadd(times, {game_id: time_ms})
                if won:
                    pipe.zadd(wins, {game_id: time_ms})
        pipe.zadd(latest, {game_id: started_at if finished_at is None else finished_at})
        pipe.hset(versions, game_id, version)
        self._execute(pipe)
        return Projected(True, version)

    async def _upsert(self, key: str, game_id: str, version: int, entry: bytes, counters: dict[str, int]) -> Projected:
        """The upsert script's contract (``upsert.lua``), step for step."""
        old = self._now.hget(key, f"c:{game_id}")
        pipe = self._now.pipeline(transaction=False)
        if old is not None:
            stored, *added = old.decode().split(" ")
            if int(stored) >= version:
                return Projected(False, int(stored))
            for item in added:
                field, delta = item.split("=")
                pipe.hincrby(key, field, -int(delta))
        for field, delta in counters.items():
            pipe.hincrby(key, field, delta)
        record = " ".join([str(version), *(f"{f}={d}" for f, d in counters.items())])
        pipe.hset(key, mapping={f"g:{game_id}": entry, f"c:{game_id}": record})
        pipe.hincrby(key, "seq", 1)
        self._execute(pipe)
        return Projected(True, version)


class _Trimmed(int):
    """How many entries a log trim dropped: journalled as a count (``_op_trim_log``), and only when some went."""


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A shielded write whose caller was cancelled still has its outcome looked at (none is lost unseen)."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("a write whose caller went away failed: %s", task.exception())


def _with_kind(req: AppendRequest, kinds: dict[str, str]) -> AppendRequest:
    """A journalled append as it is appended now: one written before appends named their game's kind takes it from
    the game's first append (its meta has it), so the indexes of games by kind hold the games of old journals too."""
    kind = kinds.setdefault(req.game_id, req.kind or req.meta.get("kind", ""))
    return req if req.kind or not kind else msgspec.structs.replace(req, kind=kind)


def _changed(result: Any) -> bool:
    """Whether a write op wrote anything (an append or a projection write that was refused did not)."""
    if isinstance(result, _Trimmed):
        return result > 0
    if isinstance(result, Projected):
        return result.applied
    if isinstance(result, Told):
        return result.changed
    return not isinstance(result, Appended) or result.outcome == "ok"

