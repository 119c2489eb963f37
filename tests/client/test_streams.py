"""Streams that survive a dropped connection (client/free_parking_client/streams.py): the connection is cut
mid-stream by a proxy, the client reconnects with ``Last-Event-ID`` and gets every event once, in order — a game's
events (the async client) and the player's own (the blocking client, in a thread), on both stores."""

from __future__ import annotations

import asyncio

import pytest

from httpx_sse import ServerSentEvent

from free_parking_client import AsyncClient, Client, RetryPolicy, Seated
from free_parking_client.streams import Follow, player_reader
from tests.client.play import bot_seat, two_seats_with_a_bot
from tests.client.proxy import Proxy
from tests.client.test_client import url_of

pytestmark = pytest.mark.shared_live


def test_the_blank_after_a_ping_is_no_message():
    """httpx-sse hands on a message with no data for the blank line after each ``: ping`` once an id was seen: it is
    no event (reading it as one failed every stream at its first ping)."""
    follow = Follow("/players/me/stream", None, None, player_reader(lambda e: None), RetryPolicy())
    assert follow.message(ServerSentEvent(data="", id="5-0")) is None
    turn = follow.message(ServerSentEvent(event="turn", id="6-0", data='{"type":"turn","game_id":"g","seat":1,"version":4}'))
    assert (turn.id, turn.game_id, turn.version, follow.last_id) == ("6-0", "g", 4, "6-0")


async def test_a_game_stream_cut_mid_message_resumes_after_the_last_event_received(live):
    """A game of four bots, read from its first event to its end through a proxy that cuts the first connection
    inside its first few messages: every seq from 1 to the game's last arrives exactly once, the second request
    carries the id of the last event received, and each streamed event's receipt is kept."""
    url = url_of(live)
    async with AsyncClient(url) as fp:
        game_id = (await fp.create_game("free-parking", 4)).game_id
        for _ in range(4):
            await asyncio.to_thread(bot_seat, url, game_id)
        async with Proxy(live.base_url.port, cut_after=2500).running() as proxy, AsyncClient(proxy.url) as through:
            seqs = [e.seq async for e in through.game_events(game_id)]
        last = await fp.view(game_id)
        assert last.finished and seqs == list(range(1, last.version + 1))
        assert len(proxy.requests) == 2 and b"last-event-id" not in proxy.requests[0].lower()
        resumed = [line for line in proxy.requests[1].lower().split(b"\r\n") if line.startswith(b"last-event-id:")]
        assert resumed and 1 <= int(resumed[0].split(b":")[1]) < last.version
        assert len(through.receipts.of(game_id)) == last.version


async def test_the_players_stream_cut_mid_message_resumes_with_nothing_missed_or_repeated(live):
    """A player seated at three games; the blocking client reads their stream through a proxy that cuts the first
    connection after its first messages, until the third ``seated``: the very messages, ids and order a direct
    read gives."""
    url = url_of(live)
    with Client(url) as fp:
        await asyncio.to_thread(fp.register, "Fay")
        games = [await asyncio.to_thread(two_seats_with_a_bot, fp, url) for _ in range(3)]

        def until_seated_at_all(client: Client) -> list:
            read, seated = [], set()
            for event in client.player_events():
                read.append(event)
                seated |= {event.game_id} if isinstance(event, Seated) else set()
                if seated == set(games):
                    return read
            return read

        direct = await asyncio.to_thread(until_seated_at_all, fp)
        async with Proxy(live.base_url.port, cut_after=600).running() as proxy:
            with Client(proxy.url, token=fp.token) as through:
                resumed = await asyncio.wait_for(asyncio.to_thread(until_seated_at_all, through), 120)
        assert [(e.id, e.type, e.raw) for e in resumed] == [(e.id, e.type, e.raw) for e in direct]
        assert len(proxy.requests) == 2 and len({e.id for e in resumed}) == len(resumed)
