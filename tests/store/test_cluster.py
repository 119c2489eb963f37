"""The store on a real three-master Redis Cluster, beyond the contract it shares with the other stores
(``test_store_contract.py`` runs every case on ``cluster`` too): games spread over the masters, every key of a game
in one slot, the partition logs on three primaries feeding one projector, WAITAOF and the durability check per
primary, a script forgotten by one primary, and finding out that a URL names a cluster node.

The cluster is the session's (``redis_cluster`` in tests/conftest.py, started by ``tests/cluster.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.crc import key_slot

from service.store.durability import check_durability
from service.store.keys import PARTITIONS, Keys, partition
from service.store.redis_store import RedisStore, is_cluster_node
from service.store.store import Appended, NotDurable, StoreUnavailable
from service.store.stores import open_store_checked
from service.projections import Projector, read_audit, read_scores
from tests.cluster import free_cluster_port
from tests.store.test_store_contract import TEMPLATE, as_game, batches, request
from tests.stores import drop_namespace, namespace, redis_url


@pytest.fixture
async def cstore(redis_cluster):
    ns = namespace()
    s = RedisStore.from_url(redis_cluster.url, namespace=ns, cluster=True)
    yield s
    await drop_namespace(s.r, ns)
    await s.close()


async def keys_by_primary(store: RedisStore) -> dict[str, set[str]]:
    """Every key of the store's namespace, by the primary that holds it (each primary scanned on its own)."""
    out: dict[str, set[str]] = {}
    for node in store.r.get_primaries():
        out[node.name] = {
            k.decode() async for k in store.r.scan_iter(match=f"{store.keys.ns}:*", count=1000, target_nodes=node)
        }
    return out


async def test_games_spread_over_the_three_masters_and_every_key_of_a_game_shares_one_slot(cstore):
    store, tmpl = cstore, batches(TEMPLATE)
    ids = [f"g-spread-{i}" for i in range(48)]
    assert len({partition(g) for g in ids}) == PARTITIONS  # every partition has games
    for gid in ids:
        await store.append(request(gid, tmpl[0], key="seat:0:c1", digest="d", due_at=10**13, meta={"kind": "free-parking"}))
        await store.append(request(gid, tmpl[1], due_at=10**13))
    await Projector(store, "spread").catch_up()  # each game's read models (in its slot) and the logs' consumer groups

    primaries = sorted(n.name for n in store.r.get_primaries())
    assert len(primaries) == 3
    held = await keys_by_primary(store)
    owner_of: dict[str, str] = {}
    for gid in ids:
        k = store.keys
        names = [*k.game_keys(gid), k.game_projection("scores", gid), k.game_projection("audit", gid),
                 *k.forget_keys(gid), k.lease("archive", partition(gid))]  # the archive's script and lease too
        # the server's own word on each key's slot (CLUSTER KEYSLOT), not only the client's
        slots = {await store.r.cluster_keyslot(name) for name in names}
        assert len(slots) == 1, (gid, names, slots)
        assert slots == {key_slot(names[0].encode())}
        # the keys that exist (all but the status indexes the game is not in) are all on one primary
        present = [n for n in names if any(n in keys for keys in held.values())]
        assert {k.stream(gid), k.meta(gid), k.commands(gid), k.log(partition(gid)), k.due(partition(gid))} <= set(present)
        assert {k.game_projection("scores", gid), k.game_projection("audit", gid)} <= set(present)
        owners = {node for node, keys in held.items() if any(n in keys for n in present)}
        assert len(owners) == 1, (gid, owners)
        owner_of[gid] = owners.pop()
        assert owner_of[gid] == store.r.get_node_from_key(names[0]).name
    assert sorted(set(owner_of.values())) == primaries  # the games spread over the three masters
    for node in primaries:
        assert sum(o == node for o in owner_of.values()) >= 5, owner_of
    logs = {store.r.get_node_from_key(store.keys.log(p)).name for p in range(PARTITIONS)}
    assert sorted(logs) == primaries  # so do the partition logs: every primary feeds the projectors

    # and the projectors read all of them, as from one server
    for gid in ids:
        model, version = await read_scores(store, gid)
        assert model is not None and version == tmpl[1].last
        lines, audited = await read_audit(store, gid)
        assert audited == version and len(lines) == version
    for gid in ids[:3]:
        assert await store.read(gid) == as_game(gid, tmpl[0].envelopes + tmpl[1].envelopes)
    assert sorted(await store.list_games(None, 100)) == sorted(ids)
    assert len(await store.due_games(10**13)) == len(ids)


