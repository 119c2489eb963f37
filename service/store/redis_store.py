"""The event store on a real Redis (or Redis Cluster): appends by the checked Lua script, many games' appends in one
pipeline (group commit): the client's per-call cost, not Redis, bounds a command's latency.

On a Redis Cluster (``RedisStore.from_url(url, cluster=True)``, or ``connect`` asking the server) the client is
redis-py's ``RedisCluster``: every key of a game shares its partition's hash tag, so each script runs on the one
primary owning that slot, and a pipeline is split per primary by the client (sent to all of them at once).
"""

from __future__ import annotations

import asyncio
import inspect
from importlib import resources
from typing import Any

import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.asyncio.cluster import RedisCluster

from .buckets import RATE_GIVE_BACK_LUA, RATE_TAKE_ALL_LUA, RATE_TAKE_LUA
from .keys import PARTITIONS, STATUSES
from .pool import CONNECTIONS, WAIT_MS, WaitingPool
from . import replication
from .queue import RedisQueueOps
from .replication import Replication
from .rounds import RedisRoundsOps
from .told import RedisToldOps
from .resp import fast_packing
from .store import (
    UNAVAILABLE,
    Appended,
    AppendRequest,
    Projected,
    ProjectionCorrupt,
    Store,
    StoreUnavailable,
    append_args,
    parse_record,
    raise_first,
    unavailable,
)  # fmt: skip


def _no_maintenance_notifications() -> dict[str, Any]:
    """redis-py 8 turns "maintenance notifications" to ``auto``, and with them on its pool skips the check that
    a pooled connection is still open: after Redis restarts, every connection it had pooled fails one command
    (a 503 with Redis back up; found by tests/drills). This store never uses them (they need RESP3 push
    messages from Redis Enterprise), so they are turned off, where the client knows of them."""
    try:
        from redis.maint_notifications import MaintNotificationsConfig
    except ImportError:  # an older redis-py: no such thing, and its pool checks every connection it hands out
        return {}
    if "maint_notifications_config" not in inspect.signature(aioredis.Redis.__init__).parameters:
        return {}
    return {"maint_notifications_config": MaintNotificationsConfig(enabled=False)}


_NO_MAINTENANCE = _no_maintenance_notifications()
FEED_OPTIONS: dict[str, Any] = {"decode_responses": False, "socket_keepalive": True, "client_name": "free-parking-change-feed",
                                "max_connections": 2, **_NO_MAINTENANCE}  # fmt: skip
"""The change feed's connection (``Store._feed_client``), besides its read timeout."""

APPEND_LUA = resources.files(__package__).joinpath("append.lua").read_text()
PROJECT_LUA = resources.files(__package__).joinpath("project.lua").read_text()
UPSERT_LUA = resources.files(__package__).joinpath("upsert.lua").read_text()
SOLITAIRE_STATS_LUA = resources.files(__package__).joinpath("solitaire_stats.lua").read_text()
# a player's place on the leaderboards, from a snapshot of their results numbered ``seq``: an older snapshot than the
# one stored is refused, so two projectors racing leave the newest. KEYS: the seq hash, then each board's sorted set
# (one slot: the tag {lb}); ARGV: player, seq, then each board's score
LEADERBOARD_LUA = """
local stored = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if stored >= tonumber(ARGV[2]) then
  return {0, stored}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[i + 1], ARGV[1])
end
return {1, tonumber(ARGV[2])}
"""
# forget a game's due action (or, given ARGV[3], move it there) only if its version is still ARGV[1]: one script,
# so no append can land between the check and the write (its new due action would be lost). KEYS: meta, due (one
# slot); ARGV: version, game id, the later due time or ''. An archived game is never made due again.
CLEAR_DUE_LUA = """
local meta = redis.call('HMGET', KEYS[1], 'version', 'archived')
if meta[1] == ARGV[1] then
  if ARGV[3] ~= nil and ARGV[3] ~= '' then
    if meta[2] == '1' then
      return redis.call('ZREM', KEYS[2], ARGV[2])
    end
    return redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  end
  return redis.call('ZREM', KEYS[2], ARGV[2])
end
return 0
"""

