"""A real Sanic server in the test's event loop, on a free loopback port, with an httpx client."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator

import httpx
from sanic import Sanic

from service.api.app import serving_here

TLS = ssl.create_default_context()
"""One TLS context for every test client: httpx builds one a client otherwise (loading the CA bundle, ~45 ms), and
the clients speak plain HTTP to loopback and use none."""


@contextlib.asynccontextmanager
async def serving(app: Sanic) -> AsyncIterator[httpx.AsyncClient]:
    async with serving_here(app) as url, httpx.AsyncClient(base_url=url, timeout=30, verify=TLS) as client:
        yield client
