"""The store contract: every store gives the same answers and leaves the same keys for the same requests.

The cases run unchanged on four stores of one contract — the append script on a real Redis and on a real
three-master Redis Cluster (``tests/cluster.py``), the same script on fakeredis (its Lua interpreter), and the
embedded store's Python rendering of it — and a separate test feeds one sequence of requests to all of them and
compares every key they wrote.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import fakeredis
import msgspec
import pytest
from redis.crc import key_slot

from service.store.embedded import EmbeddedStore
from service.events.entries import encode_entry
from service.events.envelope import NULL, Envelope
from service.store.keys import PARTITIONS, STATUSES, Keys, partition, table_id
from service.store.redis_store import RedisStore
from service.store.store import Appended, AppendRequest, CommandRecord, command_digest
from service.rules.engine import Game
from service.sim.games import simulate
from tests.cluster import cluster_tools_found
from tests.stores import drop_namespace, namespace, need_redis, redis_url

CREATED_AT = 1_767_225_600_000


# --- helpers shared by the store tests ----------------------------------------------------------


class Batch(msgspec.Struct):
    """One command's envelopes and the game's status after them."""

    envelopes: list[Envelope]
    status: str

    @property
    def entries(self) -> list[bytes]:
        return [encode_entry(e) for e in self.envelopes]

    @property
    def head(self) -> str:
        return self.envelopes[-1].hash

    @property
    def first(self) -> int:
        return self.envelopes[0].seq

    @property
    def last(self) -> int:
        return self.envelopes[-1].seq


_GAMES: dict[tuple[str, int], list[Batch]] = {}
TEMPLATE = "g-template"  # tests that need many games append this one's batches under other ids (the store never
# looks inside an entry, so an envelope's own game_id need not match the key it is stored under)


def batches(game_id: str, seed: int = 0) -> list[Batch]:
    """A real four-seat greedy game, cut into the batches its commands produced (cached per id and seed)."""
    cached = _GAMES.get((game_id, seed))
    if cached is not None:
        return cached
    sim = simulate("free-parking", 4, bytes([seed]) * 32, game_id, ["greedy"] * 4)
    game = Game.new("free-parking", game_id, sim.game.state.config, sim.game.seed)
    groups: list[list[Envelope]] = []
    for env in sim.envelopes:
        if env.command != NULL or not groups:
            groups.append([])
        groups[-1].append(env)
    out = []
    for group in groups:
        game.fold(group)
        out.append(Batch(group, game.rules.status_of(game.state)))
    assert out[-1].status == "finished"
    _GAMES[(game_id, seed)] = out
    return out


def as_game(game_id: str, envelopes: list[Envelope]) -> list[Envelope]:
    """A template's envelopes as the store reads them back under another game: the stream names the game."""
    return [msgspec.structs.replace(e, game_id=game_id) for e in envelopes]


def request(
    game_id: str,
    batch: Batch,
    *,
    expected: int | None = None,
    key: str = "",
    digest: str = "",
    due_at: int | None = None,
    meta: dict[str, str] | None = None,
    created_at: int = CREATED_AT,
    status: str | None = None,
    kind: str = "",
) -> AppendRequest:
    return AppendRequest(
        game_id=game_id,
        kind=kind,
        expected_version=batch.first - 1 if expected is None else expected,
        entries=batch.entries,
        head=batch.head,
        status=status or batch.status,
        created_at=created_at,
        due_at=due_at,
        command_key=key,
        command_digest=digest,
        meta=meta or {},
    )


async def append_all(store, game_id: str, upto: int | None = None, **kw: Any) -> list[Batch]:
    """Append a game's first ``upto`` batches in order; each must be accepted."""
    done = batches(game_id)[:upto]
    for b in done:
        got = await store.append(request(game_id, b, **kw))
        assert got == Appended("ok", b.last, b.first, b.last)
    return done


