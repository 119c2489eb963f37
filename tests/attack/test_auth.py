"""A token that is not UTF-8 is a 500 on every route that reads the caller.

Sanic decodes header bytes that are not UTF-8 with ``surrogateescape``; ``auth.caller`` (and ``auth.is_admin`` on
``POST /players``) then calls ``token.encode()``, which raises ``UnicodeEncodeError`` on the lone surrogate: **500
internal_error**, "this is a bug", for one byte any client can send. Expected: 401 ``unauthorized`` (a malformed token,
limits.md) — and it holds whether or not an admin token is configured (``digest(token)`` encodes too).
"""

from __future__ import annotations

import asyncio
import json

import pytest


async def _raw(base: str, request: bytes) -> tuple[int, dict]:
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    data = await reader.read(65536)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body or b"null")


@pytest.mark.parametrize("route", ["GET /games/{game}", "POST /games/{game}/commands", "POST /players",
                                   "POST /games", "GET /tournaments/t_0000000000000000"])
async def test_a_token_with_a_byte_that_is_not_utf8_is_a_401_not_a_500(api, route):
    game = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    method, path = route.format(game=game).split(" ")
    body = b'{"name": "Ann"}' if path == "/players" else b'{"kind": "free-parking", "seats": 2}' if path == "/games" else b"{}"
    request = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
               f"Connection: close\r\n").encode() + b"Authorization: Bearer fpt_\xff\r\n\r\n" + body
    status, answer = await _raw(str(api.base_url).rstrip("/"), request)
    assert status < 500, f"{route} with 'Authorization: Bearer fpt_\\xff' answered {status} {answer}"
