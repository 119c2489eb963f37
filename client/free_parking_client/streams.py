"""Server-Sent Events that survive a dropped connection: a game's events (``GET /games/{id}/events/stream``) and the
player's own stream (``GET /players/me/stream``), each resumed after the last message received with
``Last-Event-ID`` — nothing missed, nothing repeated (docs/player-stream.md, docs/api.md).

``Follow`` is the part both clients share: the request to (re)open, what each message is, how long to wait before
reconnecting. ``follow`` and ``afollow`` carry it out with ``httpx-sse``, in a thread's way and an event loop's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

import httpx
import msgspec
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse

from .core import Call, Core, error_of
from .models import GameEvent, PlayerEvent, QueueEvent, player_event_of
from .retry import RetryPolicy

T = TypeVar("T")
END = object()
"""What a message that ends the stream reads as (a finished game's ``event: end``)."""
TIMEOUT = httpx.Timeout(30.0, read=45.0)
"""A stream sends a ``: ping`` at least every 15 s: three missed, and the connection is taken for dropped."""


class Follow(Generic[T]):
    """One stream's place: the id of the last message received, and the attempts since the last message."""

    def __init__(self, path: str, token: str | None, last_id: str | None, read: Callable[[ServerSentEvent], Any],
                 policy: RetryPolicy) -> None:
        self.path, self.token, self.last_id, self._read, self.policy = path, token, last_id, read, policy
        self.attempts = policy.start()
        self.connections = 0

    def call(self) -> Call:
        """The request that opens the stream, or reopens it after the last message received."""
        self.connections += 1
        headers = {"last-event-id": self.last_id} if self.last_id else {}  # httpx-sse adds Accept
        return Call("GET", self.path, token=self.token, headers=headers, idempotent=True)

    def opened(self, response: httpx.Response) -> float | None:
        """``None``: read the stream; else the seconds to wait before opening it again (a 429, a 503). Other errors
        raise ``ApiError``; a 204 (a finished game asked past its end) raises ``Done``."""
        if response.status_code == 204:
            raise Done
        if response.status_code < 400:
            return None
        wait = self.attempts.after_response(response)
        if wait is None:
            raise error_of(response)  # its body was read by the driver
        return wait

    def message(self, sse: ServerSentEvent) -> Any:
        """What ``sse`` is (``END``, an item, or ``None``: nothing), the stream's place moved past it. A message with
        no data is nothing: httpx-sse hands one on for the blank line after each ``: ping`` once an id was seen."""
        if not sse.data:
            return None
        item = self._read(sse)
        if item is not END and sse.id:
            self.last_id = sse.id
        self.attempts = self.policy.start()
        return item

    def dropped(self, error: Exception) -> float:
        """The wait before reconnecting after ``error`` (a dropped connection, or the server closing the stream before
        its end); the error is raised once the waits since the last message would pass the policy's total."""
        wait = self.attempts.backoff()
        if wait is None:
            raise error
        return wait


class Done(Exception):
    """The stream has nothing more to send."""


class Closed(httpx.TransportError):
    """The server ended a stream that was not over: it is opened again after the last message received."""


def follow(http: httpx.Client, state: Follow[T]) -> Iterator[T]:
    """The items of the stream ``state`` describes, reconnecting after a drop until it ends."""
    while True:
        call = state.call()
        try:
            with connect_sse(http, "GET", call.path, headers=call.request_headers(), timeout=TIMEOUT) as source:
                if source.response.status_code >= 400:
                    source.response.read()
                wait = state.opened(source.response)
                if wait is None:
                    for sse in source.iter_sse():
                        item = state.message(sse)
                        if item is END:
                            return
                        if item is not None:
                            yield item
                    wait = state.dropped(Closed("the stream closed before its end"))
        except Done:
            return
        except httpx.TransportError as e:
            wait = state.dropped(e)
        time.sleep(wait)


async def afollow(http: httpx.AsyncClient, state: Follow[T]) -> AsyncIterator[T]:
    """``follow`` for an event loop."""
    while True:
        call = state.call()
        try:
            async with aconnect_sse(http, "GET", call.path, headers=call.request_headers(), timeout=TIMEOUT) as source:
                if source.response.status_code >= 400:
                    await source.response.aread()
                wait = state.opened(source.response)
                if wait is None:
                    async for sse in source.aiter_sse():
                        item = state.message(sse)
                        if item is END:
                            return
                        if item is not None:
                            yield item
                    wait = state.dropped(Closed("the stream closed before its end"))
        except Done:
            return
        except httpx.TransportError as e:
            wait = state.dropped(e)
        await asyncio.sleep(wait)


def game_reader(keep: Callable[[Any], None]) -> Callable[[ServerSentEvent], Any]:
    """A game stream's messages as ``GameEvent``s, each one's receipt kept; ``end`` ends it."""

    def read(sse: ServerSentEvent) -> Any:
        if sse.event == "end":
            return END
        event = msgspec.json.decode(sse.data, type=GameEvent)
        keep(event.receipt)
        return event

    return read


def player_reader(seen: Callable[[PlayerEvent], None]) -> Callable[[ServerSentEvent], Any]:
    """The player stream's messages as typed ``PlayerEvent``s, each shown to ``seen`` first."""

    def read(sse: ServerSentEvent) -> Any:
        event = player_event_of(sse.event, sse.id, msgspec.json.decode(sse.data))
        seen(event)
        return event

    return read


def player_stream(core: Core, after: str | None) -> Follow[PlayerEvent]:
    """The player's stream from after ``after`` (``None``: from the oldest kept); a queue's ``seated`` gives the game
    the evidence the player queued with."""

    def seen(event: PlayerEvent) -> None:
        if isinstance(event, QueueEvent) and event.status == "seated" and event.game_id is not None:
            core.seated_by_queue(event.game_id, event.seat)

    return Follow("/players/me/stream", core.token, after, player_reader(seen), core.retry)


def game_stream(core: Core, game_id: str, after: int) -> Follow[GameEvent]:
    """A game's events after seq ``after``, redacted for the caller, each one's receipt kept."""
    return Follow(f"/games/{game_id}/events/stream", core.token_for(game_id), str(after) if after else None,
                  game_reader(core.receipts.keep), core.retry)
