"""The play-now queue in the store (docs/queue.md): who waits, and what became of each player's last queueing.

It lives in the store, not in a worker, so every worker of a Redis deployment sees one queue. Two hashes in one
slot (hash tag ``{mq}``), so each write below is one atomic step on a single Redis (a script) and on a Cluster (its
keys in one slot) alike; the embedded store carries each out under its write lock, journalled like any write:

- ``ns:queue:{mq}:waiting`` — player id -> the entry they queued with (JSON bytes, written by the API);
- ``ns:queue:{mq}:status`` — player id -> what became of their last entry (claimed for a game, seated, cancelled).

The claim is what makes several matchers safe: it takes a table's players out of the queue only if every one of them
still waits with the very entry the matcher read, so two workers planning the same table seat it once, and a player
who left (or queued again) in between is never seated on a stale entry.
"""

from __future__ import annotations

from typing import Any

from .contract import Projected, raise_first

TAG = "{mq}"

# KEYS: waiting, status; ARGV: player, entry, the status the caller judged ('': none; absent: not checked)
JOIN_LUA = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if ARGV[3] ~= nil and (redis.call('HGET', KEYS[2], ARGV[1]) or '') ~= ARGV[3] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""
# KEYS: waiting, status; ARGV: then (player, entry, status) per player. All still waiting with that entry, or nothing.
CLAIM_LUA = """
for i = 1, #ARGV, 3 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then
    return 0
  end
end
for i = 1, #ARGV, 3 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
return 1
"""
# KEYS: status; ARGV: player, the status expected, the new one
SETTLE_LUA = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""
# KEYS: waiting; ARGV: player
LEAVE_LUA = "return redis.call('HDEL', KEYS[1], ARGV[1])"
# KEYS: the game's queue seats; ARGV: queue id. 1 if the claim is (now, or already) fenced off, 0 if it seated the player
FENCE_LUA = """
local holder = redis.call('HGET', KEYS[1], ARGV[1])
if not holder then
  redis.call('HSET', KEYS[1], ARGV[1], 'lost')
  return 1
end
return holder == 'lost' and 1 or 0
"""
LOST = b"lost"


