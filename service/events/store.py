"""The event store on Redis Streams: one stream per game, appended only through one checked script.

Reads are plain Redis calls shared by both stores; writes go through ``_write(op, *args)`` so the
embedded store can journal each one. ``RedisStore`` sends concurrent appends of different games in
one pipeline (group commit): the client's per-call cost, not Redis, bounds a command's latency.

On a Redis Cluster (``RedisStore.from_url(url, cluster=True)``, or ``connect`` asking the server) the client is
redis-py's ``RedisCluster``: every key of a game shares its partition's hash tag, so each script runs on the one
primary owning that slot, and a pipeline is split per primary by the client (sent to all of them at once).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from importlib import resources
from typing import Any, Literal

import msgspec
import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.asyncio.cluster import RedisCluster

from .envelope import GENESIS, NULL, Envelope, canonical_actor, has_secret
from .keys import PARTITIONS, STATUSES, Keys, partition
from .resp import fast_packing

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

APPEND_LUA = resources.files(__package__).joinpath("append.lua").read_text()
PROJECT_LUA = resources.files(__package__).joinpath("project.lua").read_text()
UPSERT_LUA = resources.files(__package__).joinpath("upsert.lua").read_text()
# forget a game's due action only if its version is still ARGV[1]: one script, so no append can land between
# the check and the ZREM (its new due action would be lost). KEYS: meta, due (one slot); ARGV: version, game id
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
CLEAR_DUE_LUA = """
if redis.call('HGET', KEYS[1], 'version') == ARGV[1] then
  return redis.call('ZREM', KEYS[2], ARGV[2])
