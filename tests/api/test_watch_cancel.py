"""A change feed (or a game's watch) that is cancelled stops, even when the store client swallows the cancellation:
once, redis-py's cluster pipeline answered a cancelled read as an empty one, the feed went on polling, and the test's
event loop waited for it for ever (a `make test` hung in teardown)."""

from __future__ import annotations

import asyncio

from service.api.watch import ChangeFeed


class SwallowingStore:
    """A cluster store whose read, when cancelled, returns nothing instead of raising."""

    cluster = True

    def __init__(self) -> None:
        self.reads = 0
        self.swallowed = asyncio.Event()

    async def log_heads(self) -> dict[int, bytes]:
        return {0: b"0-0"}

    async def appended_since(self, heads, block_ms):
        self.reads += 1
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.swallowed.set()
            return []
        return []


async def test_a_cancelled_feed_stops_though_its_store_swallowed_the_cancellation():
    store = SwallowingStore()
    feed = ChangeFeed(store, wake=lambda game_id: None)
    await feed.start()
    task = feed._task
    while store.reads == 0:
        await asyncio.sleep(0)
    task.cancel()
    await store.swallowed.wait()
    done, _ = await asyncio.wait([task], timeout=10)  # it would poll for ever: the bound ends a failing test only
    assert task in done and task.cancelled()
    assert store.reads == 1  # not one more read after the cancellation
