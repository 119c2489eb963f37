"""A real Sanic server in the test's event loop, on a free loopback port, with an httpx client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
from sanic import Sanic

from service.api.app import serving_here


@contextlib.asynccontextmanager
async def serving(app: Sanic) -> AsyncIterator[httpx.AsyncClient]:
    async with serving_here(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        yield client
