"""The change feed's life (service/api/watch.py ChangeFeed, Watches): a start that fails keeps trying, paused and
counted; a start cancelled before it ran releases its waiters; a pause ended by the feed's stop says so then; a worker
that stopped its feed never starts it again; a client gone while the feed started leaves no feed running. Found by a
review helper (issue 28's feed fix); each test failed before."""

from __future__ import annotations

import asyncio
import os

from service.store.store import StoreBusy
from tests.attack.conftest import ADMIN_HEADERS, inproc, settings
from tests.attack.test_stream_polling import open_streams, until, watches_of


def _config(server, tmp_path, namespace):
    return settings(tmp_path, redis_url=server.url, namespace=f"{namespace}-{os.getpid()}", projector=False, runner=False)


def _fail_once(monkeypatch, store, what: str = "log_heads"):
    """``store.<what>`` raises StoreBusy (the shared pool's wait ran out: a busy worker) the first time only."""
    real = getattr(store, what)
    failed = []

    async def once(*args, **kwargs):
        if not failed:
            failed.append(1)
            raise StoreBusy("all 64 store connections stayed busy for 2.0 s (the test says so)")
        return await real(*args, **kwargs)

    monkeypatch.setattr(store, what, once)
    return failed


async def test_a_feed_whose_start_failed_is_tried_again_while_its_streams_stay_open(own_redis, tmp_path, monkeypatch,
                                                                                    no_safety_look):  # fmt: skip
    """One failed ``log_heads`` (a moment's StoreBusy) as the first stream opens: the feed's task ends ("change feed not
    started") and nothing starts it again until some *other* stream opens. The streams already open poll the store
    every POLL_SECONDS for as long as they stay open, and /metrics shows no feed at all (neither paused nor reading)."""
    server = own_redis()
    async with inproc(_config(server, tmp_path, "nostart")) as api:
        feed = watches_of(api).feed
        failed = _fail_once(monkeypatch, feed.store)
        streams = await open_streams(api, 1)
        try:
            await until(lambda: failed and watches_of(api)._by_game, "the stream's watch, after the failed start")
            reads = feed.reads
            await until(lambda: feed.reading and feed.reads > reads, "the feed reading again", tries=200)
        finally:
            for _, writer in streams:
                writer.close()


async def test_a_start_whose_task_is_cancelled_before_it_ran_releases_the_stream_waiting_on_it(own_redis, tmp_path):
    """One stream's ``start`` makes the feed's task; before its first step the last other stream leaves and ``stop``
    cancels it: ``_run`` never ran, so nothing of it set ``ready`` — and the stream that started it waited on it for
    ever. Driven a step of the event loop at a time."""
    server = own_redis()
    async with inproc(_config(server, tmp_path, "hang")) as api:
        feed = watches_of(api).feed
        waiting = asyncio.get_running_loop().create_task(feed.start())
        await asyncio.sleep(0)  # the stream made the feed's task and waits on it; the task has not run a step
        assert feed._task is not None and not feed._task.done()
        feed.stop()  # the last other stream leaves
        try:
            await until(waiting.done, "the stream past the feed's start", tries=200)
        finally:
            waiting.cancel()


async def test_a_pause_ended_by_the_feeds_stop_is_not_reported_as_resumed_at_its_next_start(own_redis, tmp_path,
                                                                                          monkeypatch, caplog):  # fmt: skip
    """The last stream leaves while the feed is paused: ``stop`` keeps ``_paused_at``, so the next start (however much
    later, for other streams, the store fine all along) logs "change feed resumed after N s" with N spanning the time
    no feed ran at all — and the pause itself never had its end logged when it ended."""
    server = own_redis()
    async with inproc(_config(server, tmp_path, "stoppaused")) as api:
        feed = watches_of(api).feed
        down = False
        read = feed.store.appended_since

        async def gated(*args, **kwargs):
            if down:
                raise ConnectionError("the store is away (the test holds it so)")
            return await read(*args, **kwargs)

        monkeypatch.setattr(feed.store, "appended_since", gated)
        streams = await open_streams(api, 1)
        await until(lambda: feed.reads >= 1, "the feed's first read")
        down = True
        await until(lambda: feed.pauses == 1, "the feed paused")
        for _, writer in streams:
            writer.close()
        await until(lambda: feed._task is None, "the feed stopped with its last stream")
        down = False
        restarted = len(caplog.records)
        streams = await open_streams(api, 1)
        try:
            reads = feed.reads
            await until(lambda: feed.reading and feed.reads > reads, "the new feed reading")
        finally:
            for _, writer in streams:
                writer.close()
    said = [r.getMessage() for r in caplog.records[restarted:]]
    assert not any(m.startswith("change feed resumed after") for m in said), said