class _Recorder:
    """The cluster client's pipelines recorded: which primary each write goes to, and where each WAITAOF (or WAIT) is
    sent.

    Redis 7.0 has no WAITAOF, so it is answered as a 7.2 primary would (``[local, 0]``), by that same primary; the
    session's cluster has no replicas, so a WAIT is answered as by a primary with ``replicas`` of them.
    """

    def __init__(self, store: RedisStore) -> None:
        self.store, self.local, self.replicas = store, 1, 1
        self.pipelines: list[list[tuple[str, str]]] = []
        self._pipeline = store.r.pipeline
        store.r.pipeline = self.pipeline

    def pipeline(self, *args: Any, **kw: Any) -> Any:
        pipe, seen = self._pipeline(*args, **kw), []
        self.pipelines.append(seen)
        execute_command, r = pipe.execute_command, self.store.r

        def recorded(*cmd: Any, **options: Any) -> Any:
            name = str(cmd[0]).upper()
            if name in ("WAITAOF", "WAIT"):
                seen.append((name, options["target_nodes"].name))
                reply = f"{{{self.local}, 0}}" if name == "WAITAOF" else self.replicas
                return execute_command("EVAL", f"return {reply}", 0, **options)
            key = cmd[3] if name == "EVALSHA" else cmd[1]
            seen.append((name, r.get_node_from_key(key).name))
            return execute_command(*cmd, **options)

        pipe.execute_command = recorded
        return pipe

    def stop(self) -> None:
        del self.store.r.pipeline


async def test_waitaof_goes_to_each_primary_written_after_its_writes(cstore):
    store, tmpl = cstore, batches(TEMPLATE)
    store.waitaof = True
    await store.r.initialize()  # the recorder looks up each key's primary as the command is queued
    recorder = _Recorder(store)
    try:
        ids = [f"g-aof-{i}" for i in range(24)]
        got = await asyncio.gather(*(store.append(request(g, tmpl[0])) for g in ids))
        assert got == [Appended("ok", tmpl[0].last, 1, tmpl[0].last)] * len(ids)
        await store.put_token("t" * 64, b"x")
        await store.put_player("p-aof", {"name": "x"})
        assert any(len({node for name, node in seen if name == "EVALSHA"}) == 3 for seen in recorder.pipelines)
        for seen in recorder.pipelines:
            written = [node for name, node in seen if name != "WAITAOF"]
            waited = [node for name, node in seen if name == "WAITAOF"]
            assert sorted(waited) == sorted(set(written)), seen  # one per primary written, none elsewhere
            for node in waited:  # after every write to that primary (the per-node part goes on one connection)
                last_write = max(i for i, (name, n) in enumerate(seen) if n == node and name != "WAITAOF")
                assert seen.index(("WAITAOF", node)) > last_write
        recorder.local = 0  # one primary did not fsync in time: the append is not acknowledged
        with pytest.raises(NotDurable):
            await store.append(request(ids[0], tmpl[1]))
    finally:
        recorder.stop()


async def test_the_durability_check_asks_every_primary(cstore):
    r = await cstore.r.initialize()
    primaries = sorted(r.get_primaries(), key=lambda n: n.name)
    found = await check_durability(r, "none")
    assert found.guarantee.startswith("on every primary of the cluster:") and "appendonly no" in found.guarantee
    with pytest.raises(NotDurable, match="on the cluster's primary 127.0.0.1:") as refused:
        await check_durability(r, "durable")
    assert "`appendonly yes`" in str(refused.value)

    async def configure(node: Any, appendonly: str, appendfsync: str) -> None:
        await r.execute_command("CONFIG SET", "appendfsync", appendfsync, target_nodes=node)
        await r.execute_command("CONFIG SET", "appendonly", appendonly, target_nodes=node)

    try:
        for node in primaries:
            await configure(node, "yes", "always")
        durable = await check_durability(r, "durable")
        assert durable.method in ("appendfsync-always", "waitaof")
        assert durable.guarantee.startswith("on every primary of the cluster:")
        if durable.method == "appendfsync-always":  # Redis 7.0 (as installed here): one primary that stops
            await configure(primaries[1], "yes", "everysec")  # fsyncing on every write makes it refuse, naming it
            with pytest.raises(NotDurable, match=f"primary {primaries[1].name}: .*set `appendfsync always`"):
                await check_durability(r, "durable")
            mixed = await check_durability(r, "none")
            assert f"on {primaries[1].name}: " in mixed.guarantee and "second" in mixed.guarantee
    finally:
        for node in primaries:
            await configure(node, "no", "everysec")