# a finished game's events leave the store once archived (Store.forget_events). KEYS: meta, stream, commands, scores
# read model, audit read model, due, the partition's count of archived games, outbox, queue seats (Keys.forget_keys);
# ARGV: version, game id. Only if the game is finished at that version, not archived yet, its read models applied it and its players
# were told all it had for them: 1, else 0.
FORGET_EVENTS_LUA = """
local meta = redis.call('HMGET', KEYS[1], 'version', 'status', 'archived')
if meta[1] ~= ARGV[1] or meta[2] ~= 'finished' or meta[3] == '1' or redis.call('HGET', KEYS[4], 'applied') ~= ARGV[1]
   or redis.call('XLEN', KEYS[8]) > 0 then
  return 0
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[5], KEYS[8], KEYS[9])
redis.call('ZREM', KEYS[6], ARGV[2])
redis.call('HSET', KEYS[1], 'archived', '1')
redis.call('INCR', KEYS[7])
return 1
"""

def _parse_append(result: list[Any]) -> Appended:
    outcome = result[0].decode() if isinstance(result[0], bytes) else result[0]
    detail = result[1].decode() if isinstance(result[1], bytes) else result[1]
    if outcome in ("duplicate", "command_id_reused"):
        rec = parse_record(detail)
        return Appended(outcome, rec.last, rec.first, rec.last)
    if outcome == "conflict":
        return Appended("conflict", int(detail))
    if outcome == "claimed":
        return Appended("claimed", 0, holder=detail)
    return Appended("ok", int(detail), int(result[2]), int(detail))


