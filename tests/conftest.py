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


BUDGET_SECONDS = 8 * 60
"""``make test``'s budget here (two cores): what needs long counts goes in ``make soak`` (``tests/depth.py``)."""
SLOW_TEST_SECONDS = 20.0
"""A test over this (setup, call and teardown) is named at the end of the run: take its count from ``tests/depth.py``."""

_timing: dict[str, object] = {"started": None, "tests": {}}


def pytest_sessionstart(session):
    import time

    _timing["started"] = time.monotonic()


def pytest_runtest_logreport(report):
    """Each test's whole time (on the controller, xdist workers' reports included)."""
    tests = _timing["tests"]
    tests[report.nodeid] = tests.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, config):
    """The wall time against the budget, and every test over ``SLOW_TEST_SECONDS`` (docs/testing.md has the
    rule): printed by the controller only, once per run."""
    import time

    if hasattr(config, "workerinput") or _timing["started"] is None or not _timing["tests"]:
        return
    wall = round(time.monotonic() - _timing["started"], 1)  # rounded first: 479.99 s is 8 min 00.0 s, not 7 min 60.0 s
    tests: dict[str, float] = _timing["tests"]
    slow = sorted(((t, nodeid) for nodeid, t in tests.items() if t > SLOW_TEST_SECONDS), reverse=True)
    write = terminalreporter.write_line
    write("")
    write(f"make test: {len(tests)} tests, wall {int(wall // 60)} min {wall % 60:04.1f} s "
          f"(budget {BUDGET_SECONDS // 60} min{', over it' if wall > BUDGET_SECONDS else ''})")  # fmt: skip
    if slow:
        write(f"tests over {SLOW_TEST_SECONDS:.0f} s — give their counts a make test value in tests/depth.py "
              f"and the rest to make soak:")  # fmt: skip
        for seconds, nodeid in slow:
            write(f"  {seconds:6.1f} s  {nodeid}")
