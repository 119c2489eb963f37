"""More requests than store connections: a request waits for a free connection (service/store/pool.py), and past
the wait the store is *busy* — never a 500, never "unreachable" — and nothing is written."""

from __future__ import annotations

import asyncio

import pytest

from service.store.embedded import EmbeddedStore
from service.store.redis_store import RedisStore
from service.store.store import StoreBusy, StoreUnavailable
from tests.store.test_store_contract import TEMPLATE, batches, request
from tests.stores import drop_namespace, namespace, need_redis


@pytest.fixture(params=["embedded", "redis"])
async def small(request, tmp_path):
    """A store with two connections and a wait for one of ``request.param`` ms (a test's ``wait_ms`` mark, else 200)."""
    mark = request.node.get_closest_marker("wait_ms")
    wait_ms = mark.args[0] if mark else 200
    if request.param == "embedded":
        store = await EmbeddedStore(tmp_path / "data", connections=2, wait_ms=wait_ms).open()
        yield store
        await store.close()
        return
    ns = namespace()
    store = RedisStore.from_url(need_redis(), namespace=ns, connections=2, wait_ms=wait_ms)
    yield store
    await drop_namespace(store.r, ns)
    await store.close()


async def test_a_request_waits_for_a_connection_and_past_the_wait_the_store_is_busy(small):
    pool = small.r.connection_pool
    held = [await pool.get_connection() for _ in range(2)]  # every connection in use
    with pytest.raises(StoreBusy) as busy:
        await small.meta("g-busy")
    assert isinstance(busy.value, StoreUnavailable)  # whoever handles unavailability handles it (runner, projector)
    if small.name == "embedded":  # its writes call fakeredis directly, one at a time under its lock: no connection
        assert (await small.append(request("g-busy-write", batches(TEMPLATE)[0]))).outcome == "ok"
    else:
        with pytest.raises(StoreBusy):
            await small.append(request("g-busy", batches(TEMPLATE)[0]))
    reading = asyncio.ensure_future(small.meta("g-busy"))  # waits its turn...
    for _ in range(5):
        await asyncio.sleep(0)  # (no clock: it runs until it waits for the pool)
    assert not reading.done()
    await pool.release(held.pop())  # ...and gets the connection freed meanwhile
    assert await reading is None  # nothing was written by the refused append
    await pool.release(held.pop())
    assert (await small.append(request("g-busy", batches(TEMPLATE)[0]))).outcome == "ok"


@pytest.mark.wait_ms(60_000)  # a wait no busy machine runs out of: the reads queue, none is refused
async def test_a_thousand_concurrent_reads_on_two_connections_all_answer(small):
    await small.append(request("g-many", batches(TEMPLATE)[0]))
    metas = await asyncio.gather(*(small.meta("g-many") for _ in range(1000)))
    assert all(m is not None and m["version"] == metas[0]["version"] for m in metas)
