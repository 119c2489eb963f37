"""What an operator asks of the store as a whole (``/metrics``, ``/readyz``): games by status, and how far the
projectors' consumer group is behind the partition logs. Each is one pipelined round trip."""

from __future__ import annotations

from .contract import text
from .keys import PARTITIONS, STATUSES
from .store import Store

PROJECTORS = "projectors"  # the consumer group of service/projections/projector.py
COUNT_AT_MOST = 100_000
"""Where Redis cannot say a group's lag, the entries after its cursor are counted, up to this many (a lag past it
reads as this: far past any readiness bound)."""


async def game_counts(store: Store) -> dict[str, int]:
    """Games of each status, summed over the partitions' indexes, and ``archived``: the finished games whose events
    have moved to the archive (so the finished ones not yet archived are the archive's backlog)."""
    pipe = store.r.pipeline(transaction=False)
    for p in range(PARTITIONS):
        for status in STATUSES:
            pipe.zcard(store.keys.index(p, status))
        pipe.get(store.keys.archived(p))
    replies = await store._read(pipe.execute())
    step = len(STATUSES) + 1
    counts = {status: sum(replies[i::step]) for i, status in enumerate(STATUSES)}
    counts["archived"] = sum(int(n or 0) for n in replies[len(STATUSES)::step])
    return counts


async def projector_lag(store: Store, group: str = PROJECTORS) -> dict[int, int]:
    """Entries of each partition log the group has not applied: not read yet, or read and not acknowledged. A log
    the group has never read counts whole (its length): no projector has started on it."""
    pipe = store.r.pipeline(transaction=False)
    for p in range(PARTITIONS):
        pipe.xlen(store.keys.log(p))
        pipe.xinfo_groups(store.keys.log(p))  # an error where nothing was ever appended: no such key, so no group
    replies = await store._read(pipe.execute(raise_on_error=False))
    lag, unknown = {}, {}
    for p in range(PARTITIONS):
        length, found = replies[2 * p], replies[2 * p + 1]
        if isinstance(length, Exception):
            raise length
        ours = None if isinstance(found, Exception) else next((g for g in found if text(g["name"]) == group), None)
        if ours is None:
            lag[p] = length
        elif ours.get("lag") is not None:
            lag[p] = int(ours["lag"]) + int(ours["pending"])
        else:
            unknown[p] = ours
    if unknown:  # Redis 7 does not know the lag of a group created at an id inside the log: count what follows it
        pipe = store.r.pipeline(transaction=False)
        for p, info in unknown.items():
            pipe.xrange(store.keys.log(p), f"({text(info['last-delivered-id'])}", "+", count=COUNT_AT_MOST)
        for (p, info), unread in zip(unknown.items(), await store._read(pipe.execute()), strict=True):
            lag[p] = len(unread) + int(info["pending"])
    return dict(sorted(lag.items()))
