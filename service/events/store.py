"""The event store on Redis Streams: one stream per game, appended only through one checked script.

Reads are plain Redis calls shared by both stores; writes go through ``_write(op, *args)`` so the
embedded store can journal each one. ``RedisStore`` sends concurrent appends of different games in
one pipeline (group commit): the client's per-call cost, not Redis, bounds a command's latency.
"""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources
from typing import Any, Literal

import msgspec
import redis.asyncio as aioredis
from redis import exceptions as rex

from .envelope import Envelope, canonical
from .keys import PARTITIONS, STATUSES, Keys, partition

APPEND_LUA = resources.files(__package__).joinpath("append.lua").read_text()


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


class Appended(msgspec.Struct, frozen=True):
    outcome: Outcome
    version: int
    first: int = 0
    last: int = 0


class CommandRecord(msgspec.Struct, frozen=True):
    digest: str
    first: int
    last: int


def command_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def encode_entry(env: Envelope) -> bytes:
    return canonical(env)


_envelope = msgspec.json.Decoder(Envelope)


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
    return Appended("ok", int(detail))


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


class Store:
    """Reads shared by both stores; subclasses say how a write is carried out."""

    name: str = "redis"

    def __init__(self, client: Any, namespace: str = "fp") -> None:
        self.r = client
        self.keys = Keys(namespace)

    # --- writes -------------------------------------------------------------------------------

    async def _write(self, op: str, *args: Any) -> Any:
        try:
            return await getattr(self, f"_op_{op}")(*args)
        except (rex.ConnectionError, rex.TimeoutError, OSError) as e:
            raise StoreUnavailable(str(e)) from e

    async def append(self, req: AppendRequest) -> Appended:
        return await self._write("append", req)

    async def put_token(self, digest: str, record: bytes) -> None:
        await self._write("put_token", digest, record)

    async def put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self._write("put_player", player_id, fields)

    async def clear_due(self, game_id: str, version: int) -> None:
        """Forget a game's due server action, unless the game moved on since ``version``."""
        await self._write("clear_due", game_id, version)

    async def _op_put_token(self, digest: str, record: bytes) -> None:
        await self.r.set(self.keys.token(digest), record)

    async def _op_put_player(self, player_id: str, fields: dict[str, str]) -> None:
        await self.r.hset(self.keys.player(player_id), mapping=fields)

    async def _op_clear_due(self, game_id: str, version: int) -> None:
        meta = await self.r.hget(self.keys.meta(game_id), "version")
        if meta is not None and int(meta) == version:
            await self.r.zrem(self.keys.due(self._partition(game_id)), game_id)

    # --- reads --------------------------------------------------------------------------------

    async def _read(self, coro: Any) -> Any:
        try:
            return await coro
        except (rex.ConnectionError, rex.TimeoutError, OSError) as e:
            raise StoreUnavailable(str(e)) from e

    async def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[Envelope]:
        """Envelopes with seq > ``after``, in order (at most ``count``)."""
        rows = await self._read(self.r.xrange(self.keys.stream(game_id), f"{after + 1}-0", "+", count=count))
        return [_envelope.decode(fields[b"e"]) for _, fields in rows]

    async def meta(self, game_id: str) -> dict[str, str] | None:
        raw = await self._read(self.r.hgetall(self.keys.meta(game_id)))
        if not raw:
            return None
        return {k.decode(): v.decode() for k, v in raw.items()}

    async def command_record(self, game_id: str, key: str) -> CommandRecord | None:
        raw = await self._read(self.r.hget(self.keys.commands(game_id), key))
        return _parse_record(raw) if raw is not None else None

    async def token(self, digest: str) -> bytes | None:
        return await self._read(self.r.get(self.keys.token(digest)))

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
        return out

    async def ping(self) -> bool:
        try:
            return bool(await self.r.ping())
        except (rex.ConnectionError, rex.TimeoutError, OSError):
            return False

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
        self._queue: list[tuple[AppendRequest, asyncio.Future[Appended]]] = []
        self._flushing = False
        self.waitaof = waitaof

    @classmethod
    def from_url(cls, url: str, namespace: str = "fp", **kw: Any) -> RedisStore:
        client = aioredis.from_url(url, decode_responses=False, health_check_interval=10)
        return cls(client, namespace, **kw)

    async def _op_append(self, req: AppendRequest) -> Appended:
        future: asyncio.Future[Appended] = asyncio.get_running_loop().create_future()
        self._queue.append((req, future))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        """Send every queued append in one pipeline; keep going while more arrive."""
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    results = await self._run(batch)
                except Exception as e:  # every waiting append must hear of it, whatever it was
                    if isinstance(e, rex.ConnectionError | rex.TimeoutError | OSError):
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
        for attempt in range(2):
            pipe = self.r.pipeline(transaction=False)
            for req, _ in batch:
                keys, argv = append_args(self.keys, req)
                pipe.evalsha(self._script.sha, len(keys), *keys, *argv)
            if self.waitaof:
                pipe.execute_command("WAITAOF", 1, 0, 0)
            results = await pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, rex.NoScriptError) for r in results):
                await self.r.script_load(APPEND_LUA)  # the server restarted and forgot it; nothing was written
                continue
            if self.waitaof and not (isinstance(results[-1], list) and int(results[-1][0]) >= 1):
                raise NotDurable(f"WAITAOF answered {results[-1]!r}: the append is not on disk (is appendonly on?)")
            return results[: len(batch)]
        raise AssertionError("unreachable")
