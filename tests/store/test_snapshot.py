"""The snapshot's format (service/store/snapshot.py): every Redis type the store uses, written and loaded back into a
fresh server, answers every read as the original did — streams' groups and pending entries included, through what
XREADGROUP, XPENDING and XINFO answer after the load; and a hypothesis property over random stores."""

from __future__ import annotations

import time

import fakeredis
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.store import snapshot
from service.store.journal import RECORD_HEAD
from tests.depth import count

EXAMPLES = count("FREE_PARKING_SNAPSHOT_EXAMPLES", 60, 600)
SLACK_MS = 60_000
"""How far a pending entry's delivery time may move in a round trip: it is kept as a time, read as an idle time."""


def now_ms() -> int:
    return int(time.time() * 1000)


def round_trip(r) -> fakeredis.FakeRedis:
    """``r``'s keys captured, written as records, read back and loaded into a fresh server."""
    payloads = snapshot.records(snapshot.capture(r, lambda k: False, now_ms()), "fp", now_ms())
    loaded = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    first = snapshot.begins(payloads[0])
    assert first is not None
    assert snapshot.read(first, iter(payloads[1:]), snapshot.Loader(loaded)) == sum(RECORD_HEAD + len(p) for p in payloads[1:])
    return loaded


def seen(r) -> dict:
    """Everything a reader of ``r`` could ask, key by key (a pending entry's idle time aside: see ``delivered``)."""
    out = {}
    for key in sorted(r.keys()):
        kind = r.type(key)
        if kind == b"string":
            out[key] = (r.get(key), r.pttl(key) > 0)
        elif kind == b"hash":
            out[key] = r.hgetall(key)
        elif kind == b"list":
            out[key] = r.lrange(key, 0, -1)
        elif kind == b"set":
            out[key] = r.smembers(key)
        elif kind == b"zset":
            out[key] = r.zrange(key, 0, -1, withscores=True)
        else:
            out[key] = _stream(r, key)
    return out


def _stream(r, key) -> dict:
    info = r.xinfo_stream(key)
    groups = r.xinfo_groups(key)
    return {
        "entries": r.xrange(key), "length": info["length"], "last": info["last-generated-id"],
        "groups": [{k: v for k, v in g.items() if k != "entries-read"} for g in groups],
        "consumers": {g["name"]: sorted((c["name"], c["pending"]) for c in r.xinfo_consumers(key, g["name"])) for g in groups},
        "pending": {g["name"]: [(p["message_id"], p["consumer"], p["times_delivered"])
                                for p in r.xpending_range(key, g["name"], "-", "+", 1000)] for g in groups},
    }  # fmt: skip


def delivered(r) -> dict:
    """Each pending entry's delivery time, from its idle time now."""
    now = now_ms()
    return {(key, g["name"], p["message_id"]): now - p["time_since_delivered"]
            for key in r.keys() if r.type(key) == b"stream" for g in r.xinfo_groups(key)
            for p in r.xpending_range(key, g["name"], "-", "+", 1000)}  # fmt: skip


def assert_same(r, loaded) -> None:
    assert seen(loaded) == seen(r)
    before, after = delivered(r), delivered(loaded)
    assert before.keys() == after.keys()
    assert all(abs(after[k] - before[k]) < SLACK_MS for k in before), (before, after)


