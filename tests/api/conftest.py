"""A running service per test, on each store: the embedded one, a real Redis and a real Redis Cluster."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest

from service.api.app import create_app
from service.api.settings import Settings
from tests.http import TLS, serving
from tests.stores import drop_namespace_at, namespace, need_redis

ADMIN = "admin-secret-for-tests"

_app_count = 0


def make_settings(kind: str, tmp_path, **overrides) -> Settings:
    # no rate limits (the tests create hundreds of games from one address) and no idle close: tests/api/test_limits.py
    # and test_idle_close.py turn them on
    base = {"data_dir": tmp_path / "data", "admin_token": ADMIN, "runner_interval_ms": 250, "rate_limits": False,
            "human_pace_ms": 0,
            "idle_close_ms": 0}
    if kind == "redis":
        base.update(redis_url=need_redis(), namespace=namespace())
    elif kind == "cluster":  # the service finds out by itself that the URL names a cluster node (cluster="auto")
        from tests.cluster import running

        base.update(redis_url=running().url, namespace=namespace())
    base.update(overrides)
    return Settings(**base)


def fresh_app(settings: Settings):
    global _app_count
    _app_count += 1
    app = create_app(settings, name=f"free_parking_test_{_app_count}")
    app.config.TOUCHUP = False  # Sanic rewrites its classes once per process; many test servers share one
    return app


@pytest.fixture(params=["embedded", "redis", "cluster"])
def store_kind(request):
    if request.param == "cluster":
        request.getfixturevalue("redis_cluster")  # started once per session, on the first test that needs it
    return request.param


@contextlib.asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on a live service of ``settings`` (``client.app``: the Sanic app); its Redis keys dropped after."""
    app = fresh_app(settings)
    try:
        async with serving(app) as client:
            client.app = app
            yield client
    finally:
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)


@pytest.fixture
async def api(store_kind, tmp_path):
    """An httpx client on a live service; ``api.app`` is the Sanic app."""
    async with served(make_settings(store_kind, tmp_path)) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


ADMIN_HEADERS = bearer(ADMIN)


@pytest.fixture(params=["embedded", "redis"])
def live_kind(request):
    """The stores ``live`` runs on. Not the cluster by default: the tests on ``live`` play dozens of whole games
    through a service process, minutes of CI time, on code paths the in-process ``api`` tests already run on the
    cluster; ``tests/api/test_cluster.py`` runs one ``live`` service on it (``parametrize("live_kind", ["cluster"])``).
    """
    return request.param


@pytest.fixture
async def live(live_kind, tmp_path, request):
    """The real ``python -m service`` in its own process (so client and server use both cores), with an
    httpx client on it; on the stores of ``live_kind``, with the settings of a ``live_settings(**overrides)`` mark."""
    import os
    import subprocess
    import sys

    import httpx

    from tests.servers import free_port, wait_healthy

    if live_kind == "cluster":
        request.getfixturevalue("redis_cluster")
    marker = request.node.get_closest_marker("live_settings")
    settings = make_settings(live_kind, tmp_path, **(marker.kwargs if marker else {}))
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(settings.to_env())
    port = free_port()
    log = tmp_path / "live.log"
    request.node.service_logs = [*getattr(request.node, "service_logs", []), ("log of the live service", log)]
    with log.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 - started once per test, before any request: nothing to block
            [sys.executable, "-m", "service", "serve", "--port", str(port), "--data", str(settings.data_dir)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_healthy(port, proc)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30, verify=TLS) as client:
            yield client
    finally:
        proc.terminate()
        proc.wait(10)
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)
