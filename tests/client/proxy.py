"""A TCP proxy in the test's event loop that drops a connection on purpose: the first ``cut_after`` bytes of the
service's answer pass, then both ends are closed, mid-stream — a dropped connection as a client meets it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from tests.servers import free_port


class Proxy:
    def __init__(self, port: int, cut_after: int) -> None:
        self.upstream, self.cut_after = port, cut_after
        self.requests: list[bytes] = []
        """The head of each request received, in order."""
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, budget: int | None) -> None:
        sent = 0
        try:
            while data := await reader.read(4096):
                if budget is not None and sent + len(data) >= budget:
                    writer.write(data[: budget - sent])
                    await writer.drain()
                    return
                writer.write(data)
                await writer.drain()
                sent += len(data)
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        head = await client_r.readuntil(b"\r\n\r\n")
        first = not self.requests
        self.requests.append(head)
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        up_w.write(head)
        await up_w.drain()
        down = asyncio.create_task(self._pipe(up_r, client_w, self.cut_after if first else None))
        up = asyncio.create_task(self._pipe(client_r, up_w, None))
        await down
        up.cancel()
        up_w.close()
        client_w.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Proxy]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        try:
            yield self
        finally:
            server.close()