class RedisStore(RedisToldOps, RedisQueueOps, RedisRoundsOps, Store):
    """A real Redis (or Cluster): appends by the Lua script, many games' appends in one pipeline."""

    name = "redis"

    def __init__(
        self, client: Any, namespace: str = "fp", *, waitaof: bool = False, replicas: int = 0, replica_wait_ms: int = 1000,
    ) -> None:  # fmt: skip
        super().__init__(client, namespace)
        self._script = client.register_script(APPEND_LUA)
        self._project = client.register_script(PROJECT_LUA)
        self._upsert = client.register_script(UPSERT_LUA)
        self._solitaire_stats = client.register_script(SOLITAIRE_STATS_LUA)
        self._clear_due = client.register_script(CLEAR_DUE_LUA)
        self._forget_events = client.register_script(FORGET_EVENTS_LUA)
        self._leaderboard = client.register_script(LEADERBOARD_LUA)
        self._rate_take = client.register_script(RATE_TAKE_LUA)
        self._rate_give_back = client.register_script(RATE_GIVE_BACK_LUA)
        self._rate_take_all = client.register_script(RATE_TAKE_ALL_LUA)
        self._queue: list[tuple[AppendRequest, asyncio.Future[Appended]]] = []
        self._flushing = False
        self._flusher: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference to a task
        self.waitaof = waitaof
        self.replication: Replication | None = Replication(replicas, replica_wait_ms) if replicas else None

    @classmethod
    def from_url(
        cls, url: str, namespace: str = "fp", *, cluster: bool = False, connections: int = CONNECTIONS, wait_ms: int = WAIT_MS,
        **kw: Any,
    ) -> RedisStore:  # fmt: skip
        """A store on the Redis at ``url``; with ``cluster``, on the Redis Cluster that node belongs to. A single server
        is reached through ``connections`` pooled connections, for which a request waits up to ``wait_ms`` (``pool.py``);
        redis-py's cluster client keeps its own pool per node, unbounded (it has no waiting pool)."""
        if cluster:
            client: Any = RedisCluster.from_url(url, decode_responses=False, health_check_interval=10)
        else:
            pool = WaitingPool.from_url(url, decode_responses=False, health_check_interval=10, max_connections=connections,
                                        timeout=wait_ms / 1000, **_NO_MAINTENANCE)  # fmt: skip
            client = fast_packing(aioredis.Redis.from_pool(pool))
        store = cls(client, namespace, **kw)
        if not cluster:
            store.feed_open = lambda timeout: aioredis.Redis.from_url(url, socket_timeout=timeout, **FEED_OPTIONS)
        return store

    @classmethod
    async def connect(cls, url: str, namespace: str = "fp", *, cluster: bool | None = None, **kw: Any) -> RedisStore:
        """``from_url``; with ``cluster=None`` the server is asked (``INFO cluster``) whether it is a cluster node."""
        if cluster is None:
            cluster = await is_cluster_node(url)
        return cls.from_url(url, namespace, cluster=cluster, **kw)

    async def index_kinds(self) -> int:
        """Put every game into its kind's indexes (``Keys.index(p, status, kind)``), once per namespace: games
        appended before appends kept those indexes are in the status indexes only. Idempotent (a marker key says it
        was done; a second worker doing it at once adds the same entries); answers how many games it indexed."""
        marker = f"{self.keys.ns}:migrated:kind-index"
        if await self._read(self.r.exists(marker)):
            return 0
        done = 0
        for p in range(PARTITIONS):
            for status in STATUSES:
                rows = await self._read(self.r.zrange(self.keys.index(p, status), 0, -1, withscores=True))
                if not rows:
                    continue
                pipe = self.r.pipeline(transaction=False)
                for game_id, _ in rows:
                    pipe.hget(self.keys.meta(game_id.decode()), "kind")
                kinds = await self._read(pipe.execute())
                pipe = self.r.pipeline(transaction=False)
                for (game_id, created), kind in zip(rows, kinds, strict=True):
                    if kind:
                        pipe.zadd(self.keys.index(p, status, kind.decode()), {game_id: created})
                        done += 1
                await self._read(pipe.execute())
        await self._read(self.r.set(marker, "1"))
        return done

    async def _op_project_game(
        self, game_id: str, expected: int, applied: int, model: bytes, lines: list[str]
    ) -> Projected:
        keys = [self.keys.game_projection("scores", game_id), self.keys.game_projection("audit", game_id)]
        ok, version = await self._project(keys=keys, args=[expected, applied, model, *lines])
        if ok < 0:
            raise ProjectionCorrupt(f"game {game_id}: its audit list does not hold {version} lines")
        return Projected(ok == 1, int(version))

    async def project_games(self, items: list[tuple[str, int, int, bytes, list[str]]]) -> list[Projected | Exception]:
        if len(items) <= 1:
            return await super().project_games(items)
        return await self._write("project_games", items)

    async def _op_project_games(self, items: list[tuple[str, int, int, bytes, list[str]]]) -> list[Projected | Exception]:
        """Every game's compare-and-set script in one pipeline; one the server has forgotten (NOSCRIPT) runs again alone."""
        pipe = self.r.pipeline(transaction=False)
        for game_id, expected, applied, model, lines in items:
            keys = [self.keys.game_projection("scores", game_id), self.keys.game_projection("audit", game_id)]
            pipe.execute_command("EVALSHA", self._project.sha, len(keys), *keys, expected, applied, model, *lines)
        replies = await pipe.execute(raise_on_error=False)
        out: list[Projected | Exception] = []
        for item, reply in zip(items, replies, strict=True):
            if isinstance(reply, rex.NoScriptError):
                try:
                    out.append(await self._op_project_game(*item))
                except ProjectionCorrupt as e:
                    out.append(e)
            elif isinstance(reply, Exception) and unavailable(reply):
                raise StoreUnavailable(str(reply)) from reply
            elif isinstance(reply, Exception):
                out.append(reply)
            elif int(reply[0]) < 0:
                out.append(ProjectionCorrupt(f"game {item[0]}: its audit list does not hold {reply[1]} lines"))
            else:
                out.append(Projected(int(reply[0]) == 1, int(reply[1])))
        return out

    async def _op_project_result(
        self, player_id: str, game_id: str, version: int, entry: bytes, counters: dict[str, int]
    ) -> Projected:
        flat: list[Any] = [x for kv in counters.items() for x in kv]
        key = self.keys.projection("results", player_id)
        done, stored = await self._outside(self._upsert, [key], [game_id, version, entry, len(counters), *flat])
        return Projected(done == 1, int(stored))

    async def _op_project_solitaire_game(
        self, player_id: str, game_id: str, version: int, buckets: list[str], bucket: str, started_at: int,
        finished_at: int | None, time_ms: int | None, won: bool,
    ) -> Projected:  # fmt: skip
        keys = self._solitaire_keys(player_id, buckets)
        ends = ["" if finished_at is None else finished_at, "" if time_ms is None else time_ms]
        args = [game_id, version, buckets.index(bucket), started_at, *ends, int(won)]
        done, stored = await self._outside(self._solitaire_stats, keys, args)
        return Projected(done == 1, int(stored))

    async def _op_project_leaderboard(self, player_id: str, seq: int, scores: dict[str, float]) -> Projected:
        keys = [self.keys.leaderboard("seq"), *(self.keys.leaderboard(board) for board in scores)]
        done, stored = await self._outside(self._leaderboard, keys, [player_id, seq, *scores.values()])
        return Projected(done == 1, int(stored))

    async def _op_project_standing(self, tournament_id: str, game_id: str, version: int, entry: bytes) -> Projected:
        key = self.keys.tournament_projection("standings", tournament_id)
        done, stored = await self._outside(self._upsert, [key], [game_id, version, entry, 0])
        return Projected(done == 1, int(stored))

    async def _op_project_rated_game(self, kind: str, game_id: str, version: int, entry: bytes) -> Projected:
        done, stored = await self._outside(self._upsert, [self.keys.ratings(kind)], [game_id, version, entry, 0])
        return Projected(done == 1, int(stored))

    async def _outside(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """A read model outside the game's slot (results, leaderboard, ratings, solitaire statistics, standings), written
        before the game's checkpoint moves. On a cluster it lives on another primary than the checkpoint: under
        ``--durability replicated`` it is answered only once that primary's replicas have it — else a failover there
        takes it back while the checkpoint (replicated on its own primary) has moved past it, and nothing writes it
        again. On one server the checkpoint is written after it, so a failover that loses it loses the checkpoint too."""
        if self.replication is None or not self.cluster:
            return await script(keys=keys, args=args)
        pipe = self.r.pipeline(transaction=False)
        pipe.execute_command("EVAL", script.script, len(keys), *keys, *args)
        results = await self._execute(pipe, keys)
        raise_first(results)
        return results[0]

    async def _op_clear_due(self, game_id: str, version: int, later: int | None = None) -> None:
        keys = [self.keys.meta(game_id), self.keys.due(self._partition(game_id))]
        await self._clear_due(keys=keys, args=[version, game_id, "" if later is None else later])

    async def _op_forget_events(self, game_id: str, version: int) -> Projected:
        return Projected(bool(await self._forget_events(keys=self.keys.forget_keys(game_id), args=[version, game_id])), version)

    async def rate_take(self, bucket: str, now: int, interval_ms: int, burst: int) -> int:
        return int(await self._read(self._rate_take(keys=[self.keys.bucket(bucket)], args=[now, interval_ms, burst])))

    async def rate_give_back(self, bucket: str, now: int, interval_ms: int) -> None:
        await self._read(self._rate_give_back(keys=[self.keys.bucket(bucket)], args=[now, interval_ms]))

    async def rate_take_all(self, takes: list[tuple[str, int, int]], now: int) -> tuple[int, int]:
        """One script call, whatever the number of buckets; on a Redis Cluster with more than one bucket (in slots of
        their own) each in turn, as ``Store.rate_take_all``."""
        if len(takes) > 1 and isinstance(self.r, RedisCluster):
            return await super().rate_take_all(takes, now)
        keys = [self.keys.bucket(bucket) for bucket, _, _ in takes]
        index, wait = await self._read(self._rate_take_all(keys=keys, args=[now, *(x for _, i, b in takes for x in (i, b))]))
        return int(index), int(wait)

    async def _op_put_token(self, digest: str, record: bytes) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.token(digest)
        pipe.set(key, record, nx=True)  # written once: readers may cache it
        raise_first(await self._execute(pipe, [key]))  # a token is acknowledged like an event: durably

    async def _op_claim_seats(self, tournament_id: str, seats: dict[str, str]) -> None:
        if not seats:
            return
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.tournament_seats(tournament_id)
        pipe.hset(key, mapping=seats)
        raise_first(await self._execute(pipe, [key]))  # acknowledged like an event: durably, where asked

    async def _op_put_player(self, player_id: str, fields: dict[str, str]) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.player(player_id)
        pipe.hset(key, mapping=fields)
        raise_first(await self._execute(pipe, [key]))

    async def _op_put_listing_head(self, entries: int, head: str) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.listing_head()
        pipe.set(key, f"{entries}:{head}")
        raise_first(await self._execute(pipe, [key]))  # acknowledged like an event: durably, where asked

    async def _op_put_tournament(self, tournament_id: str, record: bytes) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.tournament(tournament_id)
        pipe.set(key, record, nx=True)
        raise_first(await self._execute(pipe, [key]))  # acknowledged like an event: durably, where asked

    async def _execute(self, pipe: Any, written: list[str]) -> list[Any]:
        """Run ``pipe`` (errors returned in place), answering only once its writes are as safe as asked: fsynced
        (``waitaof``), on the replicas (``replication``). See ``replication.py``."""
        return await replication.execute(self, pipe, written)

    async def _op_append(self, req: AppendRequest) -> Appended:
        future: asyncio.Future[Appended] = asyncio.get_running_loop().create_future()
        self._queue.append((req, future))
        if not self._flushing:
            self._flushing = True
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        """Send every queued append in one pipeline; keep going while more arrive."""
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    results = await self._run(batch)
                except Exception as e:  # noqa: BLE001 - every waiting append must hear of it, whatever it was
                    if unavailable(e):
                        e = StoreUnavailable(str(e))
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(e)
                    continue
                for (req, fut), res in zip(batch, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, Exception):
                        fut.set_exception(StoreUnavailable(str(res)) if unavailable(res) else res)
                        continue
                    appended = _parse_append(res)
                    if self.replication is not None and appended.outcome in ("ok", "duplicate"):
                        self.replication.seen(req.game_id, appended.last)  # waited for: a read of it needs no barrier
                    fut.set_result(appended)
        finally:
            self._flushing = False

    async def _run(self, batch: list[tuple[AppendRequest, asyncio.Future[Appended]]]) -> list[Any]:
        reqs = [req for req, _ in batch]
        results = await self._send(reqs)
        missing = [i for i, r in enumerate(results) if isinstance(r, rex.NoScriptError)]
        if missing:
            # The server (or one node of a cluster) restarted and forgot the script. Only those appends did
            # not run; the others did, and must not run again (the retry would answer them 'conflict').
            # On a cluster, SCRIPT LOAD goes to every primary.
            await self.r.script_load(APPEND_LUA)
            for i, res in zip(missing, await self._send([reqs[i] for i in missing]), strict=True):
                results[i] = res
        return results

    async def _send(self, reqs: list[AppendRequest]) -> list[Any]:
        pipe = self.r.pipeline(transaction=False)
        written = []
        for req in reqs:
            keys, argv = append_args(self.keys, req)
            # EVALSHA by name: redis-py's cluster pipeline has no ``evalsha`` method, but routes the command by
            # its keys (all in the game's slot)
            pipe.execute_command("EVALSHA", self._script.sha, len(keys), *keys, *argv)
            written.append(keys[0])
        return await self._execute(pipe, written)


async def is_cluster_node(url: str) -> bool:
    """Whether the Redis at ``url`` runs in cluster mode (``INFO cluster``: ``cluster_enabled:1``).

    A server that refuses INFO is taken as a single server (set the cluster mode explicitly then).
    """
    client = aioredis.from_url(url, decode_responses=False)
    try:
        info = await client.info("cluster")
    except UNAVAILABLE as e:
        raise StoreUnavailable(str(e)) from e
    except rex.ResponseError:
        return False
    finally:
        await client.aclose()
    return str(info.get("cluster_enabled", "0")) == "1"
