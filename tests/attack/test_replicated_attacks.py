"""Attacks on ``--durability replicated``: writes a client is told of, and reads that show what a failover could take
back, that skip the replicas' WAIT (``service/store/replication.py``).

Each case runs on a primary and a replica of its own (``tests/replicas.py``): the replica is held back (stopped, its
link cut), so a write the primary acknowledges now is on no replica, and a failover would take it back.
"""

from __future__ import annotations

import pytest

from service.store.redis_store import RedisStore
from service.store.store import NotReplicated
from tests.replicas import Replicated

WAIT_MS = 300  # a WAIT that must run out (the replica is held): short, each such case waits it out
GENEROUS_MS = 10_000  # a WAIT that must succeed, on a loaded machine


@pytest.fixture
def replicated(tmp_path):
    group = Replicated(tmp_path / "replicated").start()
    yield group
    group.stop()


def _store(replicated: Replicated, wait_ms: int = GENEROUS_MS) -> RedisStore:
    return RedisStore.from_url(replicated.url, namespace="att", replicas=1, replica_wait_ms=wait_ms)


async def test_the_play_now_queue_is_acknowledged_only_once_replicated(replicated):
    """``POST /queue`` answers "queued", ``DELETE /queue`` "left", a settle "cancelled" and a fence "lost": each is
    told to a player, and the matcher acts on it. None of the queue's writes waited for the replicas: a failover took
    back a leave (the player then seated in a game they left) or a fence (a seat taken under a claim settled lost)."""
    store = _store(replicated)
    try:
        assert await store.queue_join("p-q0", b"entry-0")  # replicated: answered at once
        replicated.hold_replica()
        store.replication.wait_ms = WAIT_MS
        with pytest.raises(NotReplicated):
            await store.queue_join("p-q1", b"entry-1")
        with pytest.raises(NotReplicated):
            await store.queue_leave("p-q0")
        with pytest.raises(NotReplicated):
            await store.queue_claim([("p-q1", b"entry-1", b"claimed")])
        with pytest.raises(NotReplicated):
            await store.queue_settle("p-q1", b"claimed", b"cancelled")
        with pytest.raises(NotReplicated):
            await store.queue_fence("g-q", "q-1")
    finally:
        replicated.release_replica()
        await store.close()
