"""How tests get a store: the embedded one, or a real Redis under a namespace of their own.

A real server comes from ``REDIS_URL``, else ``127.0.0.1:6379`` if it answers. Without one, tests that
need it are skipped with the reason — except in CI (``FREE_PARKING_CI=1``), where that is a failure.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from urllib.parse import urlparse

import pytest

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def redis_url() -> str | None:
    url = os.environ.get("REDIS_URL") or DEFAULT_URL
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), timeout=1) as s:
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                return url
    except OSError:
        pass
    return None


def need_redis() -> str:
    url = redis_url()
    if url is None:
        if os.environ.get("FREE_PARKING_CI"):
            pytest.fail("CI must run against a real Redis, and none answers (REDIS_URL or 127.0.0.1:6379)")
        pytest.skip("no real Redis answers (set REDIS_URL or start redis-server on 127.0.0.1:6379)")
    return url


def namespace() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


async def drop_namespace(client, ns: str) -> None:
    """Delete every key a test wrote under its namespace (on a cluster client: on every primary)."""
    batch = []
    async for key in client.scan_iter(match=f"{ns}:*", count=500):
        batch.append(key)
        if len(batch) >= 500:
            await client.delete(*batch)
            batch = []
    if batch:
        await client.delete(*batch)


@contextlib.asynccontextmanager
async def client_at(url: str):
    """A client of the Redis at ``url``: of a single server, or of the whole cluster when it names a cluster node
    (a plain client there would be answered MOVED for every key outside that node's slots)."""
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import RedisCluster

    from service.store.redis_store import is_cluster_node

    client = RedisCluster.from_url(url) if await is_cluster_node(url) else aioredis.from_url(url)
    try:
        yield client
    finally:
        await client.aclose()


async def drop_namespace_at(url: str, ns: str) -> None:
    """``drop_namespace`` on the Redis at ``url``, a single server or a cluster node (then on the whole cluster)."""
    async with client_at(url) as client:
        await drop_namespace(client, ns)