class QueueOps:
    """The queue's writes and reads, mixed into ``Store``: each write goes through ``_write`` (so the embedded store
    journals it); these ``_op_`` forms are the embedded store's, run under its lock, step for step the scripts'."""

    r: Any
    keys: Any

    def _queue_key(self, name: str) -> str:
        return f"{self.keys.ns}:queue:{TAG}:{name}"

    async def queue_join(self, player_id: str, entry: bytes, status: bytes | None = None) -> bool:
        """Put ``player_id`` in the queue with ``entry`` (forgetting their last status); False if they already wait, or
        if their status is no longer ``status`` (``b""``: none), the one the caller judged they may queue on."""
        return (await self._write("queue_join", player_id, entry, status)).applied  # type: ignore[attr-defined]

    async def queue_leave(self, player_id: str) -> bool:
        """Take ``player_id`` out of the queue; whether they were waiting (not yet claimed for a table)."""
        return (await self._write("queue_leave", player_id)).applied  # type: ignore[attr-defined]

    async def queue_claim(self, claims: list[tuple[str, bytes, bytes]]) -> bool:
        """For each ``(player, entry, status)``: if every player still waits with ``entry``, take them all out of the
        queue and record ``status``; else change nothing. Whether it did."""
        return (await self._write("queue_claim", claims)).applied  # type: ignore[attr-defined]

    async def queue_settle(self, player_id: str, expected: bytes, status: bytes) -> bool:
        """Replace a player's status with ``status`` if it is still ``expected`` (a newer queueing replaced it)."""
        return (await self._write("queue_settle", player_id, expected, status)).applied  # type: ignore[attr-defined]

    async def queue_fence(self, game_id: str, queue_id: str) -> bool:
        """Settle a claim whose worker may have stopped: unless a seat of ``game_id`` was already taken under the
        queueing ``queue_id``, mark it lost in the game's slot, so that no seat is taken under it afterwards (the seat
        append checks it: ``Games.seat``'s ``queue_claim``). True if it is lost now (the player has no seat from it)."""
        return (await self._write("queue_fence", game_id, queue_id)).applied  # type: ignore[attr-defined]

    async def queue_waiting(self) -> dict[str, bytes]:
        """Every waiting player's entry."""
        raw = await self._read(self.r.hgetall(self._queue_key("waiting")))  # type: ignore[attr-defined]
        return {k.decode(): v for k, v in raw.items()}

    async def queue_of(self, player_id: str) -> tuple[bytes | None, bytes | None]:
        """A player's waiting entry and status (either may be ``None``), in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hget(self._queue_key("waiting"), player_id)
        pipe.hget(self._queue_key("status"), player_id)
        entry, status = await self._read(pipe.execute())  # type: ignore[attr-defined]
        return entry, status

    async def _op_queue_join(self, player_id: str, entry: bytes, status: bytes | None = None) -> Projected:
        """``status`` None: not checked (and so a journal record of before it was, replayed as it was then)."""
        if await self.r.hexists(self._queue_key("waiting"), player_id):
            return Projected(False, 0)
        if status is not None and (await self.r.hget(self._queue_key("status"), player_id) or b"") != bytes(status):
            return Projected(False, 0)
        await self.r.hset(self._queue_key("waiting"), player_id, entry)
        await self.r.hdel(self._queue_key("status"), player_id)
        return Projected(True, 0)

    async def _op_queue_leave(self, player_id: str) -> Projected:
        return Projected(bool(await self.r.hdel(self._queue_key("waiting"), player_id)), 0)

    async def _op_queue_claim(self, claims: list[tuple[str, bytes, bytes]]) -> Projected:
        waiting, status = self._queue_key("waiting"), self._queue_key("status")
        for player_id, entry, _ in claims:
            if await self.r.hget(waiting, player_id) != bytes(entry):
                return Projected(False, 0)
        # the status first, then out of the queue: a read between the steps (reads take no lock here) sees the player
        # waiting and claimed, never neither (GET /queue once answered "none" to a player being seated)
        for player_id, _, record in claims:
            await self.r.hset(status, player_id, record)
        for player_id, _, _ in claims:
            await self.r.hdel(waiting, player_id)
        return Projected(True, 0)

    async def _op_queue_settle(self, player_id: str, expected: bytes, status: bytes) -> Projected:
        key = self._queue_key("status")
        if await self.r.hget(key, player_id) != bytes(expected):
            return Projected(False, 0)
        await self.r.hset(key, player_id, status)
        return Projected(True, 0)

    async def _op_queue_fence(self, game_id: str, queue_id: str) -> Projected:
        key = self.keys.queue_seats(game_id)
        holder = await self.r.hget(key, queue_id)
        if holder is None:
            await self.r.hset(key, queue_id, LOST)
        return Projected(holder in (None, LOST), 0)


class RedisQueueOps(QueueOps):
    """The same writes as scripts, for a real Redis or Cluster (both keys in one slot); each acknowledged as durably as
    an event (``_execute``: under ``--durability replicated`` once the replicas have it). A player is told "queued",
    "left", "cancelled" or "lost" on these writes, and the matcher seats (or not) on them: one a failover took back
    would seat a player in a game they left, or under a claim they were told was lost."""

    async def _queue_eval(self, source: str, keys: list[str], args: list[Any]) -> Any:
        """``source`` run as one script (``EVAL``, as ``rounds.py`` does), answered once as safe as asked."""
        pipe = self.r.pipeline(transaction=False)  # type: ignore[attr-defined]
        pipe.execute_command("EVAL", source, len(keys), *keys, *args)
        results = await self._execute(pipe, keys)  # type: ignore[attr-defined]
        raise_first(results)
        return results[0]

    async def _op_queue_join(self, player_id: str, entry: bytes, status: bytes | None = None) -> Projected:
        keys = [self._queue_key("waiting"), self._queue_key("status")]
        args = [player_id, entry] if status is None else [player_id, entry, status]
        return Projected(bool(await self._queue_eval(JOIN_LUA, keys, args)), 0)

    async def _op_queue_leave(self, player_id: str) -> Projected:
        return Projected(bool(await self._queue_eval(LEAVE_LUA, [self._queue_key("waiting")], [player_id])), 0)

    async def _op_queue_claim(self, claims: list[tuple[str, bytes, bytes]]) -> Projected:
        keys = [self._queue_key("waiting"), self._queue_key("status")]
        args = [x for claim in claims for x in claim]
        return Projected(bool(await self._queue_eval(CLAIM_LUA, keys, args)), 0)

    async def _op_queue_settle(self, player_id: str, expected: bytes, status: bytes) -> Projected:
        settled = await self._queue_eval(SETTLE_LUA, [self._queue_key("status")], [player_id, expected, status])
        return Projected(bool(settled), 0)

    async def _op_queue_fence(self, game_id: str, queue_id: str) -> Projected:
        return Projected(bool(await self._queue_eval(FENCE_LUA, [self.keys.queue_seats(game_id)], [queue_id])), 0)
