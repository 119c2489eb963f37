"""The store through Redis Sentinel (``REDIS_SENTINEL=host:port,…`` and the primary's name): every connection is made
to the primary the Sentinels name at that moment, so after a failover the next one reaches the promoted replica.

redis-py's ``Sentinel.master_for`` hands out a client on a ``SentinelConnectionPool``, which refuses a request past its
size at once; the store's own pool waits for a connection instead (``pool.py``). ``WaitingSentinelPool`` is both: the
Sentinel pool's way to find the primary (and to drop its connections when the primary changes, or answers as a
replica), the waiting pool's way to hand connections out. The change feed's blocking connection is made the same way,
apart from the pool (``Store._feed_client``): a read cut by the primary's death fails, and the next one asks again.
"""

from __future__ import annotations

from typing import Any

import msgspec
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

from .pool import CONNECTIONS, WAIT_MS, WaitingPool
from .redis_store import _NO_MAINTENANCE, FEED_OPTIONS, RedisStore
from .resp import fast_packing

MASTER = "mymaster"
"""The primary's name when none is given: the one Redis's own ``sentinel.conf`` uses."""
SENTINEL_TIMEOUT_S = 1.0
"""How long a Sentinel may take to answer which primary it follows (one that does not is skipped for the next)."""


class SentinelAddress(msgspec.Struct, frozen=True):
    """Where the Sentinels listen, and the name they know the primary by."""

    hosts: list[tuple[str, int]]
    master: str = MASTER

    def __str__(self) -> str:
        return f"Sentinel {','.join(f'{h}:{p}' for h, p in self.hosts)} (primary {self.master!r})"


def parse_sentinels(text: str, master: str = MASTER) -> SentinelAddress:
    """``host:port,host:port…`` (an IPv6 address in brackets: ``[::1]:26379``); ``ValueError`` in one line naming
    what is wrong."""
    hosts = []
    for item in (part.strip() for part in text.split(",")):
        host, sep, port = item.rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not item or not sep or not host or not port.isdecimal() or not 0 < int(port) < 65536:
            raise ValueError(f"{item!r} is not host:port (a Sentinel's address, e.g. 127.0.0.1:26379; several are "
                             "separated by commas)")  # fmt: skip
        hosts.append((host, int(port)))
    if not master or any(c.isspace() for c in master):
        raise ValueError(f"{master!r} is no primary's name (as the Sentinels know it, e.g. {MASTER})")
    return SentinelAddress(hosts, master)


class WaitingSentinelPool(SentinelConnectionPool, WaitingPool):
    """Connections to the primary a Sentinel names, handed out as ``WaitingPool`` does: a request waits its turn, and a
    wait that runs out is ``StoreBusy``."""


def sentinel_store(
    address: SentinelAddress, namespace: str = "fp", *, connections: int = CONNECTIONS, wait_ms: int = WAIT_MS, **kw: Any,
) -> RedisStore:  # fmt: skip
    """A store on the primary ``address``'s Sentinels name; ``kw`` as ``RedisStore``'s (``waitaof``, ``replicas``…)."""
    sentinel = Sentinel(address.hosts, sentinel_kwargs={"socket_timeout": SENTINEL_TIMEOUT_S,
                                                        "socket_connect_timeout": SENTINEL_TIMEOUT_S})  # fmt: skip
    client = sentinel.master_for(
        address.master, connection_pool_class=WaitingSentinelPool, decode_responses=False, health_check_interval=10,
        max_connections=connections, timeout=wait_ms / 1000, **_NO_MAINTENANCE,
    )  # fmt: skip
    store = RedisStore(fast_packing(client), namespace, **kw)
    store.feed_open = lambda timeout: sentinel.master_for(address.master, socket_timeout=timeout, **FEED_OPTIONS)
    store.also_close.append(sentinel)
    return store
