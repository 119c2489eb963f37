"""A running service per test, on each store: the embedded one and a real Redis."""

from __future__ import annotations

import pytest

from service.api.app import create_app
from service.api.settings import Settings
from tests.http import serving
from tests.stores import drop_namespace, namespace, need_redis

ADMIN = "admin-secret-for-tests"

_app_count = 0


def make_settings(kind: str, tmp_path, **overrides) -> Settings:
    base = dict(data_dir=tmp_path / "data", admin_token=ADMIN, runner_interval_ms=250)
    if kind == "redis":
        base.update(redis_url=need_redis(), namespace=namespace())
    base.update(overrides)
    return Settings(**base)


def fresh_app(settings: Settings):
    global _app_count
    _app_count += 1
    app = create_app(settings, name=f"free_parking_test_{_app_count}")
    app.config.TOUCHUP = False  # Sanic rewrites its classes once per process; many test servers share one
    return app


@pytest.fixture(params=["embedded", "redis"])
def store_kind(request):
    return request.param


@pytest.fixture
async def api(store_kind, tmp_path):
    """An httpx client on a live service; ``api.app`` is the Sanic app."""
    settings = make_settings(store_kind, tmp_path)
    app = fresh_app(settings)
    async with serving(app) as client:
        client.app = app
        yield client
    if store_kind == "redis":
        import redis.asyncio as aioredis

        r = aioredis.from_url(settings.redis_url)
        await drop_namespace(r, settings.namespace)
        await r.aclose()


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


ADMIN_HEADERS = bearer(ADMIN)


@pytest.fixture
async def live(store_kind, tmp_path):
    """The real ``python -m service`` in its own process (so client and server use both cores), with an
    httpx client on it; parametrised over the two stores like ``api``."""
    import os
    import subprocess
    import sys

    import httpx

    from tests.api.test_restart import free_port, wait_healthy

    settings = make_settings(store_kind, tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(settings.to_env())
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port), "--data", str(settings.data_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(port, proc)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        proc.terminate()
        proc.wait(10)
        if store_kind == "redis":
            import redis.asyncio as aioredis

            r = aioredis.from_url(settings.redis_url)
            await drop_namespace(r, settings.namespace)
            await r.aclose()
