"""HEAD attacked (docs/limits.md, "The request itself"): HEAD is GET's headers without a body on every GET route
but the streamed ones, which answer 405.

- **A HEAD of the event stream held the connection.** HEAD ran the stream's handler, which sent a 200's headers and
  then its body as the game went on, forever: the connection stayed open, Sanic logged an error at the first event,
  and a request pipelined after the HEAD on that connection was never answered.
- **The documentation said 405** for HEAD everywhere while every GET route answered it 200.

The answers are read off one raw connection, by HTTP's own framing (a HEAD's answer has no body, whatever its
``Content-Length`` says), so a body sent after a HEAD's headers would be read as the next answer and fail the test.
"""

from __future__ import annotations

import asyncio
import re

from tests.attack.conftest import inproc, settings


async def answers(base_url: str, requests: list[tuple[str, str]]) -> list[tuple[int, dict[str, str], bytes]]:
    """Send every request at once on one connection (pipelined) and read an answer to each: status, headers, body."""
    host, port = base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"".join(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for method, path in requests))
    await writer.drain()
    out = []
    try:
        for method, _ in requests:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            status = int(head.split(b" ", 2)[1])
            headers = {k.lower(): v.strip() for k, _, v in (line.decode().partition(":") for line in head.split(b"\r\n")[1:] if line)}
            length = int(headers.get("content-length", "0"))
            body = b"" if method == "HEAD" else await asyncio.wait_for(reader.readexactly(length), 10)
            out.append((status, headers, body))
    finally:
        writer.close()
    return out


async def test_a_request_pipelined_after_a_head_of_the_event_stream_is_answered(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        game_id = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
        await api.post(f"/games/{game_id}/seats", json={"name": "ann"})  # events arrive while the HEAD is open
        got = await answers(str(api.base_url), [("HEAD", f"/games/{game_id}/events/stream"), ("GET", "/healthz")])
    (status, headers, _), (after, _, body) = got
    assert status == 405 and headers["allow"] == "GET", (status, headers)
    assert headers["content-type"].startswith("application/json"), headers  # the error's headers, never a stream's
    assert after == 200 and b'"ok":true' in body, (after, body)


async def test_head_of_an_export_is_refused_not_streamed(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        game_id = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
        got = await answers(str(api.base_url), [("HEAD", f"/games/{game_id}/export"), ("HEAD", "/tournaments/t_0123456789abcdef/export"),
                                               ("GET", "/healthz")])
    assert [(status, headers.get("allow")) for status, headers, _ in got[:2]] == [(405, "GET"), (405, "GET")], got
    assert got[2][0] == 200, got[2]


async def test_head_is_gets_headers_without_its_body(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        game_id = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
        paths = ["/healthz", f"/games/{game_id}", f"/games/{game_id}/events", "/games/g_0000000000000000"]
        got = await answers(str(api.base_url), [(m, p) for p in paths for m in ("GET", "HEAD")] + [("GET", "/healthz")])
    for path, (get, head) in zip(paths, zip(got[0::2], got[1::2]), strict=False):
        assert head[0] == get[0], (path, head[0], get[0])  # the same status (404 for the game that is not there)
        assert head[1]["content-type"] == get[1]["content-type"], path
        assert int(head[1]["content-length"]) == len(get[2]), path  # GET's length, and no body: the next answer parsed
    assert got[-1][0] == 200 and re.search(rb'"ok":\s*true', got[-1][2]), got[-1]
