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
            "human_pace_ms": 0, "human_chance_ms": 0,
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


class LiveService:
    """One ``python -m service`` process on ``settings``, its log kept in ``directory``."""

    def __init__(self, settings: Settings, directory) -> None:
        import os
        import subprocess
        import sys

        from tests.servers import free_port, wait_healthy

        self.settings, self.port, self.log = settings, free_port(), directory / "live.log"
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env.update(settings.to_env())
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(  # noqa: ASYNC220 - started before any request: nothing to block
                [sys.executable, "-m", "service", "serve", "--port", str(self.port), "--data", str(settings.data_dir)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_healthy(self.port, self.proc)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=f"http://127.0.0.1:{self.port}", timeout=30, verify=TLS)

    async def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        if self.settings.redis_url:
            await drop_namespace_at(self.settings.redis_url, self.settings.namespace)


@pytest.fixture(scope="module")
def shared_live_services(tmp_path_factory):
    """The ``live`` services of a module marked ``shared_live``, one per store kind, started at first use: each test
    still gets a client of its own, on a service whose other tests made games and players of their own."""
    import asyncio

    services: dict[str, LiveService] = {}

    def get(kind: str) -> LiveService:
        if kind not in services:
            directory = tmp_path_factory.mktemp(f"live-{kind}")
            services[kind] = LiveService(make_settings(kind, directory), directory)
        return services[kind]

    yield get
    for service in services.values():
        asyncio.run(service.stop())


@pytest.fixture
async def live(live_kind, tmp_path, request):
    """The real ``python -m service`` in its own process (so client and server use both cores), with an
    httpx client on it; on the stores of ``live_kind``, with the settings of a ``live_settings(**overrides)`` mark.

    A module marked ``shared_live`` shares one process per store kind among its tests that set no ``live_settings``
    (starting a service is most of a short browser test's time): its tests make their own players and games, and
    look for nothing they did not make."""
    if live_kind == "cluster":
        request.getfixturevalue("redis_cluster")
    marker = request.node.get_closest_marker("live_settings")
    shared = marker is None and request.node.get_closest_marker("shared_live") is not None
    if shared:
        service = request.getfixturevalue("shared_live_services")(live_kind)
    else:
        service = LiveService(make_settings(live_kind, tmp_path, **(marker.kwargs if marker else {})), tmp_path)
    request.node.service_logs = [*getattr(request.node, "service_logs", []), ("log of the live service", service.log)]
    try:
        async with service.client() as client:
            yield client
    finally:
        if not shared:
            await service.stop()
