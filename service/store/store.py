"""The event store on Redis Streams: one stream per game, appended only through one checked script.

Reads are plain Redis calls shared by both stores; writes go through ``_write(op, *args)`` so the
embedded store (``embedded.py``) can journal each one, and a real Redis (``redis_store.py``) can run each as its
script. What a store is asked and answers is ``contract.py``; the entries' own format is ``entries.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis import exceptions as rex
from redis.asyncio.cluster import RedisCluster

from .archive import Archive, ArchiveDamaged, ArchiveError
from .contract import (  # the store's vocabulary, imported from here by most of its users
    REFUSING,
    SOLITAIRE_SETS,
    UNAVAILABLE,
    Appended,
    AppendRequest,
    CommandRecord,
    NotDurable,
    NotReplicated,
    Projected,
    ProjectionCorrupt,
    StoreBusy,
    StoreUnavailable,
    append_args,
    command_digest,
    parse_record,
    raise_first,
    unavailable,
)
from service.events.entries import envelopes_after, xrange_bounds
from service.events.envelope import Envelope
from .keys import PARTITIONS, STATUSES, Keys, partition
from .queue import QueueOps
from .rounds import RoundsOps
from .projection_writes import ProjectionWrites
from .told import ToldOps

FEED_READ_MARGIN_S = 30.0
"""How much longer than its block the change feed's read may take before the feed calls the store lost: a busy host or
event loop delays the answer, it does not lose it."""

__all__ = [
    "REFUSING", "SOLITAIRE_SETS", "UNAVAILABLE", "AppendRequest", "Appended", "CommandRecord", "NotDurable", "NotReplicated", "Projected",
    "ProjectionCorrupt", "Store", "StoreBusy", "StoreUnavailable", "append_args", "command_digest", "parse_record",
    "unavailable",
]


class Store(ProjectionWrites, ToldOps, QueueOps, RoundsOps):
    """Reads shared by both stores; subclasses say how a write is carried out."""

    name: str = "redis"

    def __init__(self, client: Any, namespace: str = "fp") -> None:
        self.r = client
        self.keys = Keys(namespace)
        self._tokens: dict[str, bytes] = {}
        self._feed: Any = None  # the change feed's own connection (``_feed_client``), made at its first read
        # opens the change feed's own connection, given its read timeout (``RedisStore.from_url``, ``sentinel.py``)
        self.feed_open: Callable[[float], Any] | None = None
        self.replication: Any = None  # ``replication.Replication`` under --durability replicated: reads wait for it
        self.also_close: list[Any] = []  # what the store's client depends on (a Sentinel's connections)
        self.archive: Archive | None = None  # where finished games' events go (service/store/archive.py); reads follow

    @property
    def cluster(self) -> bool:
        """Whether the store is a Redis Cluster (then ``r`` is redis-py's ``RedisCluster``)."""
        return isinstance(self.r, RedisCluster)

    # --- writes -------------------------------------------------------------------------------

    async def _write(self, op: str, *args: Any) -> Any:
        return await Store._read(self, getattr(self, f"_op_{op}")(*args))

    async def append(self, req: AppendRequest) -> Appended:
        return await self._write("append", req)

    async def trim_logs_below(self, below: dict[int, str]) -> int:
        """Drop each partition log's entries below the entry id given for it (``logtrim.py`` says which are let go);
        how many went. One round trip."""
        pipe = self.r.pipeline(transaction=False)
        for p, min_id in below.items():
            pipe.xtrim(self.keys.log(p), minid=min_id, approximate=False)
        return sum(await self._read(pipe.execute()))

    async def put_token(self, digest: str, record: bytes) -> None:
        """Record a new token. A token is written once and never changes (a second write is ignored)."""
        await self._write("put_token", digest, record)

    async def put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self._write("put_player", player_id, fields)

    async def put_tournament(self, tournament_id: str, record: bytes) -> None:
        """Record a new tournament (``ns:tournament:{pN}:<id>``, in its partition). Written once, like a token."""
        await self._write("put_tournament", tournament_id, record)

    async def claim_seats(self, tournament_id: str, seats: dict[str, str]) -> None:
        """Record the tables a tournament's reserved players sit at (player id -> game id), before the tables exist: a
        table's seat append then refuses a player who holds a claim at another table (``AppendRequest.claim``)."""
        await self._write("claim_seats", tournament_id, seats)

    async def forget_events(self, game_id: str, version: int) -> bool:
        """Remove a finished game's events, command ids, audit lines and due entry from the store — its metadata
        and index entries stay, so the lobby lists it — once it is archived: only if the game is still finished at
        ``version``, not removed before (the partition's count of archived games counts it once) and its read models
        have applied that version (so nothing is left to project). Whether it did."""
        return (await self._write("forget_events", game_id, version)).applied

    async def clear_due(self, game_id: str, version: int, later: int | None = None) -> None:
        """Forget a game's due server action, unless the game moved on since ``version``; with ``later``, move it to
        ``later`` instead (the game still needs the server then: to close it, nobody moving) — unless it is archived:
        a runner that looked at it before another worker archived it must not give it a due entry again, and a stale
        one it was told of goes (two runners at one stale entry: the one told ``leased`` must not leave it behind)."""
        await self._write("clear_due", game_id, version, *(() if later is None else (later,)))

    async def put_listing_head(self, entries: int, head: str) -> None:
        """Record that the service serves the key listing's chain of ``entries`` entries ending at ``head``."""
        await self._write("put_listing_head", entries, head)

    async def listing_head(self) -> tuple[int, str] | None:
        """The key listing's head recorded last (its number of entries, its hash), or ``None`` before the first."""
        raw = await self._read(self.r.get(self.keys.listing_head()))
        if raw is None:
            return None
        entries, _, head = raw.decode().partition(":")
        return int(entries), head

    # --- rate limits: buckets kept outside the journal (a restart forgets them, which costs nothing) ---

    async def rate_take(self, bucket: str, now: int, interval_ms: int, burst: int) -> int:
        """Take one token from ``bucket`` (GCRA: ``burst`` at once, then one every ``interval_ms``): 0 when taken,
        else the milliseconds until one is there. A bucket is one key whose TTL runs out when it is full again, so
        an idle one vanishes. Each store makes it atomic its own way (``redis_store.py``: a script; ``embedded.py``:
        under a lock of its own), never through ``_write``: limits need no journal."""
        raise NotImplementedError

    async def rate_give_back(self, bucket: str, now: int, interval_ms: int) -> None:
        """Put back a token taken from ``bucket`` for a request that another bucket then refused."""
        raise NotImplementedError

    async def rate_take_all(self, takes: list[tuple[str, int, int]], now: int) -> tuple[int, int]:
        """A token from each of ``takes`` (bucket, interval_ms, burst), or from none: ``(-1, 0)`` when every one was
        taken, else the index of the first bucket that had none and its wait in ms. The stores do it in one step
        (one script on Redis: a command's limit is one round trip); this, each bucket in turn with what was taken given
        back, is a Redis Cluster's way for buckets in different slots, which no one script may touch."""
        for i, (bucket, interval_ms, burst) in enumerate(takes):
            wait = await self.rate_take(bucket, now, interval_ms, burst)
            if wait:
                for back, back_interval, _ in takes[:i]:
                    await self.rate_give_back(back, now, back_interval)
                return i, wait
        return -1, 0

    async def _op_claim_seats(self, tournament_id: str, seats: dict[str, str]) -> None:
        if seats:
            await self.r.hset(self.keys.tournament_seats(tournament_id), mapping=seats)

    async def _op_put_token(self, digest: str, record: bytes) -> None:
        await self.r.set(self.keys.token(digest), record, nx=True)  # written once: readers may cache it

    async def _op_put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self.r.hset(self.keys.player(player_id), mapping=fields)

    async def _op_put_listing_head(self, entries: int, head: str) -> None:
        await self.r.set(self.keys.listing_head(), f"{entries}:{head}")

    async def _op_put_tournament(self, tournament_id: str, record: bytes) -> None:
        await self.r.set(self.keys.tournament(tournament_id), record, nx=True)

    async def _op_forget_events(self, game_id: str, version: int) -> Projected:
        meta = await self.r.hmget(self.keys.meta(game_id), "version", "status", "archived")
        applied = await self.r.hget(self.keys.game_projection("scores", game_id), "applied")
        untold = await self.r.xlen(self.keys.outbox(game_id))
        if meta != [str(version).encode(), b"finished", None] or applied != str(version).encode() or untold:
            return Projected(False, int(meta[0] or 0))
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(self.keys.stream(game_id), self.keys.commands(game_id), self.keys.game_projection("audit", game_id),
                    self.keys.outbox(game_id), self.keys.queue_seats(game_id))
        pipe.zrem(self.keys.due(self._partition(game_id)), game_id)
        pipe.hset(self.keys.meta(game_id), "archived", "1")
        pipe.incr(self.keys.archived(self._partition(game_id)))
        await pipe.execute()
        return Projected(True, version)

    # --- reads --------------------------------------------------------------------------------

    async def _read(self, coro: Any) -> Any:
        """``coro``'s answer; a store that cannot be reached is ``StoreUnavailable`` (writes go through here too)."""
        try:
            return await coro
        except (*UNAVAILABLE, rex.ResponseError, rex.RedisClusterException) as e:
            if unavailable(e):
                raise StoreUnavailable(str(e)) from e
            raise

    async def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[Envelope]:
        """Envelopes with seq > ``after``, in order (at most ``count``). The entry at ``after`` is read too, for
        the hash the next one chains to."""
        start, extra = xrange_bounds(after, count)
        rows = await self._read(self.r.xrange(self.keys.stream(game_id), start, "+", count=extra))
        if not rows:
            return await self._archived(game_id, after, count)
        envelopes = envelopes_after(game_id, after, rows)
        if self.replication is not None and envelopes:
            await self.replication.cover(self, [(game_id, envelopes[-1].seq)])  # shown only once on the replicas
        return envelopes

    async def read_many(self, wanted: list[tuple[str, int, int | None]]) -> list[list[Envelope]]:
        """``read(game_id, after, count)`` of each game in ``wanted``, in one round trip (one pipeline): what a
        projector pass or a burst of concurrent views asks for costs one client call, not one per game."""
        if not wanted:
            return []
        pipe = self.r.pipeline(transaction=False)
        for game_id, after, count in wanted:
            start, extra = xrange_bounds(after, count)
            pipe.xrange(self.keys.stream(game_id), start, "+", count=extra)
        replies = await self._read(pipe.execute())
        out = [envelopes_after(g, after, rows) if rows else await self._archived(g, after, count)
               for (g, after, count), rows in zip(wanted, replies, strict=True)]
        if self.replication is not None:
            await self.replication.cover(self, [(g, got[-1].seq) for (g, _, _), got, rows in zip(wanted, out, replies, strict=True)
                                                if got and rows])  # fmt: skip
        return out

    async def _archived(self, game_id: str, after: int, count: int | None) -> list[Envelope]:
        """A read the stream had no entry for — not even the one at ``after``, which a live game's read past its end
        always finds: the game is archived, or there is no such game (``[]``). An archived game's envelopes after
        ``after`` come from the archive — read in a thread, off the event loop — and must be the game the store's
        metadata names (its version and head): a missing file is ``ArchiveError`` and another game's ``ArchiveDamaged``,
        never an empty or a wrong game."""
        meta = await self.meta(game_id)
        if meta is None or meta.get("archived") != "1":
            return []
        if self.archive is None:
            raise ArchiveError(f"the game {game_id} is archived, and no archive is set")
        found = self.archive.cached(game_id) or await asyncio.to_thread(self.archive.read, game_id)
        if found is None:
            raise ArchiveError(f"the archived game {game_id} is not in the archive {self.archive.root}")
        header, envelopes = found
        if (header.version, header.head) != (int(meta["version"]), meta.get("head")):
            raise ArchiveDamaged(f"the archived file of {game_id} ends at version {header.version}, head {header.head[:12]}; "
                                 f"the store's record at version {meta['version']}, head {meta.get('head', '')[:12]}")
        envelopes = envelopes[max(after, 0):]
        return envelopes if count is None else envelopes[:count]

    async def meta(self, game_id: str) -> dict[str, str] | None:
        return (await self.metas([game_id]))[0]

    async def command_record(self, game_id: str, key: str) -> CommandRecord | None:
        raw = await self._read(self.r.hget(self.keys.commands(game_id), key))
        return parse_record(raw) if raw is not None else None

    async def token(self, digest: str) -> bytes | None:
        """A token's record. Records never change once written, so each one read is kept (a bounded cache)."""
        known = self._tokens.get(digest)
        if known is None:
            known = await self._read(self.r.get(self.keys.token(digest)))
            if known is not None:
                if len(self._tokens) >= 50_000:
                    self._tokens.pop(next(iter(self._tokens)))
                self._tokens[digest] = known
        return known

    async def tournament(self, tournament_id: str) -> bytes | None:
        return await self._read(self.r.get(self.keys.tournament(tournament_id)))

    async def player(self, player_id: str) -> dict[str, str] | None:
        raw = await self._read(self.r.hgetall(self.keys.player(player_id)))
        return {k.decode(): v.decode() for k, v in raw.items()} if raw else None

    async def list_games(self, status: str | None, limit: int, kind: str = "") -> list[str]:
        """Game ids, newest first, of one status or all (of one kind, given ``kind``): the first ``limit`` of each
        partition's index, in one round trip, so a page costs what its ``limit`` says."""
        statuses = [status] if status else list(STATUSES)
        pipe = self.r.pipeline(transaction=False)
        for p in range(PARTITIONS):
            for s in statuses:
                pipe.zrevrange(self.keys.index(p, s, kind), 0, limit - 1, withscores=True)
        rows = [(score, gid.decode()) for got in await self._read(pipe.execute()) for gid, score in got]
        rows.sort(reverse=True)
        return [gid for _, gid in rows[:limit]]

    async def metas(self, game_ids: list[str]) -> list[dict[str, str] | None]:
        """``meta`` of each game, in one round trip; under ``--durability replicated`` once the replicas have the events
        it speaks of (the lobby's status, a tournament's tables): a failover must not take back what a listing showed."""
        if not game_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(self.keys.meta(game_id))
        replies = await self._read(pipe.execute())
        metas = [{k.decode(): v.decode() for k, v in raw.items()} if raw else None for raw in replies]
        if self.replication is not None:  # the append script writes a game's status, seats and version with its events:
            await self.replication.cover(self, [(g, int(m.get("version") or 0))  # shown, as they are, once replicated
                                                for g, m in zip(game_ids, metas, strict=True) if m])  # fmt: skip
        return metas

    async def log_heads(self) -> dict[int, bytes]:
        """The newest entry of each partition log (``0-0`` where one is empty): where a reader of appends starts."""
        pipe = self.r.pipeline(transaction=False)
        for p in range(PARTITIONS):
            pipe.xrevrange(self.keys.log(p), "+", "-", count=1)
        replies = await self._read(pipe.execute())
        return {p: rows[0][0] if rows else b"0-0" for p, rows in enumerate(replies)}

    async def appended_since(self, heads: dict[int, bytes], block_ms: int) -> list[tuple[int, bytes, str]]:
        """The partition logs' entries after ``heads``: ``(partition, entry id, game id)`` of every append since, in
        one command on a single server, which waits up to ``block_ms`` for the first; on a cluster the logs live in
        different slots, so each is read apart, in one pipeline, without waiting."""
        if self.cluster:  # XRANGE, not XREAD: redis-py's cluster client asks the server (COMMAND GETKEYS) where an
            pipe = self.r.pipeline(transaction=False)  # XREAD goes, every time — twice the commands of an idle feed
            for p, head in heads.items():
                pipe.xrange(self.keys.log(p), b"(" + head, "+", count=1000)
            replies = [(self.keys.log(p).encode(), rows) for p, rows in zip(heads, await self._read(pipe.execute()))
                       if rows]  # fmt: skip
        else:
            streams = {self.keys.log(p): head for p, head in heads.items()}
            replies = await self._read(self._feed_client(block_ms).xread(streams, count=1000, block=block_ms)) or []
        partition_of = {self.keys.log(p).encode(): p for p in heads}
        return [(partition_of[key], entry, fields[b"game"].decode()) for key, rows in replies for entry, fields in rows]

    def _feed_client(self, block_ms: int) -> Any:
        """The connection the change feed blocks on: its own, not the pool's, and with a read timeout set to outlast the
        block by ``FEED_READ_MARGIN_S``. On a pooled connection redis-py's default read timeout (5 s) cut the read
        whenever the worker's event loop or the host was busy for 5 s less the block: the feed paused, and every
        watched game fell back to polling. A dead server is still found: the socket's keepalive and the next read fail.
        A store not opened from a URL (fakeredis, a client handed in) reads on its own client. Through a Sentinel the
        connection is made to the primary it names, at each connect: after a failover the next read finds the new one."""
        if self._feed is None:
            if self.feed_open is None:
                return self.r
            self._feed = self.feed_open(block_ms / 1000 + FEED_READ_MARGIN_S)
        return self._feed

    async def due_games(self, now: int, limit: int = 100) -> list[tuple[str, int]]:
        """Games whose server action (a deadline, a bot's move) is due at ``now``: ``(game_id, due_at)``."""
        out: list[tuple[str, int]] = []
        for p in range(PARTITIONS):
            got = await self._read(self.r.zrangebyscore(self.keys.due(p), 0, now, start=0, num=limit, withscores=True))
            out += [(gid.decode(), int(score)) for gid, score in got]
        out.sort(key=lambda row: (row[1], row[0]))  # the soonest first, across partitions
        return out[:limit]

    async def ping(self) -> bool:
        """Whether the store answers: on a cluster, every primary."""
        try:
            if isinstance(self.r, RedisCluster):
                return bool(await self.r.ping(target_nodes=RedisCluster.PRIMARIES))
            return bool(await self.r.ping())
        except UNAVAILABLE:
            return False
        except rex.RedisClusterException as e:
            if unavailable(e):  # no node of the cluster could be reached to learn its layout
                return False
            raise

    async def close(self) -> None:
        if self._feed is not None:
            feed, self._feed = self._feed, None
            await feed.aclose()
        await self.r.aclose()
        for other in self.also_close:
            await other.aclose()

    @staticmethod
    def _partition(game_id: str) -> int:
        return partition(game_id)

