"""Idle event streams on many games must not keep the store busy — and the feed that makes them idle must not pause.

The attack (watch.py's history): one watch per game per worker used to look for new events every ``POLL_SECONDS``
(0.2 s), an XRANGE per game per tick whether or not anything happened: on two workers, 1,000 idle solitaires cost
4,300 Redis commands a second. Now each worker's one ``ChangeFeed`` reads every partition log and wakes a watch only
when its game is named. Anyone can open streams (no token, any game id ``GET /games`` lists).

These tests count what happened against the feed's own progress (its reads), never against the clock: while the
feed reads and nothing is appended, no watch looks at all, and the store serves the feed's reads and nothing else.
The feed's fallback — every watch polling while the feed is paused — is documented and allowed, so a pause must never
happen when nothing is wrong: a busy host once cut the feed's blocking read (redis-py's default 5 s read timeout), and
150 idle streams cost 377 commands a second, which a rate could not tell from the regression.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal

import pytest
import redis.asyncio as aioredis

from service.api import watch
from tests.attack.conftest import ADMIN_HEADERS, inproc, settings

GAMES = 150
STALL_SECONDS = 6
"""Longer than redis-py's default read timeout (5 s), which used to cut the feed's blocking read."""


async def until(condition, what: str, tries: int = 600) -> None:
    """Wait for ``condition()`` on the event loop's turns (the feed's reads take a second each when idle)."""
    for _ in range(tries):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def open_streams(api, count: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    games = [(await api.post("/games", json={"kind": "solitaire"}, headers=ADMIN_HEADERS)).json()["game_id"]
             for _ in range(count)]  # fmt: skip
    host, port = str(api.base_url).rstrip("/").removeprefix("http://").split(":")
    streams = []
    for game_id in games:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET /games/{game_id}/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        streams.append((reader, writer))
    for reader, _ in streams:  # every stream is open and has sent its first lines
        assert (await asyncio.wait_for(reader.readuntil(b"\n\n"), 30)).startswith(b"HTTP/1.1 200")
    return streams


def watches_of(api) -> watch.Watches:
    return api.app.ctx.games.watches


def looks(api) -> int:
    return sum(w.looks for w in watches_of(api)._by_game.values())


async def commands_processed(client) -> int:
    """Every command the store's servers have processed (on a cluster, summed over its primaries)."""
    if isinstance(client, aioredis.RedisCluster):
        stats = await client.info("stats", target_nodes=aioredis.RedisCluster.PRIMARIES)
        return sum(node["total_commands_processed"] for node in stats.values())
    return (await client.info("stats"))["total_commands_processed"]


