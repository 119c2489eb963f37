"""Waiting for the store's writes: the local fsync (``WAITAOF``) and, under ``--durability replicated``, N replicas
(``WAIT``), on the connection that wrote — and showing a reader only events the replicas have.

Redis answers ``WAIT n ms`` with how many replicas acknowledged *this connection's* last write (its replication
offset). So every wait goes in the writing pipeline, after its writes, on its connection (on a cluster: one wait per
primary written, after that primary's writes). Two traps follow from "this connection's last write":

* **a resend** whose append script answers ``duplicate`` writes nothing; a WAIT after it waits for whatever that pooled
  connection wrote last, not for the first try's write (which may have timed out on its WAIT, 503, and still not be on
  any replica). So under ``replicated`` every waited pipeline first writes a *marker* (``SET`` of a key in the slot
  of the keys it covers, expiring after a minute): Redis replicates in order, so a replica that has the marker has everything written on that
  primary before it — the first try's write included.
* **a read** could show an event that the primary has and no replica yet (its append is still waiting, or timed out):
  a failover would take back what a reader saw, and a receipt signed on it would refute the log. So under
  ``replicated`` a read that returns events this worker has not seen replicated waits for a *barrier* (a marker and
  WAIT on the primaries read, shared by every read in flight) before it answers; events this worker appended, or
  already covered, cost nothing more.

Fewer replicas than asked within ``--replica-wait-ms`` is ``NotReplicated`` (503, retry with the same command id).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from redis.asyncio.cluster import RedisCluster

from .contract import NotDurable, NotReplicated, StoreUnavailable, unavailable

MARKER_MS = 60_000
"""How long a marker key lives: a key with no hash tag (a token, a player) gets a marker of its own on a cluster, so
markers expire rather than pile up (on a single server there is one)."""
KNOWN_GAMES = 50_000
"""Games whose replicated version a worker remembers (the oldest forgotten first: a read of one costs a barrier)."""


def marker(namespace: str, key: str | None = None) -> str:
    """The key written before a wait: on a single server one for all (``key`` None); on a cluster one in ``key``'s
    slot (so on its primary) — its hash tag, or the whole key as the tag when it has none."""
    if key is None:
        return f"{namespace}:replicated"
    start = key.find("{")
    end = key.find("}", start + 1) if start >= 0 else -1
    if start >= 0 and end > start + 1:
        return f"{namespace}:replicated:{key[start:end + 1]}"
    if "{" in key or "}" in key:
        raise ValueError(f"no marker can share the slot of the key {key!r}")
    return f"{namespace}:replicated:{{{key}}}"


class Replication:
    """N replicas to wait for, how long, and which games' events this worker knows to be on them."""

    def __init__(self, replicas: int, wait_ms: int) -> None:
        if replicas < 1 or wait_ms < 1:
            raise ValueError(f"replicated writes need at least one replica and a wait of at least 1 ms, not {replicas}, {wait_ms}")
        self.replicas, self.wait_ms = replicas, wait_ms
        self.known: OrderedDict[str, int] = OrderedDict()  # game id → the last seq known to be on the replicas
        self._queue: list[tuple[list[str], asyncio.Future[None]]] = []
        self._barrier: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference to a task

    def seen(self, game_id: str, seq: int) -> None:
        """``game_id``'s events up to ``seq`` are on the replicas (an append or a barrier waited for them)."""
        if seq > self.known.get(game_id, 0):
            self.known[game_id] = seq
        self.known.move_to_end(game_id)
        while len(self.known) > KNOWN_GAMES:
            self.known.popitem(last=False)

    async def cover(self, store: Any, read: list[tuple[str, int]]) -> None:
        """Return once the events read (game id, last seq read) are on the replicas: at once for those known to be,
        else after a barrier on the primaries holding the rest; ``NotReplicated`` when it fails."""
        new = [(game_id, seq) for game_id, seq in read if seq > self.known.get(game_id, 0)]
        if not new:
            return
        await self.barrier(store, [store.keys.stream(game_id) for game_id, _ in new])
        for game_id, seq in new:
            self.seen(game_id, seq)

    async def barrier(self, store: Any, keys: list[str]) -> None:
        """A marker and WAIT on the primaries holding ``keys``, sent after the caller's reads: what they returned was
        written before the marker, so it is on the replicas once the marker is. Calls made while one barrier is on its
        way wait for the next (the one on its way may have left before their reads), which all of them share."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((keys, future))
        if self._barrier is None:
            self._barrier = asyncio.get_running_loop().create_task(self._barriers(store))
        await future

    async def _barriers(self, store: Any) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                keys = list(dict.fromkeys(k for keys, _ in batch for k in keys))
                try:
                    await execute(store, store.r.pipeline(transaction=False), keys)
                except Exception as e:  # noqa: BLE001 - every waiting read must hear of it, whatever it was
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(StoreUnavailable(str(e)) if unavailable(e) else e)
                    continue
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._barrier = None


def _targets(client: Any, written: list[str]) -> list[tuple[Any, str]]:
    """``(node, first key written there)`` of each primary ``written`` is on; one ``(None, key)`` on a single server."""
    if not isinstance(client, RedisCluster):
        return [(None, written[0])]
    nodes: dict[str, tuple[Any, str]] = {}
    for key in written:
        node = client.get_node_from_key(key)
        nodes.setdefault(node.name, (node, key))
    return list(nodes.values())


async def execute(store: Any, pipe: Any, written: list[str]) -> list[Any]:
    """Run ``pipe`` (errors returned in place); with ``store.waitaof``, only once its writes are fsynced; with
    ``store.replication``, only once ``replicas`` replicas have them (after a marker: see the module's text).

    The waits go in the same pipeline, so on the same connection: a wait counts *that connection's* writes (one sent
    on another pooled connection would return at once). On a cluster the pipeline is split per primary, each part on
    one connection: the marker and waits go to each primary that owns a key of ``written``, after its writes. (A write
    redirected by MOVED during a resharding is retried on its own connection, which no wait covers: reshard with the
    service stopped, or accept that window.)
    """
    replication: Replication | None = store.replication
    if not (store.waitaof or replication) or not written:
        return await pipe.execute(raise_on_error=False)
    if isinstance(store.r, RedisCluster):
        await store.r.initialize()  # the slot map (done once; a no-op afterwards)
    added: list[tuple[str, str]] = []
    for node, key in _targets(store.r, written):
        where = {} if node is None else {"target_nodes": node}
        name = "the primary" if node is None else node.name
        if replication is not None:  # on a cluster routed by its key: to the primary of ``key``
            pipe.execute_command("SET", marker(store.keys.ns, None if node is None else key), "1", "PX", MARKER_MS)
            added.append(("marker", name))
        if store.waitaof:
            pipe.execute_command("WAITAOF", 1, 0, 0, **where)
            added.append(("waitaof", name))
        if replication is not None:
            pipe.execute_command("WAIT", replication.replicas, replication.wait_ms, **where)
            added.append(("wait", name))
    results = await pipe.execute(raise_on_error=False)
    replies = results[-len(added):]
    del results[-len(added):]
    for (kind, name), reply in zip(added, replies, strict=True):
        _check(kind, name, reply, replication)
    return results


def _check(kind: str, name: str, reply: Any, replication: Replication | None) -> None:
    """Raise unless ``reply`` confirms the wait ``kind`` (``marker``, ``waitaof``, ``wait``) asked of primary ``name``."""
    if isinstance(reply, Exception) and unavailable(reply):
        raise StoreUnavailable(str(reply)) from reply
    if kind == "waitaof" and not (isinstance(reply, list) and int(reply[0]) >= 1):
        raise NotDurable(f"WAITAOF answered {reply!r}: the write may not be on disk "
                         "(WAITAOF needs Redis >= 7.2 with `appendonly yes`)")  # fmt: skip
    if isinstance(reply, Exception):
        raise reply
    if kind == "wait" and replication is not None and int(reply) < replication.replicas:
        raise NotReplicated(
            f"{int(reply)} of the {replication.replicas} replicas asked for confirmed the write within "
            f"{replication.wait_ms} ms (WAIT, on {name}): not acknowledged; it may still be on the primary, and a "
            "failover can take it back — send it again with the same command id"
        )