async def test_a_primary_that_forgot_the_scripts_gets_them_again(cstore):
    store, tmpl = cstore, batches(TEMPLATE)
    ids = [f"g-flush-{i}" for i in range(24)]
    for gid in ids:
        await store.append(request(gid, tmpl[0]))
    await Projector(store, "before").catch_up()
    forgetful = store.r.get_node_from_key(store.keys.stream(ids[0]))
    assert await store.r.execute_command("SCRIPT FLUSH", target_nodes=forgetful)  # as after a restart of that primary
    got = await asyncio.gather(*(store.append(request(gid, tmpl[1])) for gid in ids))
    assert got == [Appended("ok", tmpl[1].last, tmpl[1].first, tmpl[1].last)] * len(ids)
    await store.r.execute_command("SCRIPT FLUSH", target_nodes=forgetful)
    await Projector(store, "after", group="second").catch_up()  # the projection script, too
    for gid in ids:
        assert (await read_scores(store, gid))[1] == tmpl[1].last
    await store.r.execute_command("SCRIPT FLUSH", target_nodes=forgetful)
    await store.clear_due(ids[0], tmpl[1].last)  # and the clear-due script


async def test_a_url_says_whether_it_names_a_cluster_node(redis_cluster, tmp_path):
    assert await is_cluster_node(redis_cluster.url)
    ns = namespace()
    store, found = await open_store_checked(redis_cluster.url, tmp_path, namespace=ns)  # cluster="auto"
    try:
        assert store.cluster and found.guarantee.startswith("on every primary of the cluster:")
        assert await store.ping()
        assert sorted(n.port for n in store.r.get_primaries()) == sorted(redis_cluster.ports)
    finally:
        await store.close()
    store, _ = await open_store_checked(redis_cluster.url, tmp_path, namespace=ns, cluster="yes")
    assert store.cluster
    await store.close()
    with pytest.raises(ValueError, match="cluster must be one of auto, yes, no"):
        await open_store_checked(redis_cluster.url, tmp_path, cluster="maybe")
    single = redis_url()
    if single is not None:  # a single server is no cluster node, and a cluster client refuses it
        assert not await is_cluster_node(single)
        store, _ = await open_store_checked(single, tmp_path, namespace=ns)
        assert not store.cluster
        await store.close()
        with pytest.raises(Exception, match="Cluster mode is not enabled"):
            await open_store_checked(single, tmp_path, namespace=ns, cluster="yes")


async def test_a_cluster_nobody_answers_is_unavailable(tmp_path):
    url = f"redis://127.0.0.1:{free_cluster_port()}/0"
    store = RedisStore.from_url(url, namespace=namespace(), cluster=True)
    assert not await store.ping()
    with pytest.raises(StoreUnavailable):
        await store.meta("g-x")
    with pytest.raises(StoreUnavailable):
        await store.append(request("g-x", batches(TEMPLATE)[0]))
    await store.close()
    for cluster in ("auto", "yes"):
        with pytest.raises(StoreUnavailable):
            await open_store_checked(url, tmp_path, cluster=cluster)


def test_a_namespace_keeps_each_partition_in_its_own_slot_on_the_cluster():
    """What the spread above rests on: the partitions' tags hash to sixteen slots, on all three default ranges."""
    keys = Keys("fp")
    slots = [key_slot(keys.log(p).encode()) for p in range(PARTITIONS)]
    assert len(set(slots)) == PARTITIONS
    ranges = {0 if s <= 5460 else 1 if s <= 10922 else 2 for s in slots}  # redis-cli --cluster create's split
    assert ranges == {0, 1, 2}
