"""A real Sanic server in the test's event loop, on a free loopback port, with an httpx client."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator

import httpx
from sanic import Sanic


@contextlib.asynccontextmanager
async def serving(app: Sanic) -> AsyncIterator[httpx.AsyncClient]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # Sanic reads port 0 as "the default, 8000": bind a free port ourselves
    server = await app.create_server(sock=sock, return_asyncio_server=True, access_log=False)
    assert server is not None
    await server.startup()
    await server.before_start()
    await server.after_start()
    await server.start_serving()
    port = server.server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        await server.before_stop()
        server.close()
        await server.wait_closed()
        await server.after_stop()
