"""Fixtures every test may use."""

from __future__ import annotations

import pytest

from service.simulate import simulate


@pytest.fixture(scope="session")
def finished_game():
    """A four-seat greedy game played to its end, reused read-only by tests that need a finished log."""
    return simulate("free-parking", 4, bytes(range(32)), "finished-game", ["greedy"] * 4)


@pytest.fixture(params=["embedded", "redis"])
async def store(request, tmp_path):
    """The same store contract on both stores: fakeredis journalled under ``tmp_path``, and a real Redis."""
    from service.events.embedded import EmbeddedStore
    from service.events.store import RedisStore
    from tests.stores import drop_namespace, namespace, need_redis

    if request.param == "embedded":
        s = await EmbeddedStore(tmp_path / "data").open()
        yield s
        await s.close()
        return
    ns = namespace()
    s = RedisStore.from_url(need_redis(), namespace=ns)
    yield s
    await drop_namespace(s.r, ns)
    await s.close()
