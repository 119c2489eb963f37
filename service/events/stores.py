"""Choosing a store: a real Redis when ``REDIS_URL`` is given, else the embedded one under ``--data``.

The durability asked for is checked here, before the first write: a store that could lose an
acknowledged event under the requested setting is refused with the setting to change.
"""

from __future__ import annotations

from pathlib import Path

from .durability import Durability, check_durability, embedded_durability
from .embedded import EmbeddedStore
from .store import RedisStore, Store


async def open_store(
    redis_url: str | None,
    data_dir: Path | None,
    *,
    namespace: str = "fp",
    fsync: bool = False,
    durability: str = "none",
) -> Store:
    store, _ = await open_store_checked(redis_url, data_dir, namespace=namespace, fsync=fsync, durability=durability)
    return store


async def open_store_checked(
    redis_url: str | None,
    data_dir: Path | None,
    *,
    namespace: str = "fp",
    fsync: bool = False,
    durability: str = "none",
) -> tuple[Store, Durability]:
    """The store, and what it guarantees; raises ``NotDurable`` when ``durability="durable"`` cannot be had."""
    if redis_url:
        store = RedisStore.from_url(redis_url, namespace=namespace)
        try:
            found = await check_durability(store.r, durability)
        except BaseException:
            await store.close()
            raise
        store.waitaof = found.waitaof
        return store, found
    found = embedded_durability(durability, fsync)
    return await EmbeddedStore(data_dir, namespace=namespace, fsync=fsync).open(), found
