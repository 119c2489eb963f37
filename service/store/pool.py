"""Connections to the store, shared by a worker's requests: more requests than connections wait their turn.

redis-py's default pool refuses a request past its size at once (``MaxConnectionsError``), which a burst of reads
turned into 500s and false "store unavailable" answers while the store was fine. ``WaitingPool`` makes a request
wait for a connection instead, for a bounded time; past it the store is *busy* (``StoreBusy``: a 503 that says
retry shortly), never *unreachable*. Both stores use it: fakeredis's connections are redis-py's too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis import exceptions as rex
from redis.asyncio.connection import BlockingConnectionPool

from .store import StoreBusy

CONNECTIONS = 64
"""Connections a worker keeps to the store (a command's append and the views' reads are batched per round trip, so a
busy worker needs far fewer than it has requests in flight)."""
WAIT_MS = 2000
"""How long a request waits for a free connection before it is answered 503 ``store_busy``."""


class WaitingPool(BlockingConnectionPool):
    """A blocking pool whose wait, when it runs out, says the store is busy rather than that it cannot be reached."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().get_connection(*args, **kwargs)
        except rex.ConnectionError as e:
            if isinstance(e.__cause__, asyncio.TimeoutError):  # the pool's own wait ran out: every connection busy
                raise StoreBusy(f"all {self.max_connections} store connections stayed busy for {self.timeout} s") from e
            raise
