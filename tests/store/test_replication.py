"""``--durability replicated`` in the store: WAIT on the connection that wrote, after a marker (one per primary on a
cluster); fewer replicas than asked is ``NotReplicated``; a resend, and a read, of a write the replicas do not have yet
waits for them; the start is refused without the replicas asked for; Sentinel addresses are read or refused in one line.

The real-server cases run on a primary, a replica and a Sentinel of their own (``tests/replicas.py``).
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from service.store.durability import check_durability, embedded_durability
from service.store.keys import Keys
from service.store.redis_store import RedisStore
from service.store.replication import Replication, marker
from service.store.sentinel import parse_sentinels, sentinel_store
from service.store.store import Appended, NotDurable, NotReplicated
from service.store.stores import open_store_checked
from tests.replicas import Replicated, info
from tests.store.test_cluster import _Recorder, cstore  # noqa: F401 (a fixture)
from tests.store.test_durability import _RecordingClient
from tests.store.test_store_contract import TEMPLATE, batches, request

WAIT_MS = 300  # the bound of a WAIT that must run out (the replica stopped): short, for each such case waits it out
GENEROUS_MS = 10_000  # the bound of a WAIT that must succeed: a loaded machine's replica may be slow to answer


@pytest.fixture
def replicated(tmp_path):
    group = Replicated(tmp_path / "replicated").start()
    yield group
    group.stop()


def test_every_key_shape_has_a_marker_in_its_slot():
    keys = Keys("ns")
    for key in (keys.stream("g-1"), keys.meta("g-1"), keys.token("ab" * 32), keys.player("p-1"), keys.listing_head(),
                keys.tournament("t-1"), keys.player_stream("p-1"), keys.leaderboard("wins"), keys.log(3)):  # fmt: skip
        assert key_slot(marker("ns", key).encode()) == key_slot(key.encode()), key
    with pytest.raises(ValueError, match="no marker"):
        marker("ns", "a{}b}")
    assert marker("ns") == "ns:replicated"  # a single server's one marker


async def test_wait_goes_in_each_pipeline_after_a_marker_on_the_connection_that_wrote():
    client = _RecordingClient()
    store = RedisStore(client, replicas=1, replica_wait_ms=WAIT_MS)
    b = batches(TEMPLATE)
    got = await asyncio.gather(*(store.append(request(f"g-w-{i}", b[0])) for i in range(5)))
    assert got == [Appended("ok", b[0].last, 1, b[0].last)] * 5
    await store.put_token("t" * 64, b"x")
    for names in client.pipelines:  # the writes, then one marker and one WAIT, last
        assert names[-2:] == ["SET", "WAIT"] and names.count("WAIT") == 1, names
    client.replicas = 0  # no replica confirmed in time: not acknowledged
    with pytest.raises(NotReplicated, match="0 of the 1 replicas"):
        await store.append(request("g-w-0", b[1]))
    with pytest.raises(NotReplicated):
        await store.put_player("p-1", {"name": "x"})
    await store.close()


async def test_on_a_cluster_each_primary_written_gets_a_marker_and_a_wait_after_its_writes(cstore):  # noqa: F811
    store, tmpl = cstore, batches(TEMPLATE)
    store.replication = Replication(1, WAIT_MS)
    await store.r.initialize()
    recorder = _Recorder(store)
    try:
        ids = [f"g-rw-{i}" for i in range(24)]
        got = await asyncio.gather(*(store.append(request(g, tmpl[0])) for g in ids))
        assert got == [Appended("ok", tmpl[0].last, 1, tmpl[0].last)] * len(ids)
        assert any(len({node for name, node in seen if name == "EVALSHA"}) == 3 for seen in recorder.pipelines)
        for seen in recorder.pipelines:
            written = {node for name, node in seen if name == "EVALSHA"}
            waited = [node for name, node in seen if name == "WAIT"]
            assert sorted(waited) == sorted(written), seen  # one per primary written, none elsewhere
            for node in waited:  # after that primary's writes and its marker
                writes = [i for i, (name, n) in enumerate(seen) if n == node and name != "WAIT"]
                assert seen[max(writes)][0] == "SET" and seen.index(("WAIT", node)) > max(writes), seen
        recorder.replicas = 0
        with pytest.raises(NotReplicated):
            await store.append(request(ids[0], tmpl[1]))
    finally:
        recorder.stop()


async def test_a_resend_or_a_read_is_answered_only_once_the_replica_has_the_first_write(replicated):
    """The trap: the first try reached the primary, its WAIT timed out (503); a resend finds its record and writes
    nothing — a WAIT after it, on a connection that wrote nothing since, would count the stopped replica at once. The
    marker makes it wait for the first write; a read of the events (another worker's, which never saw them replicated)
    waits for them as well. (Redis 7.0, installed here, moves a client's offset after every command, so its WAIT would
    cover the first write even without the marker; from 7.2 on the offset moves with the client's own writes only, and
    the marker is what covers it: the pipelines' marker is asserted above.)"""
    b = batches(TEMPLATE)
    one = RedisStore.from_url(replicated.url, replicas=1, replica_wait_ms=GENEROUS_MS)
    two = RedisStore.from_url(replicated.url, replicas=1, replica_wait_ms=GENEROUS_MS)  # another worker
    first = request("g-resend", b[0], key="seat:0:c1", digest="d1")
    try:
        assert await two.ping()  # a connection of its own, that has written nothing
        await one.append(first)
        replicated.hold_replica(cut=False)  # stopped, its link left up: it counts for WAIT once it acknowledges
        bound(WAIT_MS, one, two)
        second = request("g-resend", b[1], key="seat:0:c2", digest="d2")
        with pytest.raises(NotReplicated):
            await one.append(second)
        with pytest.raises(NotReplicated):  # the resend: a duplicate, and still on no replica
            await two.append(second)
        with pytest.raises(NotReplicated):  # a read of it
            await two.read("g-resend")
        with pytest.raises(NotReplicated):  # a player's own stream: told, and read, the same way
            await one.tell_player("p-held", {"type": "hello"})
        with pytest.raises(NotReplicated):
            await two.player_events("p-held", "0-0", 10)
        assert await one.read("g-resend", count=b[0].last) is not None  # what was replicated reads at once
        replicated.release_replica()
        bound(GENEROUS_MS, one, two)
        assert await two.append(second) == Appended("duplicate", b[1].last, b[1].first, b[1].last)
        async with aioredis.from_url(replicated.replica.url) as replica:  # the first try's events are on the replica
            assert await replica.xlen(two.keys.stream("g-resend")) == b[1].last  # when the resend is answered
        assert len(await two.read("g-resend")) == b[1].last
        assert len(await two.player_events("p-held", "0-0", 10)) == 1
    finally:
        replicated.release_replica()
        await one.close()
        await two.close()


def bound(wait_ms: int, *stores: RedisStore) -> None:
    for store in stores:
        store.replication.wait_ms = wait_ms


async def test_the_start_is_refused_without_the_replicas_asked_for(replicated, servers):
    alone = servers("--appendonly", "yes", "--appendfsync", "always", name="alone")
    for url, replicas, said in ((alone.url, 1, "has none online"), (replicated.url, 2, "has 1 (")):
        with pytest.raises(NotDurable, match="--replicas") as refused:
            await open_store_checked(url, None, durability="replicated", replicas=replicas)
        assert said in str(refused.value) and "FREE_PARKING_DURABILITY=durable" in str(refused.value)
    with pytest.raises(NotDurable, match="is a slave"):
        await open_store_checked(replicated.replica.url, None, durability="replicated")
    everysec = servers("--appendonly", "yes", "--appendfsync", "everysec", name="everysec")
    with pytest.raises(NotDurable, match="appendfsync always"):  # replicated is durable too
        await open_store_checked(everysec.url, None, durability="replicated")
    with pytest.raises(NotDurable, match="embedded store has none"):
        embedded_durability("replicated", fsync=True)
    store, found = await open_store_checked(replicated.url, None, durability="replicated", replica_wait_ms=GENEROUS_MS)
    try:
        assert (found.requested, found.replicas, found.method) == ("replicated", 1, "appendfsync-always")
        assert "WAIT" in found.guarantee and store.replication.wait_ms == GENEROUS_MS
    finally:
        await store.close()


async def test_through_the_sentinel_the_store_and_its_feed_follow_a_failover(replicated):
    """The store's pool and the change feed's blocking connection ask the Sentinel for the primary at each connect:
    after the primary is killed and the replica promoted, both reach the new one by themselves."""
    store = sentinel_store(parse_sentinels(replicated.sentinel.address), replicas=1, replica_wait_ms=GENEROUS_MS)
    b = batches(TEMPLATE)
    try:
        assert (await check_durability(store.r, "replicated")).replicas == 1
        assert await store.append(request("g-sent", b[0])) == Appended("ok", b[0].last, 1, b[0].last)
        heads = await store.log_heads()
        feed = asyncio.create_task(store.appended_since(heads, 20_000))  # blocks on the primary
        replicated.fail_over()
        with pytest.raises(Exception):  # noqa: B017 - the primary died under the blocking read
            await feed
        replicated.reattach_old_primary()

        async def appended() -> Appended | None:
            try:
                return await store.append(request("g-sent", b[1]))
            except NotReplicated:
                return None
            except Exception:  # noqa: BLE001 - a pooled connection to the dead primary fails once
                return None

        got = await wait_async(appended, 30)
        assert got == Appended("ok", b[1].last, b[1].first, b[1].last)
        seen = await store.appended_since(heads, 1000)  # the feed's next read: on the new primary
        assert [game for _, _, game in seen] == ["g-sent"]
        assert info(replicated.replica.port)["role"] == "master"
    finally:
        await store.close()


async def wait_async(check, seconds: float):
    """``await check()``'s first truthy answer, polled."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        got = await check()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {seconds} s: {check.__name__}")
        await asyncio.sleep(0.05)


def test_sentinel_addresses_are_read_or_refused_in_one_line():
    from service.api.settings import Settings, SettingsError

    assert parse_sentinels("a:1, [::1]:26379", "m").hosts == [("a", 1), ("::1", 26379)]
    got = Settings.from_env({"REDIS_SENTINEL": "127.0.0.1:26379", "REDIS_SENTINEL_MASTER": "cache",
                             "FREE_PARKING_DURABILITY": "replicated", "FREE_PARKING_REPLICAS": "2"})  # fmt: skip
    assert (got.sentinel.master, got.replicas, got.store_name) == ("cache", 2, "redis")
    for bad in ("127.0.0.1", "host:port", "a:1,", "a:70000"):
        with pytest.raises(SettingsError, match="^REDIS_SENTINEL: .* is not host:port") as refused:
            Settings.from_env({"REDIS_SENTINEL": bad})
        assert "\n" not in str(refused.value)
    for name, value in (("FREE_PARKING_REPLICAS", "0"), ("FREE_PARKING_REPLICA_WAIT_MS", "0"),
                        ("FREE_PARKING_DURABILITY", "quorum")):  # fmt: skip
        with pytest.raises(SettingsError, match=f"^{name}: "):
            Settings.from_env({name: value})
