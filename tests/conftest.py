"""Fixtures every test may use."""

from __future__ import annotations

import pytest

from service.sim.games import simulate
from tests.servers import servers  # noqa: F401 (a fixture: redis-servers of a test's own, for every test)


@pytest.fixture(scope="session")
def finished_game():
    """A four-seat greedy game played to its end, reused read-only by tests that need a finished log."""
    return simulate("free-parking", 4, bytes(range(32)), "finished-game", ["greedy"] * 4)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A real three-master Redis Cluster on loopback ports (``tests/cluster.py``), started at the first test that
    asks for it and stopped at the end of the session. Skipped without redis-server / redis-cli, except in CI."""
    from tests import cluster as clusters

    clusters.need_cluster_tools()
    cluster = clusters.Cluster(tmp_path_factory.mktemp("redis-cluster")).start()
    clusters._running = cluster  # for make_settings("cluster") in tests/api
    yield cluster
    clusters._running = None
    cluster.stop()


@pytest.fixture(params=["embedded", "redis", "cluster"])
async def store(request, tmp_path):
    """The same store contract on every store: fakeredis journalled under ``tmp_path``, a real Redis, and a real
    three-master Redis Cluster (``redis_cluster``)."""
    from service.store.embedded import EmbeddedStore
    from service.store.redis_store import RedisStore
    from tests.stores import drop_namespace, namespace, need_redis

    if request.param == "embedded":
        s = await EmbeddedStore(tmp_path / "data").open()
        yield s
        await s.close()
        return
    ns = namespace()
    if request.param == "cluster":
        s = RedisStore.from_url(request.getfixturevalue("redis_cluster").url, namespace=ns, cluster=True)
    else:
        s = RedisStore.from_url(need_redis(), namespace=ns)
    yield s
    await drop_namespace(s.r, ns)
    await s.close()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the tail of each service log it kept (``item.service_logs``: title, path), so
    a failure seen once on a busy machine can be explained from its report alone."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for title, path in getattr(item, "service_logs", []):
            lines = path.read_text(errors="replace").splitlines() if path.exists() else ["(no log)"]
            report.sections.append((title, "\n".join(lines[-80:])))
