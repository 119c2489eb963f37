"""Trimming the partition logs: an entry every consumer group has applied, older than the retention, is let go.

A partition log holds one pointer an append (game, seq range). Its readers are the projectors' consumer groups and
each worker's change feed (``service/api/watch.py``), which follows the newest entries. Without a trim the logs keep
one entry for every append ever made — the largest thing left in Redis once finished games are archived
(docs/operating.md, "Archive"). So the projector trims each log below the oldest entry any group still needs: its
first pending entry, or the last one delivered to it. Entries newer than ``keep_ms`` stay whatever the groups say,
so a change feed running behind still finds what it has not read.

A log no group reads is never trimmed (nothing has applied it). A group created later starts where the log now
starts: to project everything again, ``rebuild`` reads the games themselves (their streams, the lobby's indexes and
the archive), not the logs.
"""

from __future__ import annotations

from .contract import text
from .keys import PARTITIONS
from .store import Store

StreamId = tuple[int, int]
LOG_KEEP_MS = 600_000
"""The default retention: ten minutes, far more than a change feed or a projector pass falls behind."""


async def trim_logs(store: Store, keep_ms: int) -> int:
    """Trim every partition log below what its groups still need and ``keep_ms`` back from the server's clock;
    answers how many entries went. Two round trips for the groups, one for the trims."""
    seconds, micros = await store._read(store.r.time())
    floor = (max(0, seconds * 1000 + micros // 1000 - keep_ms), 0)
    pipe = store.r.pipeline(transaction=False)
    for p in range(PARTITIONS):
        pipe.xinfo_groups(store.keys.log(p))
    replies = await store._read(pipe.execute(raise_on_error=False))
    needed: dict[int, StreamId] = {}
    pending: list[tuple[int, str]] = []
    for p, groups in enumerate(replies):
        if isinstance(groups, Exception) or not groups:  # no log yet, or no group has read it
            continue
        needed[p] = min([floor, *(_id(g["last-delivered-id"]) for g in groups)])
        pending += [(p, text(g["name"])) for g in groups if int(g["pending"])]
    if pending:
        pipe = store.r.pipeline(transaction=False)
        for p, group in pending:
            pipe.xpending(store.keys.log(p), group)
        for (p, _), summary in zip(pending, await store._read(pipe.execute()), strict=True):
            if summary["min"] is not None:
                needed[p] = min(needed[p], _id(summary["min"]))
    if not needed:
        return 0
    return await store.trim_logs_below({p: f"{ms}-{seq}" for p, (ms, seq) in needed.items()})


def _id(value: object) -> StreamId:
    ms, _, seq = text(value).partition("-")
    return int(ms), int(seq or 0)