end
return 0
"""


UNAVAILABLE: tuple[type[BaseException], ...] = (
    rex.ConnectionError,
    rex.TimeoutError,
    OSError,
    rex.ClusterDownError,  # a cluster without a quorum, or a slot's primary failing over
    rex.SlotNotCoveredError,
)
"""What says the store cannot be reached right now (as opposed to a refused or malformed command)."""


def unavailable(e: BaseException) -> bool:
    """Whether ``e`` says the store cannot be reached: one of ``UNAVAILABLE``, or a cluster client that could reach
    none of the nodes it knows (a ``RedisClusterException`` raised from a connection error)."""
    if isinstance(e, UNAVAILABLE):
        return True
    return isinstance(e, rex.RedisClusterException) and isinstance(e.__cause__, UNAVAILABLE)


class StoreUnavailable(Exception):
    """The store cannot be reached; nothing was written (or the write's outcome is unknown and was not acknowledged)."""


class NotDurable(Exception):
    """The server could lose an acknowledged event under the durability the service was asked for."""


Outcome = Literal["ok", "duplicate", "command_id_reused", "conflict"]


class AppendRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One command's batch, with everything the append script checks and writes."""

    game_id: str
    expected_version: int
    entries: list[bytes]
    head: str
    status: str
    created_at: int
    due_at: int | None = None
    command_key: str = ""
    command_digest: str = ""
    meta: dict[str, str] = {}

    def __post_init__(self) -> None:
        # checked before anything is written: the script would otherwise fail midway (status) or
        # record a pointer to an empty range and a head nothing hashes to (no entries)
        if not self.entries:
            raise ValueError(f"an append to {self.game_id} needs at least one entry")
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; one of {', '.join(STATUSES)}")


class Appended(msgspec.Struct, frozen=True):
    outcome: Outcome
    version: int
    first: int = 0
    last: int = 0


class Projected(msgspec.Struct, frozen=True):
    """What a projection write did: ``applied`` (or refused: the checkpoint had moved / the item was already there)
    and the checkpoint (or item version) now stored."""

    applied: bool
    version: int


class ProjectionCorrupt(Exception):
    """A game's audit list does not hold one line per applied event: something other than a projector wrote it."""


class CommandRecord(msgspec.Struct, frozen=True):
    digest: str
    first: int
    last: int


def command_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class StoredEvent(msgspec.Struct, array_like=True, frozen=True):
    """An envelope as a stream entry holds it: msgpack, without what the entry's place already says.

    The game id is the stream's key, the seq its entry ID, the previous hash the previous entry's hash;
    hashes are 32 raw bytes, not 64 hex digits. Less than half the bytes of the JSON envelope, which is
    what a server holding many live games pays for. ``public``, ``command`` and ``secret`` are the exact
    canonical bytes the hash and digest were computed over.
    """

    type: str
    public: bytes
    at: int
    actor: str
    hash: bytes
    command_id: str | None = None
    command: bytes | None = None
    secret_digest: bytes | None = None
    secret: bytes | None = None


_stored = msgspec.msgpack.Encoder()
_stored_event = msgspec.msgpack.Decoder(StoredEvent)


def encode_entry(env: Envelope) -> bytes:
    return _stored.encode(
        StoredEvent(
            type=env.type,
            public=bytes(env.public),
            at=env.at,
            actor=env.actor,
            hash=bytes.fromhex(env.hash),
            command_id=env.command_id,
            command=None if env.command == NULL else bytes(env.command),
            secret_digest=bytes.fromhex(env.secret_digest) if env.secret_digest else None,
            secret=bytes(env.secret) if has_secret(env) else None,
        )
    )


def decode_entries(game_id: str, rows: list[tuple[bytes, dict[bytes, bytes]]], prev_hash: str) -> list[Envelope]:
    """Envelopes from stream rows; ``prev_hash`` is the hash of the entry before the first row."""
    out = []
    for entry_id, fields in rows:
        e = _stored_event.decode(fields[b"e"])
        digest = e.secret_digest.hex() if e.secret_digest is not None else None
        env = Envelope(
            game_id=game_id,
            seq=int(entry_id.split(b"-", 1)[0]),
            type=e.type,
            public=msgspec.Raw(e.public),
            at=e.at,
            prev_hash=prev_hash,
            command=msgspec.Raw(e.command) if e.command is not None else NULL,
            actor=canonical_actor(e.actor),
            command_id=e.command_id,
            secret_digest=digest,
            hash=e.hash.hex(),
            secret=msgspec.Raw(e.secret) if e.secret is not None else NULL,
        )
        out.append(env)
        prev_hash = env.hash
    return out


def _range(after: int, count: int | None) -> tuple[str, int | None]:
    """The XRANGE start and count that read seq > ``after`` (at most ``count``) and, when ``after`` > 0, the entry
    at ``after`` too, for the hash the next one chains to."""
    if after <= 0:
        return "1-0", count
    return f"{after}-0", None if count is None else count + 1


def _envelopes_after(game_id: str, after: int, rows: list[tuple[bytes, dict[bytes, bytes]]]) -> list[Envelope]:
    if after <= 0:
        return decode_entries(game_id, rows, GENESIS)
    if not rows or rows[0][0] != f"{after}-0".encode():
        return []
    before = _stored_event.decode(rows[0][1][b"e"]).hash.hex()
    return decode_entries(game_id, rows[1:], before)


def _parse_record(raw: bytes | str) -> CommandRecord:
    digest, first, last = (raw.decode() if isinstance(raw, bytes) else raw).split(":")
    return CommandRecord(digest, int(first), int(last))


def _parse_append(result: list[Any]) -> Appended:
    outcome = result[0].decode() if isinstance(result[0], bytes) else result[0]
    detail = result[1].decode() if isinstance(result[1], bytes) else result[1]
    if outcome in ("duplicate", "command_id_reused"):
        rec = _parse_record(detail)
        return Appended(outcome, rec.last, rec.first, rec.last)
    if outcome == "conflict":
        return Appended("conflict", int(detail))
    return Appended("ok", int(detail), int(result[2]), int(detail))


def append_args(keys: Keys, req: AppendRequest) -> tuple[list[str], list[Any]]:
    """The append script's KEYS and ARGV for ``req``."""
    argv: list[Any] = [
        req.expected_version,
        req.command_key,
        req.command_digest,
        req.game_id,
        req.status,
        req.created_at,
        "" if req.due_at is None else req.due_at,
        len(req.meta),
    ]
    for k, v in req.meta.items():
        argv += [k, v]
    argv.append(len(req.entries))
    argv += req.entries
    argv.append(req.head)
    return keys.game_keys(req.game_id), argv


def _raise_first(results: list[Any]) -> None:
    for r in results:
        if isinstance(r, Exception):
            raise r


class Store:
    """Reads shared by both stores; subclasses say how a write is carried out."""

    name: str = "redis"

    def __init__(self, client: Any, namespace: str = "fp") -> None:
        self.r = client
        self.keys = Keys(namespace)
        self._tokens: dict[str, bytes] = {}

    @property
    def cluster(self) -> bool:
        """Whether the store is a Redis Cluster (then ``r`` is redis-py's ``RedisCluster``)."""
        return isinstance(self.r, RedisCluster)

    # --- writes -------------------------------------------------------------------------------

    async def _write(self, op: str, *args: Any) -> Any:
        return await Store._read(self, getattr(self, f"_op_{op}")(*args))

    async def append(self, req: AppendRequest) -> Appended:
        return await self._write("append", req)

    async def put_token(self, digest: str, record: bytes) -> None:
        """Record a new token. A token is written once and never changes (a second write is ignored)."""
        await self._write("put_token", digest, record)

    async def put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self._write("put_player", player_id, fields)

    async def put_tournament(self, tournament_id: str, record: bytes) -> None:
        """Record a new tournament (``ns:tournament:{pN}:<id>``, in its partition). Written once, like a token."""
        await self._write("put_tournament", tournament_id, record)

    async def clear_due(self, game_id: str, version: int) -> None:
        """Forget a game's due server action, unless the game moved on since ``version``."""
        await self._write("clear_due", game_id, version)

    # --- projections (service/projections): read models written beside the events -------------

    async def project_game(
        self, game_id: str, expected: int, applied: int, model: bytes, lines: list[str]
    ) -> Projected:
        """Store a game's read model (``proj:scores``: fields ``applied``, ``model``) and append its audit lines
        (``proj:audit``), moving its checkpoint from ``expected`` to ``applied``; refused unless it is at ``expected``.
        """
        return await self._write("project_game", game_id, expected, applied, model, lines)

    async def project_games(self, items: list[tuple[str, int, int, bytes, list[str]]]) -> list[Projected | Exception]:
        """``project_game(*item)`` of each item (different games); a real Redis runs them in one round trip. Each answer
        in its place: the ``Projected``, or the ``ProjectionCorrupt`` that refused that game."""
        out: list[Projected | Exception] = []
        for item in items:
            try:
                out.append(await self.project_game(*item))
            except ProjectionCorrupt as e:
                out.append(e)
        return out

    async def project_result(
        self, player_id: str, game_id: str, version: int, entry: bytes, counters: dict[str, int]
    ) -> Projected:
        """Upsert one game's result into a player's results (``proj:results:<player_id>``), idempotently:
        a game already stored at ``version`` or later is left alone; an older one is replaced, counters and all."""
        return await self._write("project_result", player_id, game_id, version, entry, counters)

    async def project_standing(self, tournament_id: str, game_id: str, version: int, entry: bytes) -> Projected:
        """Upsert one table's standing into its tournament's standings (``proj:standings:{pN}:<tournament_id>``,
        field ``g:<game_id>``), idempotently as ``project_result``: a table stored at ``version`` or later stays."""
        return await self._write("project_standing", tournament_id, game_id, version, entry)

    async def project_leaderboard(self, player_id: str, seq: int, scores: dict[str, float]) -> Projected:
        """Set a player's score on each named leaderboard (``proj:leaderboard:{lb}:<board>``) from the snapshot ``seq``
        of their results; refused when a snapshot as new is already there. Absolute values: a repeat changes nothing."""
        return await self._write("project_leaderboard", player_id, seq, scores)

    async def project_solitaire(self, player_id: str, game_id: str, bucket: str, time_ms: int, won: bool, finished_at: int) -> Projected:
        """Count one finished solitaire in a player's statistics (``proj:solitaire:{<player_id>}:*``): its time in the
        bucket's ``played`` (and, won, ``won``) sorted set and its end in ``games``, each keyed by the game id, so a
        repeat changes nothing. ``applied``: whether anything was new."""
        return await self._write("project_solitaire", player_id, game_id, bucket, time_ms, won, finished_at)

    async def _op_project_solitaire(
        self, player_id: str, game_id: str, bucket: str, time_ms: int, won: bool, finished_at: int
    ) -> Projected:
        key = self.keys.player_projection
        pipe = self.r.pipeline(transaction=False)  # every key in the player's slot; each ZADD idempotent by itself
        pipe.zadd(key("solitaire", player_id, f"played:{bucket}"), {game_id: time_ms})
        if won:
            pipe.zadd(key("solitaire", player_id, f"won:{bucket}"), {game_id: time_ms})
        pipe.zadd(key("solitaire", player_id, "games"), {game_id: finished_at})
        added = await pipe.execute()
        return Projected(any(int(n) for n in added), finished_at)

    async def drop_projections(self) -> int:
        """Delete every read model (every ``proj:`` key of the namespace); answers how many keys went."""
        return await self._write("drop_projections")

    async def _op_drop_projections(self) -> int:
        prefix = f"{self.keys.ns}:proj:"
        scores, audit = f"{prefix}scores:", f"{prefix}audit:"
        names = [k.decode() async for k in self.r.scan_iter(match=f"{prefix}*", count=1000)]
        games = {n[len(p) :] for n in names for p in (scores, audit) if n.startswith(p)}
        dropped = 0
        # cross-slot read models (players' results) first: a projector still running re-adds a finished game's result
        # only while that game's own read model is still there, and then the replay of the game upserts it again
        for name in names:
            if not name.startswith((scores, audit)):
                dropped += await self.r.delete(name)
        for game in games:  # a game's read model and its audit list in one DEL (one slot): never one without the other
            dropped += await self.r.delete(scores + game, audit + game)
        return dropped

    async def _op_put_token(self, digest: str, record: bytes) -> None:
        await self.r.set(self.keys.token(digest), record, nx=True)  # written once: readers may cache it

    async def _op_put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self.r.hset(self.keys.player(player_id), mapping=fields)

    async def _op_put_tournament(self, tournament_id: str, record: bytes) -> None:
        await self.r.set(self.keys.tournament(tournament_id), record, nx=True)

    async def _op_clear_due(self, game_id: str, version: int) -> None:
        meta = await self.r.hget(self.keys.meta(game_id), "version")
        if meta is not None and int(meta) == version:
            await self.r.zrem(self.keys.due(self._partition(game_id)), game_id)

    # --- reads --------------------------------------------------------------------------------

    async def _read(self, coro: Any) -> Any:
        """``coro``'s answer; a store that cannot be reached is ``StoreUnavailable`` (writes go through here too)."""
        try:
            return await coro
        except (*UNAVAILABLE, rex.RedisClusterException) as e:
            if unavailable(e):
                raise StoreUnavailable(str(e)) from e
            raise

    async def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[Envelope]:
        """Envelopes with seq > ``after``, in order (at most ``count``). The entry at ``after`` is read too, for
        the hash the next one chains to."""
        start, extra = _range(after, count)
        rows = await self._read(self.r.xrange(self.keys.stream(game_id), start, "+", count=extra))
        return _envelopes_after(game_id, after, rows)

    async def read_many(self, wanted: list[tuple[str, int, int | None]]) -> list[list[Envelope]]:
        """``read(game_id, after, count)`` of each game in ``wanted``, in one round trip (one pipeline): what a
        projector pass or a burst of concurrent views asks for costs one client call, not one per game."""
        if not wanted:
            return []
        pipe = self.r.pipeline(transaction=False)
        for game_id, after, count in wanted:
            start, extra = _range(after, count)
            pipe.xrange(self.keys.stream(game_id), start, "+", count=extra)
        replies = await self._read(pipe.execute())
        return [_envelopes_after(g, after, rows) for (g, after, _), rows in zip(wanted, replies, strict=True)]

    async def meta(self, game_id: str) -> dict[str, str] | None:
        raw = await self._read(self.r.hgetall(self.keys.meta(game_id)))
        if not raw:
            return None
        return {k.decode(): v.decode() for k, v in raw.items()}

    async def command_record(self, game_id: str, key: str) -> CommandRecord | None:
        raw = await self._read(self.r.hget(self.keys.commands(game_id), key))
        return _parse_record(raw) if raw is not None else None

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

    async def list_games(self, status: str | None, limit: int) -> list[str]:
        """Game ids, newest first, of one status or all."""
        statuses = [status] if status else list(STATUSES)
        rows: list[tuple[float, str]] = []
        for p in range(PARTITIONS):
            for s in statuses:
                got = await self._read(self.r.zrevrange(self.keys.index(p, s), 0, limit - 1, withscores=True))
                rows += [(score, gid.decode()) for gid, score in got]
        rows.sort(reverse=True)
        return [gid for _, gid in rows[:limit]]

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
        await self.r.aclose()

    @staticmethod
    def _partition(game_id: str) -> int:
        return partition(game_id)


class RedisStore(Store):
    """A real Redis (or Cluster): appends by the Lua script, many games' appends in one pipeline."""

    name = "redis"

    def __init__(self, client: Any, namespace: str = "fp", *, waitaof: bool = False) -> None:
        super().__init__(client, namespace)
        self._script = client.register_script(APPEND_LUA)
        self._project = client.register_script(PROJECT_LUA)
        self._upsert = client.register_script(UPSERT_LUA)
        self._clear_due = client.register_script(CLEAR_DUE_LUA)
        self._leaderboard = client.register_script(LEADERBOARD_LUA)
        self._queue: list[tuple[AppendRequest, asyncio.Future[Appended]]] = []
        self._flushing = False
        self._flusher: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference to a task
        self.waitaof = waitaof

    @classmethod
    def from_url(cls, url: str, namespace: str = "fp", *, cluster: bool = False, **kw: Any) -> RedisStore:
        """A store on the Redis at ``url``; with ``cluster``, on the Redis Cluster that node belongs to."""
        if cluster:
            client: Any = RedisCluster.from_url(url, decode_responses=False, health_check_interval=10)
        else:
            client = fast_packing(aioredis.from_url(url, decode_responses=False, health_check_interval=10, **_NO_MAINTENANCE))
        return cls(client, namespace, **kw)

    @classmethod
    async def connect(cls, url: str, namespace: str = "fp", *, cluster: bool | None = None, **kw: Any) -> RedisStore:
        """``from_url``; with ``cluster=None`` the server is asked (``INFO cluster``) whether it is a cluster node."""
        if cluster is None:
            cluster = await is_cluster_node(url)
        return cls.from_url(url, namespace, cluster=cluster, **kw)

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
            elif isinstance(reply, UNAVAILABLE):
                raise reply
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
        done, stored = await self._upsert(keys=[key], args=[game_id, version, entry, len(counters), *flat])
        return Projected(done == 1, int(stored))

    async def _op_project_leaderboard(self, player_id: str, seq: int, scores: dict[str, float]) -> Projected:
        keys = [self.keys.leaderboard("seq"), *(self.keys.leaderboard(board) for board in scores)]
        done, stored = await self._leaderboard(keys=keys, args=[player_id, seq, *scores.values()])
        return Projected(done == 1, int(stored))

    async def _op_project_standing(self, tournament_id: str, game_id: str, version: int, entry: bytes) -> Projected:
        key = self.keys.tournament_projection("standings", tournament_id)
        done, stored = await self._upsert(keys=[key], args=[game_id, version, entry, 0])
        return Projected(done == 1, int(stored))

    async def _op_clear_due(self, game_id: str, version: int) -> None:
        keys = [self.keys.meta(game_id), self.keys.due(self._partition(game_id))]
        await self._clear_due(keys=keys, args=[version, game_id])

    async def _op_put_token(self, digest: str, record: bytes) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.token(digest)
        pipe.set(key, record, nx=True)  # written once: readers may cache it
        _raise_first(await self._execute(pipe, [key]))  # a token is acknowledged like an event: durably

    async def _op_put_player(self, player_id: str, fields: dict[str, str]) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.player(player_id)
        pipe.hset(key, mapping=fields)
        _raise_first(await self._execute(pipe, [key]))

    async def _op_put_tournament(self, tournament_id: str, record: bytes) -> None:
        pipe = self.r.pipeline(transaction=False)
        key = self.keys.tournament(tournament_id)
        pipe.set(key, record, nx=True)
        _raise_first(await self._execute(pipe, [key]))  # acknowledged like an event: durably, where asked

    async def _execute(self, pipe: Any, written: list[str]) -> list[Any]:
        """Run ``pipe`` (errors returned in place); with ``waitaof``, only once its writes are fsynced.

        The WAITAOF goes in the same pipeline, so on the same connection: it waits for *that client's*
        writes (a WAITAOF sent on another pooled connection would return at once). On a cluster the
        pipeline is split per primary, each part on one connection: one WAITAOF goes to each primary that
        owns a key of ``written``, after that primary's writes. (A write redirected by MOVED during a
        resharding is retried on its own connection, which no WAITAOF covers: reshard with the service
        stopped, or accept that window.)
        """
        waits = 0
        if self.waitaof:
            if isinstance(self.r, RedisCluster):
                await self.r.initialize()  # the slot map (done once; a no-op afterwards)
                nodes = {}
                for key in written:
                    node = self.r.get_node_from_key(key)
                    nodes[node.name] = node
                for node in nodes.values():
                    pipe.execute_command("WAITAOF", 1, 0, 0, target_nodes=node)
                waits = len(nodes)
            else:
                pipe.execute_command("WAITAOF", 1, 0, 0)
                waits = 1
        results = await pipe.execute(raise_on_error=False)
        if waits:
            replies = results[-waits:]
            del results[-waits:]
            for reply in replies:
                if not (isinstance(reply, list) and int(reply[0]) >= 1):
                    raise NotDurable(
                        f"WAITAOF answered {reply!r}: the write may not be on disk "
                        "(WAITAOF needs Redis >= 7.2 with `appendonly yes`)"
                    )
        return results

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
                except Exception as e:  # every waiting append must hear of it, whatever it was
                    if unavailable(e):
                        e = StoreUnavailable(str(e))
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(e)
                    continue
                for (_, fut), res in zip(batch, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, Exception):
                        fut.set_exception(res)
                    else:
                        fut.set_result(_parse_append(res))
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