@pytest.fixture
def every_type():
    """A server holding each type the store uses, the corners of streams included."""
    r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    r.set("fp:token:a", b"\x00record\xff")
    r.set("fp:limit:ip", "17", px=600_000)
    r.set("fp:archived:{p3}", 4)
    r.hset("fp:meta:{p1}:g", mapping={"version": 12, "status": "playing", "head": "ab" * 32})
    r.rpush("fp:proj:audit:{p1}:g", "one", "two", "two", "")
    r.sadd("fp:tplaying", "t1", "t2")
    r.zadd("fp:due:{p1}", {"g": 1_767_225_600_123, "h": 2.5, "i": -1e300})
    for i in range(1, 9):
        r.xadd("fp:log:{p1}", {"game": f"g{i}", "from": i, "to": i}, id=f"{1000 + i}-0")
    r.xgroup_create("fp:log:{p1}", "projectors", id="0")
    r.xreadgroup("projectors", "worker-a", {"fp:log:{p1}": ">"}, count=3)
    r.xreadgroup("projectors", "worker-b", {"fp:log:{p1}": ">"}, count=2)
    r.xreadgroup("projectors", "worker-b", {"fp:log:{p1}": "0"})  # delivered twice
    r.xack("fp:log:{p1}", "projectors", "1001-0")
    r.xgroup_createconsumer("fp:log:{p1}", "projectors", "idle-one")
    r.xdel("fp:log:{p1}", "1002-0")  # pending, and deleted since
    r.xtrim("fp:log:{p1}", minid="1001-0")
    r.xgroup_create("fp:log:{p1}", "late", id="1006-0")
    r.xadd("fp:told:{p1}:g", {"v": 3, "e": "[]"}, id="5-0")
    r.xdel("fp:told:{p1}:g", "5-0")  # an outbox once relayed: empty, its last id kept
    r.xadd("fp:pstream:{ann}", {"t": "turn", "e": "{}"}, id="7-0")
    r.xadd("fp:pstream:{ann}", {"t": "turn", "e": "{}"}, id="7-1")
    r.xdel("fp:pstream:{ann}", "7-1")  # its last entry deleted: the next id must still follow it
    r.xgroup_create("fp:log:{p2}", "projectors", id="0", mkstream=True)  # a log no append reached yet
    return r


def test_every_type_the_store_uses_loads_back_as_it_was(every_type):
    loaded = round_trip(every_type)
    assert_same(every_type, loaded)
    assert loaded.pttl("fp:limit:ip") > 0 and loaded.pttl("fp:token:a") == -1
    assert loaded.zscore("fp:due:{p1}", "i") == -1e300


def test_a_loaded_stream_goes_on_as_the_original_does(every_type):
    loaded = round_trip(every_type)
    for r in (every_type, loaded):  # the same next ids, the same entries delivered, the same lag
        assert r.xadd("fp:pstream:{ann}", {"t": "x", "e": "{}"}, id="7-*") == b"7-2"
        assert r.xadd("fp:told:{p1}:g", {"v": 4, "e": "[]"}, id="5-*") == b"5-1"
        r.xadd("fp:log:{p1}", {"game": "g9", "from": 9, "to": 9}, id="1009-0")
    assert [g["lag"] for g in loaded.xinfo_groups("fp:log:{p1}")] == [g["lag"] for g in every_type.xinfo_groups("fp:log:{p1}")]
    for r in (every_type, loaded):
        r.xautoclaim("fp:log:{p1}", "projectors", "worker-c", 0, "0-0")
    assert_same(every_type, loaded)
    reads = [[r.xreadgroup("projectors", c, {"fp:log:{p1}": s}) for c, s in (("worker-c", "0"), ("worker-a", ">"))]
             for r in (every_type, loaded)]  # fmt: skip
    assert reads[0] == reads[1]
    assert_same(every_type, loaded)


def test_a_key_larger_than_a_piece_spans_several_and_loads_whole(monkeypatch):
    monkeypatch.setattr(snapshot, "PIECE", 3)
    monkeypatch.setattr(snapshot, "CHUNK", 64)
    r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    r.hset("h", mapping={f"f{i}": i for i in range(10)})
    r.rpush("l", *range(10))
    r.zadd("z", {f"m{i}": i for i in range(10)})
    for i in range(1, 11):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=4)
    r.xdel("s", "2-0", "10-0")
    keys = snapshot.capture(r, lambda k: False, now_ms())
    assert sum(isinstance(k, snapshot.Stream) for k in keys) == 3 and len(snapshot.records(keys, "fp", 0)) > 3
    assert_same(r, round_trip(r))


