"""Request ids and metrics attacked (docs/operating.md): a caller's X-Request-Id and HTTP method reach what the
service keeps and says.

- **A request id with a trailing newline.** ``REQUEST_ID`` is matched with ``re.match`` and ``$``, and Python's ``$``
  also matches before a final ``\\n``: ``X-Request-Id: abc\\n`` (a bare LF inside the header line, which Sanic keeps in
  the value) is kept as the caller's id. The header answered says ``abc`` (the LF is dropped on the way out), the
  error's ``detail.request_id`` and the access log say ``"abc\\n"``: the body names a request the header does not,
  and an id outside the documented 1-64 of ``A-Z a-z 0-9 . _ : -`` is written to the logs.
- **Series a client makes.** ``free_parking_request_seconds`` and ``free_parking_responses_total`` are labelled by
  ``request.method`` as sent: any token is a method to Sanic (an unknown one is answered 404 or 405), so every new
  made-up method adds a histogram (15 series) and a counter to every scrape, for good — unbounded memory in the
  worker and, with several workers, in the multi-process files, and a scrape that grows without end.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.attack.conftest import inproc, proc_service, settings  # noqa: F401  (proc_service: fixture)
from tests.attack.reviewer_ports import _reviewer_ports  # noqa: F401  (fixture)

DOCUMENTED_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


async def raw_request(base_url: str, request: bytes) -> bytes:
    host, port = base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)  # one answer, whether or not the server closes
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    body = await asyncio.wait_for(reader.readexactly(int(length.group(1))), 10) if length else b""
    writer.close()
    return head + body


async def test_a_request_id_with_a_trailing_newline_is_not_kept_as_the_callers(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        answer = await raw_request(str(api.base_url), b"GET /games/nope HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\n\r\n"
                                                      b"Connection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    header = next(line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n") if line.lower().startswith(b"x-request-id:"))
    said = json.loads(body)["error"]["detail"]["request_id"]
    assert said == header, (said, header)  # the body names the request the header names
    assert DOCUMENTED_ID.fullmatch(said), said  # and it is an id as documented


async def test_made_up_http_methods_do_not_add_series_to_the_metrics(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        invented = [f"X{secrets.token_hex(6).upper()}" for _ in range(40)]
        for method in invented:
            for path in (b"/healthz", b"/no/such/path"):
                await raw_request(str(api.base_url), method.encode() + b" " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        text = (await api.get("/metrics")).text
    methods = {s.labels.get("method") for f in text_string_to_metric_families(text) for s in f.samples if "method" in s.labels}
    assert not methods & set(invented), f"{len(methods & set(invented))} made-up methods became label values"
    assert len(methods) <= 10, sorted(methods)  # GET, HEAD, POST, ... and at most one 'other'



async def test_a_client_that_stops_sending_its_body_is_not_answered_a_server_error(tmp_path, proc_service):
    # Sanic's response timeout (60 s by default) read from its own environment variable, to take a second here
    service = proc_service(["--data", str(tmp_path / "data")], SANIC_RESPONSE_TIMEOUT="1").start()
    answer = await raw_request(service.url, b"POST /players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                            b"Content-Length: 50\r\n\r\n{\"na")  # and then nothing
    service.stop()
    status = int(answer.split(b" ", 2)[1])
    body = json.loads(answer.partition(b"\r\n\r\n")[2])
    assert status < 500 and body["error"]["code"] != "internal_error", (status, body)  # a 408 of the one shape, not "a bug"
    assert "server error on POST /players" not in service.log.read_text(), "logged as a server error"


async def test_every_get_route_but_the_streamed_ones_takes_head_too(tmp_path):
    """The service adds HEAD to every GET route itself (service/api/app.py), sanic-ext's /docs routes too; not to the
    three whose answer is a stream (tests/attack/test_head_attacks.py)."""
    streamed = {"games/<game_id:str>/events/stream", "games/<game_id:str>/export", "tournaments/<tournament_id:str>/export",
                "players/me/stream"}
    async with inproc(settings(tmp_path)) as api:
        groups = list(api.app.router.groups.values())
        assert any("/docs" in "/" + g.path for g in groups), [g.path for g in groups]
        assert {g.path for g in groups if "GET" in g.methods and "HEAD" not in g.methods} == streamed


async def test_head_is_answered_where_get_is(tmp_path):
    async with inproc(settings(tmp_path)) as api:
        for path in ("/healthz", "/keys", "/metrics", "/"):
            get, head = await api.get(path), await api.head(path)
            assert get.status_code == 200, (path, get.status_code)
            assert head.status_code == 200 and head.content == b"", (path, head.status_code, head.headers.get("allow"))


def _responses(text: str, route: str) -> dict[str, float]:
    """``free_parking_responses_total`` of one route, by status."""
    return {s.labels["status"]: s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name == "free_parking_responses_total" and s.labels.get("route") == route}


async def test_a_client_that_hangs_up_mid_body_is_counted_as_a_hang_up_not_a_server_error(tmp_path):
    """A client that sends half its body and closes is no failure of the server: /metrics counted it as a 500
    (Sanic's RequestCancelled fell through to its default handler), which pages whoever watches 5xx."""
    async with inproc(settings(tmp_path)) as api:
        host, port = str(api.base_url).removeprefix("http://").split(":")
        before = _responses((await api.get("/metrics")).text, "/players")  # the process's counters: other tests' too
        partial = (b"POST /players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"na",
                   b"POST /players HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"na")
        for request in partial:
            _, writer = await asyncio.open_connection(host, int(port))
            writer.write(request)
            await writer.drain()
            writer.close()
        for _ in range(200):  # the hang-ups are counted once the worker has seen each connection close
            after = _responses((await api.get("/metrics")).text, "/players")
            counted = {status: n - before.get(status, 0) for status, n in after.items() if n != before.get(status, 0)}
            if sum(counted.values()) >= 2:
                break
            await asyncio.sleep(0.05)
    assert counted == {"499": 2.0}, counted