async def test_a_stream_opened_after_the_worker_stopped_its_feed_does_not_start_it_again(own_redis, tmp_path):
    """``_close`` stops the feed and closes the store while Sanic still accepts (before_server_stop runs before the
    listener closes, and streams drain for GRACEFUL_SHUTDOWN_TIMEOUT after): a stream opened then calls
    ``feed.start()``, which makes a new task, and its first read makes a new ``_feed`` connection (``close`` set it
    to None) that nothing closes — a task and a connection left behind by a worker that has shut down."""
    server = own_redis()
    async with inproc(_config(server, tmp_path, "afterclose")) as api:
        watches = watches_of(api)
        await watches.stop()  # what the worker's _close does, in its order
        await api.app.ctx.store.close()
        streams = await open_streams(api, 1)
        try:
            await until(lambda: watches._by_game, "the late stream's watch")
            task = watches.feed._task
            leftover = task is not None and not task.done()
            await until(lambda: watches.feed.reads >= 1 or not leftover, "the restarted feed's first read")
            named = [line for line in server.cli("CLIENT", "LIST").splitlines() if "name=free-parking-change-feed" in line]
            assert not leftover and not named, f"the feed runs again after the worker stopped it: {named}"
        finally:
            for _, writer in streams:
                writer.close()


async def test_a_stream_whose_client_leaves_while_the_feed_starts_does_not_leave_the_feed_running(own_redis, tmp_path,
                                                                                                monkeypatch):  # fmt: skip
    """``follow`` awaits ``feed.start()`` before its ``try``: a stream whose client goes away meanwhile (Sanic cancels
    its handler) never reaches the ``finally`` that stops the feed with the last watch, so the feed goes on reading —
    an XREAD a second on its own connection, "blocking" in /metrics — with no stream open, until some later stream
    opens and closes."""
    server = own_redis()
    async with inproc(_config(server, tmp_path, "leftalone")) as api:
        feed = watches_of(api).feed
        entered, go_on = asyncio.Event(), asyncio.Event()
        real = feed.store.log_heads

        async def slow():
            entered.set()
            await go_on.wait()
            return await real()

        monkeypatch.setattr(feed.store, "log_heads", slow)
        game_id = (await api.post("/games", json={"kind": "solitaire"}, headers=ADMIN_HEADERS)).json()["game_id"]

        def handlers() -> list[asyncio.Task]:
            return [t for t in asyncio.all_tasks() if "stream" in getattr(t.get_coro(), "__qualname__", "")
                    or "connection_task" in getattr(t.get_coro(), "__qualname__", "")]

        host, port = str(api.base_url).rstrip("/").removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET /games/{game_id}/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert (await asyncio.wait_for(reader.readuntil(b"\n\n"), 30)).startswith(b"HTTP/1.1 200")
        await until(entered.is_set, "the feed's start under way")
        busy = len(handlers())
        writer.close()
        await until(lambda: len(handlers()) < busy, "the stream's handler gone with its client")
        go_on.set()
        await until(lambda: feed.reads >= 2 or feed._task is None or feed._task.done(), "the feed read, or stopped")
        assert not watches_of(api)._by_game
        assert feed._task is None or feed._task.done(), f"the feed reads on ({feed.reads} reads) with no stream open"