def _s(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v


async def dump(store, *, log_ids: bool = False) -> dict[str, Any]:
    """Every key under the store's namespace, by name without the namespace, with its full contents.

    Partition-log entry IDs are time-based (``*``), so they are left out unless ``log_ids``.
    """
    r, prefix = store.r, store.keys.ns + ":"
    out: dict[str, Any] = {}
    async for raw in r.scan_iter(match=f"{prefix}*", count=1000):
        key = _s(raw)
        kind = _s(await r.type(raw))
        name = key[len(prefix) :]
        if kind == "string":
            out[name] = await r.get(raw)
        elif kind == "hash":
            out[name] = {_s(k): v for k, v in (await r.hgetall(raw)).items()}
        elif kind == "zset":
            out[name] = [(_s(m), s) for m, s in await r.zrange(raw, 0, -1, withscores=True)]
        elif kind == "stream":
            rows = await r.xrange(raw, "-", "+")
            keep_id = log_ids or not name.startswith("log:")
            out[name] = [(_s(i) if keep_id else None, {_s(k): v for k, v in f.items()}) for i, f in rows]
        else:
            out[name] = (kind, None)
    return out


async def game_state(store, game_id: str) -> dict[str, Any]:
    """Everything an append of ``game_id`` may touch, in one comparable value."""
    k, r, p = store.keys, store.r, partition(game_id)
    return {
        "stream": await r.xrange(k.stream(game_id), "-", "+"),
        "meta": await r.hgetall(k.meta(game_id)),
        "commands": await r.hgetall(k.commands(game_id)),
        "log": [f for _, f in await r.xrange(k.log(p), "-", "+")],
        "indexes": {s: await r.zrange(k.index(p, s), 0, -1, withscores=True) for s in STATUSES},
        "due": await r.zrange(k.due(p), 0, -1, withscores=True),
    }


async def log_pointers(store, game_id: str) -> list[tuple[int, int]]:
    rows = await store.r.xrange(store.keys.log(partition(game_id)), "-", "+")
    return [(int(f[b"from"]), int(f[b"to"])) for _, f in rows if f[b"game"] == game_id.encode()]


# --- the stores ---------------------------------------------------------------------------------


async def _open(kind: str, tmp_path, request=None):
    if kind == "embedded":
        return await EmbeddedStore(tmp_path / "data").open(), None
    if kind == "redis":
        ns = namespace()
        return RedisStore.from_url(need_redis(), namespace=ns), ns
    if kind == "cluster":
        ns = namespace()
        return RedisStore.from_url(request.getfixturevalue("redis_cluster").url, namespace=ns, cluster=True), ns
    return RedisStore(fakeredis.FakeAsyncRedis(decode_responses=False)), None


@pytest.fixture(params=["embedded", "redis", "cluster", "lua-fakeredis"])
async def store(request, tmp_path):
    """The contract's four stores (this module's own ``store``, a superset of conftest's).

    ``embedded``: fakeredis with the contract in Python, journalled under ``tmp_path``; ``redis``: the
    script on a real server under a namespace of its own; ``cluster``: the script on a real three-master
    Redis Cluster, likewise; ``lua-fakeredis``: the script itself run by fakeredis's Lua interpreter.
    """
    s, ns = await _open(request.param, tmp_path, request)
    yield s
    if ns is not None:
        await drop_namespace(s.r, ns)
    await s.close()


@pytest.fixture(params=["redis", "cluster", "lua-fakeredis"])
async def script_store(request, tmp_path):
    """The stores that append by the Lua script."""
    s, ns = await _open(request.param, tmp_path, request)
    yield s
    if ns is not None:
        await drop_namespace(s.r, ns)
    await s.close()


# --- appends and reads --------------------------------------------------------------------------


async def test_appends_in_order_and_reads_back_byte_identical(store):
    done = await append_all(store, "g-order")
    envelopes = [e for b in done for e in b.envelopes]
    entries = [x for b in done for x in b.entries]

    got = await store.read("g-order")
    assert got == envelopes
    assert [encode_entry(e) for e in got] == entries

    n = len(envelopes)
    for after in (0, 1, 5, n // 2, n - 1, n):
        assert await store.read("g-order", after=after) == envelopes[after:]
        for count in (1, 3, 50):
            assert await store.read("g-order", after=after, count=count) == envelopes[after : after + count]
    assert await store.read("g-order", after=n + 10) == []
    assert await store.read("nobody-played-this") == []


async def test_entry_ids_are_seq_dash_zero_and_hold_the_stored_bytes(store):
    done = await append_all(store, "g-ids", upto=12)
    rows = await store.r.xrange(store.keys.stream("g-ids"), "-", "+")
    assert [i for i, _ in rows] == [f"{e.seq}-0".encode() for b in done for e in b.envelopes]
    assert [f for _, f in rows] == [{b"e": x} for b in done for x in b.entries]
    seq = done[4].envelopes[0].seq
    direct = await store.r.xrange(store.keys.stream("g-ids"), f"{seq}-0", f"{seq}-0")
    assert direct == [(f"{seq}-0".encode(), {b"e": done[4].entries[0]})]


async def test_the_answer_names_the_range_it_appended(store):
    b = batches("g-range")
    assert await store.append(request("g-range", b[0])) == Appended("ok", b[0].last, 1, b[0].last)
    assert await store.append(request("g-range", b[1])) == Appended("ok", b[1].last, b[1].first, b[1].last)


# --- refusals write nothing ---------------------------------------------------------------------


async def test_a_stale_or_future_expected_version_conflicts_and_writes_nothing(store):
    done = await append_all(store, "g-conflict", upto=6, due_at=CREATED_AT + 5_000, meta={"kind": "free-parking"})
    version = done[-1].last
    before_game = await game_state(store, "g-conflict")
    before_all = await dump(store, log_ids=True)
    nxt = batches("g-conflict")[6]
    for expected in (0, 1, version - 1, version + 1, version + 100):
        got = await store.append(
            request("g-conflict", nxt, expected=expected, key="seat:0:c-new", digest="d1", due_at=1, meta={"x": "y"})
        )
        assert got == Appended("conflict", version)
    assert await game_state(store, "g-conflict") == before_game
    assert await dump(store, log_ids=True) == before_all
    assert await store.command_record("g-conflict", "seat:0:c-new") is None


async def test_a_conflict_on_a_game_never_created_writes_nothing(store):
    b = batches("g-none")
    assert await store.append(request("g-none", b[1])) == Appended("conflict", 0)
    assert await dump(store) == {}
    assert await store.meta("g-none") is None


async def test_the_same_command_id_and_body_is_answered_with_the_first_answer(store):
    b = batches("g-dup")
    await append_all(store, "g-dup", upto=3)
    digest = command_digest(b"the body")
    first = await store.append(request("g-dup", b[3], key="seat:1:cmd-7", digest=digest))
    assert first == Appended("ok", b[3].last, b[3].first, b[3].last)
    await store.append(request("g-dup", b[4]))
    before = await dump(store, log_ids=True)

    for expected in (b[3].first - 1, b[4].last, 999):  # the retry's version does not matter
        again = await store.append(request("g-dup", b[4], expected=expected, key="seat:1:cmd-7", digest=digest))
        assert again == Appended("duplicate", b[3].last, b[3].first, b[3].last)
    assert await dump(store, log_ids=True) == before
    assert await store.command_record("g-dup", "seat:1:cmd-7") == CommandRecord(digest, b[3].first, b[3].last)


async def test_the_same_command_id_with_another_body_is_refused_and_writes_nothing(store):
    b = batches("g-reuse")
    await append_all(store, "g-reuse", upto=3)
    digest = command_digest(b"first body")
    await store.append(request("g-reuse", b[3], key="seat:2:cmd-1", digest=digest))
    before = await dump(store, log_ids=True)
    other = command_digest(b"another body")
    got = await store.append(request("g-reuse", b[4], key="seat:2:cmd-1", digest=other))
    assert got == Appended("command_id_reused", b[3].last, b[3].first, b[3].last)
    assert await dump(store, log_ids=True) == before
    assert await store.command_record("g-reuse", "seat:2:cmd-1") == CommandRecord(digest, b[3].first, b[3].last)


async def test_a_digest_that_is_a_prefix_of_the_recorded_one_is_another_body(store):
    b = batches("g-prefix")
    digest = command_digest(b"body")
    await store.append(request("g-prefix", b[0], key="seat:0:c", digest=digest))
    for other in (digest[:10], ""):
        got = await store.append(request("g-prefix", b[1], key="seat:0:c", digest=other))
        assert got.outcome == "command_id_reused"
    assert await store.read("g-prefix") == b[0].envelopes


async def test_command_ids_are_scoped_per_game_and_per_key(store):
    a, b = batches("g-scope-a"), batches("g-scope-b")
    d = command_digest(b"same body")
    assert (await store.append(request("g-scope-a", a[0], key="seat:0:cmd", digest=d))).outcome == "ok"
    assert (await store.append(request("g-scope-b", b[0], key="seat:0:cmd", digest=d))).outcome == "ok"
    assert (await store.append(request("g-scope-a", a[1], key="seat:1:cmd", digest=d))).outcome == "ok"
    assert (await store.append(request("g-scope-a", a[2], key="server:cmd", digest=d))).outcome == "ok"
    assert await store.command_record("g-scope-a", "seat:0:cmd") == CommandRecord(d, 1, a[0].last)
    assert await store.command_record("g-scope-a", "seat:1:cmd") == CommandRecord(d, a[1].first, a[1].last)
    assert await store.command_record("g-scope-b", "seat:0:cmd") == CommandRecord(d, 1, b[0].last)
    assert await store.command_record("g-scope-b", "seat:1:cmd") is None


async def test_an_append_without_a_command_id_records_none(store):
    await append_all(store, "g-nokey", upto=2)
    assert await store.r.hgetall(store.keys.commands("g-nokey")) == {}


# --- metadata, indexes, due, the partition log --------------------------------------------------


async def test_meta_holds_version_head_status_and_extra_fields(store):
    b = batches("g-meta")
    await store.append(request("g-meta", b[0], meta={"kind": "free-parking", "seats": "4"}))
    assert await store.meta("g-meta") == {
        "version": str(b[0].last),
        "head": b[0].head,
        "status": b[0].status,
        "kind": "free-parking",
        "seats": "4",
    }
    await store.append(request("g-meta", b[1], meta={"seats": "5"}))
    meta = await store.meta("g-meta")
    assert meta["version"] == str(b[1].last) and meta["head"] == b[1].head
    assert meta["kind"] == "free-parking" and meta["seats"] == "5"  # extra fields persist; new values win


async def test_the_status_indexes_move_the_game_and_keep_its_creation_time(store):
    k, p = store.keys, partition("g-status")
    statuses = ["waiting", "waiting", "playing", "playing", "waiting", "finished", "finished"]
    for b, status in zip(batches("g-status"), statuses):
        await store.append(request("g-status", b, created_at=CREATED_AT + 7, status=status))
        for s in STATUSES:
            score = await store.r.zscore(k.index(p, s), "g-status")
            assert score == (CREATED_AT + 7 if s == status else None), (b.first, s)
        assert (await store.meta("g-status"))["status"] == status


async def test_due_is_set_moved_and_cleared_by_appends(store):
    b = batches("g-due")
    due = store.keys.due(partition("g-due"))
    await store.append(request("g-due", b[0], due_at=CREATED_AT + 100))
    assert await store.r.zscore(due, "g-due") == CREATED_AT + 100
    assert await store.due_games(CREATED_AT + 99) == []
    assert await store.due_games(CREATED_AT + 100) == [("g-due", CREATED_AT + 100)]
    await store.append(request("g-due", b[1], due_at=CREATED_AT + 50))
    assert await store.r.zscore(due, "g-due") == CREATED_AT + 50
    await store.append(request("g-due", b[2]))
    assert await store.r.zscore(due, "g-due") is None
    assert await store.due_games(CREATED_AT + 10**9) == []


async def test_due_games_are_the_soonest_first_and_at_most_limit(store):
    ids = [f"g-soon-{i}" for i in range(40)]
    for i, gid in enumerate(ids):
        await store.append(request(gid, batches(TEMPLATE)[0], due_at=CREATED_AT + 1000 - i))
    got = await store.due_games(CREATED_AT + 10_000, limit=10)
    assert got == [(ids[39 - i], CREATED_AT + 961 + i) for i in range(10)]
    assert len(await store.due_games(CREATED_AT + 10_000)) == 40


async def test_clear_due_only_when_the_version_is_unchanged(store):
    b = batches("g-clear")
    due = store.keys.due(partition("g-clear"))
    await store.append(request("g-clear", b[0], due_at=CREATED_AT + 1))
    await store.append(request("g-clear", b[1], due_at=CREATED_AT + 2))
    await store.clear_due("g-clear", b[0].last)  # the game moved on: its new due action stays
    assert await store.r.zscore(due, "g-clear") == CREATED_AT + 2
    await store.clear_due("g-clear", b[1].last + 1)
    assert await store.r.zscore(due, "g-clear") == CREATED_AT + 2
    await store.clear_due("g-clear", b[1].last)
    assert await store.r.zscore(due, "g-clear") is None
    await store.clear_due("g-never", 0)  # an unknown game: nothing happens
    assert await store.due_games(CREATED_AT + 10**9) == []


async def test_clear_due_with_a_later_time_moves_it_there_only_when_the_version_is_unchanged(store):
    """What the runner does when a game owes nothing now but will be closed if nobody moves: due again later."""
    b = batches("g-later")
    due = store.keys.due(partition("g-later"))
    await store.append(request("g-later", b[0], due_at=CREATED_AT + 1))
    await store.append(request("g-later", b[1], due_at=CREATED_AT + 2))
    await store.clear_due("g-later", b[0].last, later=CREATED_AT + 500)  # the game moved on: left alone
    assert await store.r.zscore(due, "g-later") == CREATED_AT + 2
    await store.clear_due("g-later", b[1].last, later=CREATED_AT + 500)
    assert await store.r.zscore(due, "g-later") == CREATED_AT + 500
    assert await store.due_games(CREATED_AT + 499) == []
    await store.clear_due("g-never", 0, later=CREATED_AT)  # an unknown game: nothing happens
    assert await store.r.zscore(store.keys.due(partition("g-never")), "g-never") is None


async def test_an_archived_game_is_never_made_due_again(store):
    """A runner that looked at a finished game before another worker archived it moves its due action later: the
    archived game (its events gone) must not be given one again, to be loaded from the archive for nothing."""
    b = batches("g-archived")
    for i, x in enumerate(b):
        await store.append(request("g-archived", x, due_at=CREATED_AT + 1, status="finished" if i == len(b) - 1 else None))
    await store.r.hset(store.keys.game_projection("scores", "g-archived"), "applied", b[-1].last)
    assert await store.forget_events("g-archived", b[-1].last) is True
    await store.clear_due("g-archived", b[-1].last, later=CREATED_AT + 500)
    assert await store.r.zscore(store.keys.due(partition("g-archived")), "g-archived") is None
    assert await store.due_games(CREATED_AT + 10**9) == []


async def test_a_stale_due_entry_of_an_archived_game_goes_even_when_asked_to_move_it_later(store):
    """Two runners at one stale entry of an archived game: the one whose archive pass was told ``leased`` asks to look
    again later — the game is owed nothing, so the entry goes rather than stays (a CI run saw it stay)."""
    b = batches("g-stale")
    for i, x in enumerate(b):
        await store.append(request("g-stale", x, due_at=CREATED_AT + 1, status="finished" if i == len(b) - 1 else None))
    await store.r.hset(store.keys.game_projection("scores", "g-stale"), "applied", b[-1].last)
    assert await store.forget_events("g-stale", b[-1].last) is True
    due = store.keys.due(partition("g-stale"))
    await store.r.zadd(due, {"g-stale": 1})
    await store.clear_due("g-stale", b[-1].last, later=CREATED_AT + 500)
    assert await store.r.zscore(due, "g-stale") is None


async def test_clear_due_never_loses_the_due_action_of_an_append_that_lands_meanwhile(store):
    """A clear that read the old version must not remove the due action an append set since."""
    b = batches("g-clear-race")
    due = store.keys.due(partition("g-clear-race"))
    await store.append(request("g-clear-race", b[0], due_at=CREATED_AT + 1))
    racer: list[asyncio.Task] = []
    real_hget = store.r.hget

    async def hget_then_let_an_append_in(*args, **kw):
        got = await real_hget(*args, **kw)
        if not racer:
            racer.append(asyncio.create_task(store.append(request("g-clear-race", b[1], due_at=CREATED_AT + 2))))
            await asyncio.sleep(0.05)
        return got

    store.r.hget = hget_then_let_an_append_in
    try:
        await store.clear_due("g-clear-race", b[0].last)
        for t in racer:
            assert (await t).outcome == "ok"
    finally:
        del store.r.hget
    if racer:  # the store read the version the slow way; the append that got in keeps its due action
        assert await store.r.zscore(due, "g-clear-race") == CREATED_AT + 2
    else:  # one atomic step: the version was unchanged, so the due action went
        assert await store.r.zscore(due, "g-clear-race") is None


async def test_each_append_points_the_partition_log_at_its_range(store):
    b = batches("g-log")
    await append_all(store, "g-log", upto=5)
    await store.append(request("g-log", b[5], expected=0))  # refused: no pointer
    assert await log_pointers(store, "g-log") == [(x.first, x.last) for x in b[:5]]
    rows = await store.r.xrange(store.keys.log(partition("g-log")), "-", "+")
    assert all(set(f) == {b"game", b"from", b"to"} for _, f in rows)


async def test_list_games_by_status_newest_first(store):
    made, b = [], batches(TEMPLATE)
    for i in range(24):
        gid = f"g-list-{i}"
        status = STATUSES[i % 3]
        await store.append(request(gid, b[0], created_at=CREATED_AT + i))
        await store.append(request(gid, b[1], created_at=CREATED_AT + i, status=status))
        made.append((gid, status))
    newest = list(reversed(made))
    for s in STATUSES:
        want = [g for g, st in newest if st == s]
        assert want, s
        assert await store.list_games(s, 100) == want
        assert await store.list_games(s, 3) == want[:3]
    assert await store.list_games(None, 100) == [g for g, _ in newest]
    assert await store.list_games(None, 5) == [g for g, _ in newest[:5]]


async def test_list_games_of_one_kind_reads_that_kinds_index(store):
    """Each kind has its own index per status: a page of one kind lists its newest, however many games of other
    kinds are newer, and moves with the game's status like the status indexes do."""
    b = batches(TEMPLATE)
    for i in range(30):
        gid, kind = f"g-kind-{i}", ("solitaire" if i % 3 else "free-parking")
        await store.append(request(gid, b[0], created_at=CREATED_AT + i, kind=kind, meta={"kind": kind}))
        await store.append(request(gid, b[1], created_at=CREATED_AT + i, kind=kind, status="playing" if i % 2 else None))
    newest = [f"g-kind-{i}" for i in reversed(range(30))]
    cards = [g for g in newest if int(g.rsplit("-", 1)[1]) % 3 == 0]
    assert await store.list_games(None, 3, "free-parking") == cards[:3]
    assert await store.list_games("playing", 100, "free-parking") == [g for g in cards if int(g.rsplit("-", 1)[1]) % 2]
    assert await store.list_games(None, 100, "monopoly") == []
    assert [m["kind"] for m in await store.metas(cards)] == ["free-parking"] * len(cards)
    assert await store.metas(["g-kind-none"]) == [None]


@pytest.mark.parametrize("store", ["redis", "cluster"], indirect=True)  # the embedded store's way: the test below
async def test_games_appended_before_the_kind_indexes_are_indexed_once(store):
    """A deployment's games from before appends named their kind are put into their kind's indexes, once."""
    b = batches(TEMPLATE)
    await store.append(request("g-old-kind", b[0], meta={"kind": "free-parking"}))
    await store.append(request("g-old-kind", b[1]))
    assert await store.list_games(None, 100, "free-parking") == []
    assert await store.index_kinds() == 1
    assert await store.list_games(None, 100, "free-parking") == ["g-old-kind"]
    assert await store.index_kinds() == 0  # done once per namespace


async def test_an_embedded_journal_from_before_the_kind_indexes_replays_into_them(tmp_path):
    """A journal whose appends predate their ``kind`` field: replayed, each game lands in its kind's indexes (the
    kind its first append's meta recorded), as a game appended now does."""
    from service.store.embedded import EmbeddedStore

    b = batches(TEMPLATE)
    store = await EmbeddedStore(tmp_path / "data").open()
    await store.append(request("g-journal-kind", b[0], meta={"kind": "free-parking"}))
    await store.append(request("g-journal-kind", b[1], status="playing"))
    assert await store.list_games(None, 100, "free-parking") == []
    await store.close()
    again = await EmbeddedStore(tmp_path / "data").open()
    assert await again.list_games("playing", 100, "free-parking") == ["g-journal-kind"]
    await again.close()


async def test_a_claim_is_taken_by_the_first_append_and_refuses_another_game(store):
    """One seat per player per tournament: an append that claims a field of a claims hash takes it (or holds it
    already); one from another game is refused ``claimed``, naming the holder, and writes nothing."""
    b = batches(TEMPLATE)
    claims = store.keys.tournament_seats("t_cup")
    first, second = table_id("t_cup", 0), table_id("t_cup", 1)  # a tournament's tables share its slot
    await store.claim_seats("t_cup", {"p_ann": first})
    for gid in (first, second):
        await store.append(request(gid, b[0]))
    taken = await store.append(msgspec.structs.replace(request(second, b[1]), claims=claims, claim="p_bob"))
    assert taken.outcome == "ok"
    refused = await store.append(msgspec.structs.replace(request(first, b[1]), claims=claims, claim="p_bob"))
    assert (refused.outcome, refused.holder) == ("claimed", second)
    assert (await store.meta(first))["version"] == str(b[0].last)  # nothing written
    reserved = await store.append(msgspec.structs.replace(request(second, b[2]), claims=claims, claim="p_ann"))
    assert (reserved.outcome, reserved.holder) == ("claimed", first)
    held = await store.append(msgspec.structs.replace(request(first, b[1]), claims=claims, claim="p_ann"))
    assert held.outcome == "ok"
    assert await store.r.hgetall(claims) == {b"p_ann": first.encode(), b"p_bob": second.encode()}
    with pytest.raises(ValueError):  # a claim names both its hash and its field
        msgspec.structs.replace(request(first, b[2]), claim="p_x")


# --- tokens and players -------------------------------------------------------------------------


async def test_tokens_and_players_round_trip(store):
    assert await store.token("d" * 64) is None
    assert await store.player("p-1") is None
    record = b'{"player":"p-1","seat":null}\x00\xff'
    await store.put_token("d" * 64, record)
    assert await store.token("d" * 64) == record
    await store.put_token("d" * 64, b"replaced")
    assert await store.token("d" * 64) == record  # a token is written once and never changes
    await store.put_player("p-1", {"name": "Ada", "created_at": "1"})
    await store.put_player("p-1", {"name": "Ada L.", "games": "3"})
    assert await store.player("p-1") == {"name": "Ada L.", "created_at": "1", "games": "3"}


async def test_the_key_listings_head_is_none_until_recorded_then_the_last_one(store):
    """What the service starts against (service/api/app.py): a listing that does not extend it is refused."""
    assert await store.listing_head() is None
    await store.put_listing_head(1, "a" * 64)
    await store.put_listing_head(3, "b" * 64)
    assert await store.listing_head() == (3, "b" * 64)


# --- rate limits: one key per bucket, outside the journal ----------------------------------------

MINUTE = 60_000


async def test_a_bucket_gives_its_burst_then_one_token_per_interval(store):
    for _ in range(3):
        assert await store.rate_take("games:a", CREATED_AT, MINUTE, 3) == 0
    assert await store.rate_take("games:a", CREATED_AT, MINUTE, 3) == MINUTE  # the wait until the next token
    assert await store.rate_take("games:a", CREATED_AT + MINUTE - 1, MINUTE, 3) == 1
    assert await store.rate_take("games:a", CREATED_AT + MINUTE, MINUTE, 3) == 0
    assert await store.rate_take("games:a", CREATED_AT + MINUTE, MINUTE, 3) == MINUTE
    assert await store.rate_take("games:a", CREATED_AT + 10 * MINUTE, MINUTE, 3) == 0  # full again after a rest


async def test_a_refused_take_changes_nothing_and_buckets_are_apart(store):
    key = store.keys.bucket("games:b")
    for _ in range(2):
        await store.rate_take("games:b", CREATED_AT, MINUTE, 2)
    stored = await store.r.get(key)
    assert int(stored) == CREATED_AT + 2 * MINUTE  # the theoretical arrival time of the next request
    assert await store.rate_take("games:b", CREATED_AT, MINUTE, 2) > 0
    assert await store.r.get(key) == stored
    assert await store.rate_take("games:c", CREATED_AT, MINUTE, 2) == 0  # another bucket is untouched
    assert await store.rate_take("players:b", CREATED_AT, MINUTE, 2) == 0


async def test_an_idle_bucket_expires_when_it_is_full_again(store):
    key = store.keys.bucket("games:ttl")
    await store.rate_take("games:ttl", CREATED_AT, MINUTE, 5)
    await store.rate_take("games:ttl", CREATED_AT, MINUTE, 5)
    assert 0 < await store.r.pttl(key) <= 2 * MINUTE
    assert await store.r.type(key) in (b"string", "string")


async def test_a_token_given_back_can_be_taken_again(store):
    key = store.keys.bucket("games:back")
    for _ in range(2):
        await store.rate_take("games:back", CREATED_AT, MINUTE, 2)
    await store.rate_give_back("games:back", CREATED_AT, MINUTE)
    assert await store.rate_take("games:back", CREATED_AT, MINUTE, 2) == 0
    assert await store.rate_take("games:back", CREATED_AT, MINUTE, 2) == MINUTE
    for _ in range(2):
        await store.rate_give_back("games:back", CREATED_AT, MINUTE)
    assert await store.r.exists(key) == 0  # full again: no key left
    await store.rate_give_back("games:never", CREATED_AT, MINUTE)  # nothing taken: nothing happens
    assert await store.r.exists(store.keys.bucket("games:never")) == 0


async def test_concurrent_takes_never_give_more_than_the_burst(store):
    # one call first: redis-py's cluster client fails concurrent calls made before its first one has connected
    # (the service's first calls, at start, are its durability check)
    first = await store.rate_take("games:rush", CREATED_AT, MINUTE, 5)
    got = await asyncio.gather(*(store.rate_take("games:rush", CREATED_AT, MINUTE, 5) for _ in range(19)))
    assert sorted([first, *got]) == [0] * 5 + [MINUTE] * 15


async def test_a_take_from_several_buckets_takes_from_all_or_from_none(store):
    """``rate_take_all``, a command's one store call for its player's and its address's buckets (on a cluster, in
    slots of their own): one bucket empty, none is charged; all with tokens, each is."""
    player, address = store.keys.bucket("commands:player:p"), store.keys.bucket("commands:addr:a")
    both = [("commands:player:p", MINUTE, 3), ("commands:addr:a", MINUTE // 2, 2)]
    assert await store.rate_take_all(both, CREATED_AT) == (-1, 0)
    assert await store.rate_take_all(both, CREATED_AT) == (-1, 0)
    taken = await store.r.get(player)
    assert int(taken) == CREATED_AT + 2 * MINUTE and int(await store.r.get(address)) == CREATED_AT + MINUTE
    assert await store.rate_take_all(both, CREATED_AT) == (1, MINUTE // 2)  # the address's is empty: its wait
    assert await store.r.get(player) == taken  # and the player's gave nothing
    assert await store.rate_take_all(both[:1], CREATED_AT) == (-1, 0)  # the player's third token is still there
    assert await store.rate_take_all(both, CREATED_AT) == (0, MINUTE)  # now the player's is the first empty one
    assert await store.rate_take_all(both, CREATED_AT + MINUTE) == (-1, 0)  # a token of each came back since


async def test_buckets_are_not_journalled(tmp_path):
    store = await EmbeddedStore(tmp_path / "data").open()
    await store.put_token("e" * 64, b"kept")
    size = (tmp_path / "data" / "journal.bin").stat().st_size
    for _ in range(3):
        await store.rate_take("games:j", CREATED_AT, MINUTE, 2)
    await store.rate_give_back("games:j", CREATED_AT, MINUTE)
    assert (tmp_path / "data" / "journal.bin").stat().st_size == size
    await store.close()
    again = await EmbeddedStore(tmp_path / "data").open()
    assert await again.token("e" * 64) == b"kept"
    assert await again.r.exists(again.keys.bucket("games:j")) == 0  # a restart forgets every bucket
    await again.close()


# --- concurrency --------------------------------------------------------------------------------


async def test_concurrent_appends_at_one_version_let_exactly_one_through(store):
    b = batches("g-race")
    await append_all(store, "g-race", upto=2)
    results = await asyncio.gather(
        *(store.append(request("g-race", b[2], key=f"seat:{i % 4}:c{i}", digest="d")) for i in range(40))
    )
    assert sorted(r.outcome for r in results) == ["conflict"] * 39 + ["ok"]
    assert all(r.version == b[2].last for r in results if r.outcome == "ok")
    assert all(r.version == b[2].last for r in results)  # every loser saw the winner's version
    assert await store.read("g-race") == [e for x in b[:3] for e in x.envelopes]
    assert len(await store.r.hgetall(store.keys.commands("g-race"))) == 1
    assert await log_pointers(store, "g-race") == [(x.first, x.last) for x in b[:3]]


async def test_concurrent_appends_to_many_games_all_go_through(store):
    ids = [f"g-many-{i}" for i in range(64)]

    tmpl = batches(TEMPLATE)[:4]

    async def play(gid: str) -> None:
        for b in tmpl:
            got = await store.append(request(gid, b, key=f"server:{b.first}", digest="d"))
            assert got == Appended("ok", b.last, b.first, b.last)

    await asyncio.gather(*(play(g) for g in ids))
    for gid in ids:
        assert await store.read(gid) == as_game(gid, [e for b in tmpl for e in b.envelopes])
        assert await log_pointers(store, gid) == [(b.first, b.last) for b in tmpl]


async def test_concurrent_duplicates_of_one_command_append_it_once(store):
    b = batches("g-dups")
    results = await asyncio.gather(
        *(store.append(request("g-dups", b[0], key="seat:0:once", digest="d")) for _ in range(20))
    )
    assert sorted(r.outcome for r in results) == ["duplicate"] * 19 + ["ok"]
    assert {(r.version, r.first, r.last) for r in results} == {(b[0].last, 1, b[0].last)}
    assert await store.read("g-dups") == b[0].envelopes


# --- the script forgotten by the server -----------------------------------------------------------


class _ForgetOnce:
    """A client whose first pipeline sends its second append as if that node had forgotten the script."""

    def __init__(self, client: Any) -> None:
        self._client, self.armed = client, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def pipeline(self, *args: Any, **kw: Any) -> Any:
        pipe = self._client.pipeline(*args, **kw)
        if self.armed:
            self.armed, calls, execute_command = False, [], pipe.execute_command

            def forgetful(*args: Any, **options: Any) -> Any:
                if str(args[0]).upper() == "EVALSHA":  # the store sends it by name (a cluster pipeline has no evalsha)
                    calls.append(args[1])
                    if len(calls) == 2:
                        args = (args[0], "0" * 40, *args[2:])
                return execute_command(*args, **options)

            pipe.execute_command = forgetful
        return pipe


async def test_appends_the_server_forgot_the_script_for_are_retried_and_only_those(script_store):
    store = script_store
    tmpl = batches(TEMPLATE)
    ids = [f"g-noscript-{i}" for i in range(4)]
    for gid in ids:
        await store.append(request(gid, tmpl[0]))
    store.r = _ForgetOnce(store.r)
    results = await asyncio.gather(*(store.append(request(gid, tmpl[1])) for gid in ids))
    assert not store.r.armed  # the four went in one pipeline, the second of which met NOSCRIPT
    assert results == [Appended("ok", tmpl[1].last, tmpl[1].first, tmpl[1].last)] * 4
    for gid in ids:
        assert await store.read(gid) == as_game(gid, tmpl[0].envelopes + tmpl[1].envelopes)
    store.r = store.r._client


async def test_a_server_that_forgot_every_script_gets_it_again():
    store = RedisStore(fakeredis.FakeAsyncRedis(decode_responses=False))
    tmpl = batches(TEMPLATE)
    await store.append(request("g-flushed", tmpl[0]))
    await store.r.script_flush()  # as after a restart without persistence of scripts
    got = await asyncio.gather(*(store.append(request(f"g-flushed-{i}", tmpl[0])) for i in range(3)))
    assert {r.outcome for r in got} == {"ok"}
    assert await store.append(request("g-flushed", tmpl[1])) == Appended("ok", tmpl[1].last, tmpl[1].first, tmpl[1].last)
    await store.close()


# --- three implementations, one result ----------------------------------------------------------


def scenario() -> list[tuple[str, Any]]:
    """A sequence of writes that touches every branch of the append contract."""
    ops: list[tuple[str, Any]] = []
    for i in range(6):
        gid = f"g-same-{i}"
        b = batches(gid if i < 2 else TEMPLATE)
        n = (3, 9, 14)[i % 3]
        for j, x in enumerate(b[:n]):
            ops.append(
                (
                    "append",
                    request(
                        gid,
                        x,
                        key=f"seat:{j % 4}:c{j}" if j % 2 else "",
                        digest=command_digest(b"%d" % j),
                        due_at=CREATED_AT + 1000 * j if j % 3 else None,
                        meta=({"kind": "free-parking"} if i % 2 else {}) | {"n": str(j)} if j < 2 else {},
                        kind="free-parking" if i % 2 else "",  # half the games in their kind's indexes too
                        created_at=CREATED_AT + i,
                        status="finished" if i % 3 == 2 and j == n - 1 else None,
                    ),
                )
            )
        x = b[n - 1]
        ops.append(("append", request(gid, x, expected=0)))  # conflict
        ops.append(("append", request(gid, b[1], expected=999, key="seat:1:c1", digest=command_digest(b"1"))))  # duplicate
        ops.append(("append", request(gid, b[1], key="seat:1:c1", digest=command_digest(b"other"))))  # reused
        ops.append(("clear_due", (gid, x.last - 1)))
        ops.append(("clear_due", (gid, x.last if i % 2 else -1)))
        if i % 2 == 0:
            ops.append(("clear_due", (gid, x.last, CREATED_AT + 99_000 + i)))  # due again later (to close it)
        ops.append(("put_token", (f"{i:064x}", b"token %d" % i)))
        ops.append(("put_player", (f"p-{i}", {"name": f"player {i}", "n": str(i)})))
        ops += solitaire_stats_ops(f"p-{i % 2}", gid, i)
    return ops


STATS_BUCKETS = ["dealt", "chosen_seed", "redeal_undone"]


def solitaire_stats_ops(player: str, game: str, i: int) -> list[tuple[str, Any]]:
    """A solitaire's statistics upserts: dealt, moved apart, ended (won or not, with a time or none), then a repeat and
    an older snapshot (both refused)."""
    bucket = STATS_BUCKETS[i % 3]
    end = CREATED_AT + 100 + i
    time_ms = None if i == 4 else 40 + i
    return [
        ("project_solitaire_game", (player, game, 3, STATS_BUCKETS, "dealt", CREATED_AT, None, None, False)),
        ("project_solitaire_game", (player, game, 9, STATS_BUCKETS, bucket, CREATED_AT, None, None, False)),
        ("project_solitaire_game", (player, game, 12, STATS_BUCKETS, bucket, CREATED_AT, end, time_ms, i % 2 == 0)),
        ("project_solitaire_game", (player, game, 12, STATS_BUCKETS, bucket, CREATED_AT, end, time_ms, i % 2 == 0)),
        ("project_solitaire_game", (player, game, 5, STATS_BUCKETS, "dealt", CREATED_AT, None, None, False)),
    ]


async def run_scenario(store) -> tuple[list[Any], dict[str, Any]]:
    results = []
    for op, args in scenario():
        if op == "append":
            results.append(await store.append(args))
        else:
            results.append(await getattr(store, op)(*args))
    reads = {}
    for i in range(6):
        gid = f"g-same-{i}"
        reads[gid] = (await store.read(gid), await store.meta(gid))
    results.append(reads)
    results.append([await store.list_games(s, 100) for s in (None, *STATUSES)])
    results.append(await store.due_games(CREATED_AT + 10**9))
    return results, await dump(store)


async def test_lua_on_redis_lua_on_fakeredis_and_python_embedded_agree(tmp_path, request):
    embedded = await EmbeddedStore(tmp_path / "data").open()
    lua_fake = RedisStore(fakeredis.FakeAsyncRedis(decode_responses=False))
    stores = {"embedded": embedded, "lua-fakeredis": lua_fake}
    url = redis_url()
    if url is not None:
        stores["lua-redis"] = RedisStore.from_url(url, namespace=namespace())
    if cluster_tools_found():  # else the cluster's own tests say why they did not run (and fail in CI)
        cluster = request.getfixturevalue("redis_cluster")
        stores["lua-cluster"] = RedisStore.from_url(cluster.url, namespace=namespace(), cluster=True)
    try:
        outcomes = {name: await run_scenario(s) for name, s in stores.items()}
    finally:
        for name in ("lua-redis", "lua-cluster"):
            if name in stores:
                await drop_namespace(stores[name].r, stores[name].keys.ns)
        for s in stores.values():
            await s.close()
    want_results, want_keys = outcomes["embedded"]
    assert want_keys  # the scenario wrote something
    assert {r.outcome for r in want_results if isinstance(r, Appended)} == {"ok", "conflict", "duplicate", "command_id_reused"}
    for name, (results, keys) in outcomes.items():
        assert results == want_results, name
        assert keys == want_keys, name
    if url is None:
        if os.environ.get("FREE_PARKING_CI"):
            pytest.fail("CI must compare against a real Redis too")
        pytest.skip("compared embedded with the script on fakeredis; no real Redis answers for the third")


# --- one slot per script ------------------------------------------------------------------------


def crc16_xmodem(data: bytes) -> int:
    """CRC16-CCITT (XModem), the checksum Redis Cluster takes mod 16384 (cluster spec, appendix A)."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key: str) -> int:
    """The key's hash slot: only the part between the first ``{`` and the next ``}`` counts, if not empty."""
    raw = key.encode()
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1 : end]
    return crc16_xmodem(raw) % 16384


def test_the_slot_function_matches_the_spec_and_redis_py():
    assert crc16_xmodem(b"123456789") == 0x31C3  # the spec's check value
    for key in ("foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{}x", "a{b"):
        assert slot(key) == key_slot(key.encode()), key
    assert slot("{user1000}.following") == slot("{user1000}.followers")
    assert slot("foo{}{bar}") == key_slot(b"foo{}{bar}")  # an empty tag: the whole key is hashed


GAME_IDS = [f"g-{i}" for i in range(500)] + ["", "{", "}", "}{", "{x}", "a{b}c", "{p3}", "ünïcødé", "x" * 300]


@pytest.mark.parametrize("ns", ["fp", "t0123456789ab", "a:b"])
def test_every_key_of_the_append_script_is_in_one_slot(ns):
    keys = Keys(ns)
    slots_seen = set()
    for gid in GAME_IDS:
        names = keys.game_keys(gid)
        assert len(names) == 9 and len(set(names)) == 9  # the outbox too (service/store/told.py)
        with_kind = keys.game_keys(gid, "free-parking")
        assert with_kind[:9] == names and len(set(with_kind)) == 12
        names = with_kind
        slots = {slot(k) for k in names} | {key_slot(k.encode()) for k in names}
        assert len(slots) == 1, (gid, names)
        # the clear-due script's keys, and a game's own read models, share that slot too
        assert slot(keys.meta(gid)) == slot(keys.due(partition(gid))) == slot(keys.game_projection("x", gid)) == slots.pop()
        slots_seen.add(slot(names[0]))
    assert len(slots_seen) == PARTITIONS  # the partitions spread over distinct slots


def test_a_namespace_with_braces_is_refused():
    for bad in ("f{p", "f}p", "{x}"):
        with pytest.raises(ValueError):
            Keys(bad)
