"""Choosing a store: a real Redis when ``REDIS_URL`` is given, else the embedded one under ``--data``."""

from __future__ import annotations

from pathlib import Path

from .embedded import EmbeddedStore
from .store import RedisStore, Store


async def open_store(
    redis_url: str | None, data_dir: Path | None, *, namespace: str = "fp", fsync: bool = False
) -> Store:
    if redis_url:
        return RedisStore.from_url(redis_url, namespace=namespace)
    return await EmbeddedStore(data_dir, namespace=namespace, fsync=fsync).open()
