"""Choosing a store: a real Redis when ``REDIS_URL`` is given, else the embedded one under ``--data``.

The durability asked for is checked here, before the first write: a store that could lose an
acknowledged event under the requested setting is refused with the setting to change.

``repair`` lets the embedded store drop what its journal cannot read past (kept beside it); see ``journal.py``.

``cluster`` says whether ``redis_url`` names a node of a Redis Cluster: ``"auto"`` (the default) asks the
server (``INFO cluster``), ``"yes"`` / ``"no"`` skip the question. ``sentinel`` reaches the primary through Redis
Sentinel instead (``sentinel.py``). ``durability="replicated"`` waits for ``replicas`` replicas, at most
``replica_wait_ms`` (``replication.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from .archive import Archive
from .durability import Durability, check_durability, embedded_durability
from .embedded import EmbeddedStore
from .pool import CONNECTIONS, WAIT_MS
from .redis_store import RedisStore
from .replication import Replication
from .sentinel import SentinelAddress, sentinel_store
from .store import Store

ClusterMode = Literal["auto", "yes", "no"]
CLUSTER_MODES: dict[str, bool | None] = {"auto": None, "yes": True, "no": False}


async def open_store(
    redis_url: str | None,
    data_dir: Path | None,
    *,
    namespace: str = "fp",
    fsync: bool = False,
    durability: str = "none",
    cluster: str = "auto",
    repair: bool = False,
    archive: str | Path | None = None,
) -> Store:
    store, _ = await open_store_checked(
        redis_url, data_dir, namespace=namespace, fsync=fsync, durability=durability, cluster=cluster, repair=repair,
        archive=archive,
    )
    return store


async def open_store_checked(
    redis_url: str | None,
    data_dir: Path | None,
    *,
    namespace: str = "fp",
    fsync: bool = False,
    durability: str = "none",
    cluster: str = "auto",
    connections: int = CONNECTIONS,
    wait_ms: int = WAIT_MS,
    repair: bool = False,
    archive: str | Path | None = None,
    sentinel: SentinelAddress | None = None,
    replicas: int = 1,
    replica_wait_ms: int = 1000,
) -> tuple[Store, Durability]:
    """The store, and what it guarantees; raises ``NotDurable`` when ``durability="durable"`` cannot be had. With
    ``archive`` (a folder or an fsspec URL), reads of archived games are served from there."""
    store, found = await _checked(redis_url, data_dir, namespace=namespace, fsync=fsync, durability=durability,
                                  cluster=cluster, connections=connections, wait_ms=wait_ms, repair=repair,
                                  sentinel=sentinel, replicas=replicas, replica_wait_ms=replica_wait_ms)  # fmt: skip
    if archive is not None:
        store.archive = Archive(archive)
    return store, found


async def _checked(
    redis_url: str | None,
    data_dir: Path | None,
    *,
    namespace: str,
    fsync: bool,
    durability: str,
    cluster: str,
    connections: int,
    wait_ms: int,
    repair: bool,
    sentinel: SentinelAddress | None,
    replicas: int,
    replica_wait_ms: int,
) -> tuple[Store, Durability]:
    if redis_url or sentinel:
        if cluster not in CLUSTER_MODES:
            raise ValueError(f"cluster must be one of {', '.join(CLUSTER_MODES)}, not {cluster!r}")
        if sentinel is not None:
            store = sentinel_store(sentinel, namespace, connections=connections, wait_ms=wait_ms)
        else:
            store = await RedisStore.connect(redis_url, namespace=namespace, cluster=CLUSTER_MODES[cluster],
                                             connections=connections, wait_ms=wait_ms)  # fmt: skip
        try:
            found = await check_durability(store.r, durability, replicas)
        except BaseException:
            await store.close()
            raise
        store.waitaof = found.waitaof
        if found.replicas:
            store.replication = Replication(found.replicas, replica_wait_ms)
        await store.index_kinds()
        return store, found
    found = embedded_durability(durability, fsync)
    store = EmbeddedStore(data_dir, namespace=namespace, fsync=fsync, repair=repair, connections=connections,
                          wait_ms=wait_ms)  # fmt: skip
    return await store.open(), found