def gauge(scrape: str, state: str) -> float:
    """The change feed's gauge for ``state`` in a /metrics scrape (``pauses``: the pause counter); 0 when absent."""
    name = "free_parking_change_feed_pauses_total" if state == "pauses" else f'free_parking_change_feed{{state="{state}"}}'
    found = re.search(rf"^{re.escape(name)} (\S+)$", scrape, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@pytest.mark.parametrize("where", ["redis", "cluster"])
async def test_idle_streams_on_many_games_cost_the_store_only_the_feeds_reads(where, own_redis, request, tmp_path,
                                                                               no_safety_look):  # fmt: skip
    url = request.getfixturevalue("redis_cluster").url if where == "cluster" else own_redis().url
    config = settings(tmp_path, redis_url=url, namespace=f"poll-{os.getpid()}", projector=False, runner=False)
    async with inproc(config) as api:
        streams = await open_streams(api, GAMES)
        feed = watches_of(api).feed
        try:
            await until(lambda: len(watches_of(api)._by_game) == GAMES and looks(api) >= GAMES, "every watch looked")
            assert feed.mode == ("polling" if where == "cluster" else "blocking")
            counter = aioredis.RedisCluster.from_url(url) if where == "cluster" else aioredis.from_url(url)
            await commands_processed(counter)  # the counter's own connections made (a cluster client learns the slots)
            start_reads, start_looks = feed.reads, looks(api)
            before = await commands_processed(counter)
            after = await commands_processed(counter)
            reads = feed.reads - start_reads
            await counter.aclose()
        finally:
            for _, writer in streams:
                writer.close()
        assert feed.pauses == 0, "the feed paused with nothing wrong"
        assert looks(api) == start_looks, f"{GAMES} idle watches looked at the store with nothing appended"
        per_read = 16 if where == "cluster" else 1  # a cluster's feed reads each partition's log apart
        budget = (reads + 1) * per_read + 6  # the feed's reads, one more begun, and the counter's INFOs (one a primary)
        assert after - before <= budget, f"{after - before} store commands over {reads} feed reads (at most {budget})"


@contextlib.asynccontextmanager
async def reading_feed(server, tmp_path, namespace: str):
    """A service on ``server`` with three event streams open and its change feed past its first read: (api, feed)."""
    config = settings(tmp_path, redis_url=server.url, namespace=namespace, projector=False, runner=False)
    async with inproc(config) as api:
        streams = await open_streams(api, 3)
        feed = watches_of(api).feed
        try:
            await until(lambda: feed.reads >= 1, "the feed's first read")
            yield api, feed
        finally:
            for _, writer in streams:
                writer.close()


async def test_a_store_that_stalls_past_the_clients_timeout_does_not_pause_the_feed(own_redis, tmp_path,
                                                                                    no_safety_look):  # fmt: skip
    """Redis (or the host) answers late, not never: the feed's read waits its margin out rather than giving up."""
    server = own_redis()
    async with reading_feed(server, tmp_path, "stall") as (_, feed):
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(STALL_SECONDS)  # the stall itself: an input of the test, not a wait on a result
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        reads = feed.reads
        await until(lambda: feed.reads >= reads + 2, "two reads after the stall")
    assert feed.pauses == 0, "a stall the read outlasts paused the feed"


async def test_a_feed_that_cannot_read_pauses_says_so_and_resumes(own_redis, tmp_path, caplog, monkeypatch):
    """The feed reads on a connection of its own, named for operators; one killed under it is mended (a pause, or
    redis-py's own reconnect) and the feed reads on. A store the feed cannot read at all pauses it — logged once,
    counted and shown in /metrics — and its return ends the pause, logged with its length."""
    server = own_redis()
    async with reading_feed(server, tmp_path, "pause") as (api, feed):
        listing = server.cli("CLIENT", "LIST")
        ids = [field.split("=")[1] for line in listing.splitlines() if "name=free-parking-change-feed" in line
               for field in line.split() if field.startswith("id=")]  # fmt: skip
        assert len(ids) == 1, "the feed reads on a connection of its own, named for operators:\n" + listing
        server.cli("CLIENT", "KILL", "ID", ids[0])
        reads = feed.reads
        await until(lambda: feed.reading and feed.reads >= reads + 2, "the feed reading on after its connection died")

        down = True  # the store stays unreadable for the feed until the paused scrape is taken, however slow the host
        read = feed.store.appended_since

        async def gated(*args, **kwargs):
            if down:
                raise ConnectionError("the store is away (the test holds it so)")
            return await read(*args, **kwargs)

        pauses, reading = feed.pauses, (await api.get("/metrics")).text
        monkeypatch.setattr(feed.store, "appended_since", gated)
        await until(lambda: feed.pauses == pauses + 1, "the feed paused")
        paused = (await api.get("/metrics")).text
        down = False
        await until(lambda: feed.reading, "the feed resumed")
        resumed = (await api.get("/metrics")).text
    # the process's metrics are every app's of this test worker: what this feed did is the change between scrapes
    assert (gauge(paused, "paused") - gauge(reading, "paused"), gauge(paused, "blocking") - gauge(reading, "blocking")) == (1, -1)
    assert gauge(paused, "pauses") - gauge(reading, "pauses") == 1 and feed.pauses == pauses + 1
    assert (gauge(resumed, "paused"), gauge(resumed, "blocking")) == (gauge(reading, "paused"), gauge(reading, "blocking"))
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("change feed paused") for m in said), said
    assert any(m.startswith("change feed resumed after") for m in said), said
