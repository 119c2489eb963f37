"""``Client`` and ``AsyncClient``: the same operations (``core.Core``), carried out by a blocking ``httpx.Client`` or
an ``httpx.AsyncClient``. All they add is how a call is made and how a retry waits (``time.sleep`` or
``asyncio.sleep``); every operation's logic is the core's, once.

    with Client("http://127.0.0.1:8000", key=PlayerKey.load_or_create("me.key")) as fp:
        fp.register("Ann")
        fp.join_queue("free-parking")
        for event in fp.player_events():
            if isinstance(event, Turn):
                view = fp.view(event.game_id)
                ...
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

from .core import OPERATIONS, Call, Core, Op
from .models import GameEvent, PlayerEvent
from .receipts import Receipts
from .retry import RetryPolicy
from .signing import PlayerKey
from .streams import afollow, follow, game_stream, player_stream

OnRetry = Callable[[Call, float, "httpx.Response | httpx.TransportError"], None]
"""Told before each wait: the call, the seconds it will wait, and the answer (or error) that made it wait."""


class Client(Core):
    """A blocking client of the service at ``base_url``. ``key``: the player's own (``PlayerKey``), which keys their
    seats and signs their commands; ``retry``: how long 429s, 503s and dropped connections are waited out;
    ``on_retry``: told of each wait (for a log)."""

    def __init__(self, base_url: str, *, token: str | None = None, key: PlayerKey | None = None,
                 receipts: Receipts | None = None, retry: RetryPolicy | None = None, timeout: float = 30.0,
                 on_retry: OnRetry | None = None, http: httpx.Client | None = None) -> None:
        super().__init__(token=token, key=key, receipts=receipts, retry=retry)
        self.http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self.on_retry = on_retry

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def _run(self, op: Op[Any]) -> Any:
        try:
            call = next(op)
            while True:
                call = op.send(self._send(call))
        except StopIteration as done:
            return done.value
        finally:
            op.close()

    def _send(self, call: Call) -> httpx.Response:
        attempts = self.retry.start()
        while True:
            try:
                response = self.http.request(call.method, call.path, json=call.json, params=call.params,
                                             headers=call.request_headers())
            except httpx.TransportError as e:
                if (wait := attempts.after_error(e, call.idempotent)) is None:
                    raise
                outcome: httpx.Response | httpx.TransportError = e
            else:
                if (wait := attempts.after_response(response)) is None:
                    return response
                outcome = response
            if self.on_retry is not None:
                self.on_retry(call, wait, outcome)
            time.sleep(wait)

    def player_events(self, after: str | None = None) -> Iterator[PlayerEvent]:
        """The player's stream (``Seated``, ``Turn``, ``GameOver``, ``QueueEvent``), after the event id ``after``
        (default: from the oldest kept), reconnecting after a drop from the last one received. It never ends."""
        return follow(self.http, player_stream(self, after))

    def game_events(self, game_id: str, after: int = 0) -> Iterator[GameEvent]:
        """A game's events after seq ``after``, each once and in order across reconnections, until the game's end."""
        return follow(self.http, game_stream(self, game_id, after))


class AsyncClient(Core):
    """``Client`` for an event loop: the same operations, awaited."""

    def __init__(self, base_url: str, *, token: str | None = None, key: PlayerKey | None = None,
                 receipts: Receipts | None = None, retry: RetryPolicy | None = None, timeout: float = 30.0,
                 on_retry: OnRetry | None = None, http: httpx.AsyncClient | None = None) -> None:
        super().__init__(token=token, key=key, receipts=receipts, retry=retry)
        self.http = http or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self.on_retry = on_retry

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _run(self, op: Op[Any]) -> Any:
        try:
            call = next(op)
            while True:
                call = op.send(await self._send(call))
        except StopIteration as done:
            return done.value
        finally:
            op.close()

    async def _send(self, call: Call) -> httpx.Response:
        attempts = self.retry.start()
        while True:
            try:
                response = await self.http.request(call.method, call.path, json=call.json, params=call.params,
                                                   headers=call.request_headers())
            except httpx.TransportError as e:
                if (wait := attempts.after_error(e, call.idempotent)) is None:
                    raise
                outcome: httpx.Response | httpx.TransportError = e
            else:
                if (wait := attempts.after_response(response)) is None:
                    return response
                outcome = response
            if self.on_retry is not None:
                self.on_retry(call, wait, outcome)
            await asyncio.sleep(wait)

    def player_events(self, after: str | None = None) -> AsyncIterator[PlayerEvent]:
        """``Client.player_events``, as an async iterator."""
        return afollow(self.http, player_stream(self, after))

    def game_events(self, game_id: str, after: int = 0) -> AsyncIterator[GameEvent]:
        """``Client.game_events``, as an async iterator."""
        return afollow(self.http, game_stream(self, game_id, after))


def _blocking(name: str) -> Callable[..., Any]:
    operation = getattr(Core, name)

    @functools.wraps(operation)
    def method(self: Client, *args: Any, **kwargs: Any) -> Any:
        return self._run(operation(self, *args, **kwargs))

    return method


def _awaited(name: str) -> Callable[..., Any]:
    operation = getattr(Core, name)

    @functools.wraps(operation)
    async def method(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        return await self._run(operation(self, *args, **kwargs))

    return method


for _name in OPERATIONS:
    setattr(Client, _name, _blocking(_name))
    setattr(AsyncClient, _name, _awaited(_name))