def test_a_snapshot_cut_short_or_with_a_record_out_of_place_is_refused(every_type):
    payloads = snapshot.records(snapshot.capture(every_type, lambda k: False, now_ms()), "fp", now_ms())
    first = snapshot.begins(payloads[0])

    def noop(keys):
        pass

    with pytest.raises(snapshot.SnapshotBroken, match="cut short"):
        snapshot.read(first, iter(payloads[1:-1]), noop)
    append = msgspec.msgpack.encode(["append", [b"x"], 0x7F])
    with pytest.raises(snapshot.SnapshotBroken, match="'append' record inside the snapshot"):
        snapshot.read(first, iter([append, *payloads[1:]]), noop)
    with pytest.raises(snapshot.SnapshotBroken, match="end counts"):
        snapshot.read(first, iter([*payloads[1:-1], payloads[1], payloads[-1]]), noop)
    with pytest.raises(snapshot.SnapshotBroken, match="format 2"):
        snapshot.read(msgspec.structs.replace(first, format=2), iter(payloads[1:]), noop)


# --- random stores ---------------------------------------------------------------------------------------------------

names = st.sampled_from([b"a", b"b", b"c"])
values = st.binary(max_size=6)
ops = st.one_of(
    st.tuples(st.just("set"), names, values, st.one_of(st.none(), st.integers(1000, 10**6))),
    st.tuples(st.just("hset"), names, values, values),
    st.tuples(st.just("rpush"), names, values),
    st.tuples(st.just("sadd"), names, values),
    st.tuples(st.just("zadd"), names, values, st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.just("xadd"), names, values),
    st.tuples(st.just("xdel"), names, st.integers(0, 8)),
    st.tuples(st.just("xtrim"), names, st.integers(0, 4)),
    st.tuples(st.just("read"), names, st.sampled_from([b"g1", b"g2"]), st.sampled_from([b"c1", b"c2"]), st.integers(1, 3)),
    st.tuples(st.just("ack"), names, st.sampled_from([b"g1", b"g2"]), st.integers(0, 8)),
    st.tuples(st.just("claim"), names, st.sampled_from([b"g1", b"g2"]), st.sampled_from([b"c1", b"c3"])),
)


def apply(r, op: tuple) -> None:
    """One write of a random store, prefixed by its type (a name holds one type), errors of a wrong state ignored."""
    kind, name, *args = op
    key = f"{kind}:".encode() + name
    stream = b"x:" + name
    ids = [i for i, _ in r.xrange(stream)] if r.exists(stream) else []
    match kind:
        case "set":
            r.set(key, args[0], px=args[1])
        case "hset" | "rpush" | "sadd":
            getattr(r, kind)(key, *args)
        case "zadd":
            r.zadd(key, {args[0]: args[1]})
        case "xadd":
            r.xadd(stream, {b"v": args[0]}, id=args[1] if len(args) > 1 else "*")
            for group in (b"g1", b"g2"):
                if group not in {g["name"] for g in r.xinfo_groups(stream)}:
                    r.xgroup_create(stream, group, id="0")
        case "xdel" if ids:
            r.xdel(stream, ids[args[0] % len(ids)])
        case "xtrim" if ids:
            r.xtrim(stream, maxlen=args[0])
        case "read" if r.exists(stream):
            r.xreadgroup(args[0], args[1], {stream: ">"}, count=args[2])
        case "ack" if ids:
            r.xack(stream, args[0], ids[args[1] % len(ids)])
        case "claim" if r.exists(stream):
            r.xautoclaim(stream, args[0], args[1], 0, "0-0")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, max_size=40))
def test_any_store_of_random_writes_loads_back_as_it_was(writes):
    r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    for op in writes:
        apply(r, op)
    loaded = round_trip(r)
    assert_same(r, loaded)
    for each in (r, loaded):  # and both go on alike
        apply(each, ("xadd", b"a", b"next", "9999999999999-*"))
        apply(each, ("read", b"a", b"g1", b"c2", 2))
    assert_same(r, loaded)
