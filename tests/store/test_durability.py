"""Durability on a real Redis: what each AOF setting promises, refusing "durable" where it cannot be had,
the WAITAOF flow, and a crash drill (SIGKILL the server mid-stream, restart it, find every acknowledged event).

These tests start redis-server processes of their own, on free loopback ports, in ``tmp_path``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import pytest
import redis.asyncio as aioredis

from replays.verify import verify
from service.store.durability import Durability, check_durability, embedded_durability
from service.events.envelope import GENESIS, Envelope, body_of, canonical, chain_hash
from service.store.redis_store import RedisStore
from service.store.store import Appended, NotDurable, StoreUnavailable
from service.rules.engine import Game, export_header, rules_for
from tests.store.test_store_contract import TEMPLATE, Batch, batches, request
from tests.servers import ALWAYS, REDIS_SERVER, Server, free_port

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


async def inspect(server: Server, requested: str) -> Durability:
    client = aioredis.from_url(server.url)
    try:
        return await check_durability(client, requested)
    finally:
        await client.aclose()


async def server_has_waitaof(server: Server) -> bool:
    client = aioredis.from_url(server.url)
    try:
        return (await client.execute_command("COMMAND INFO", "WAITAOF"))[0] is not None
    finally:
        await client.aclose()


# --- what each setting promises; refusing what cannot be had -----------------------------------


async def test_appendonly_no_is_refused_for_durable_naming_the_setting(servers):
    server = servers("--appendonly", "no")
    with pytest.raises(NotDurable, match="`appendonly yes`") as refused:
        await inspect(server, "durable")
    assert "FREE_PARKING_DURABILITY=none" in str(refused.value)
    d = await inspect(server, "none")
    assert (d.method, d.waitaof, d.appendonly) == ("none", False, "no")
    assert "lost" in d.guarantee and "appendonly no" in d.guarantee


async def test_everysec_is_refused_for_durable_naming_appendfsync(servers):
    server = servers("--appendonly", "yes", "--appendfsync", "everysec")
    if await server_has_waitaof(server):  # a 7.2+ server makes it durable by waiting instead
        assert (await inspect(server, "durable")).method == "waitaof"
        return
    with pytest.raises(NotDurable, match="set `appendfsync always`") as refused:
        await inspect(server, "durable")
    assert "`appendfsync everysec`" in str(refused.value)  # what it has now
    d = await inspect(server, "none")
    assert (d.appendonly, d.appendfsync) == ("yes", "everysec")
    assert "second" in d.guarantee


async def test_appendfsync_no_is_refused_for_durable(servers):
    server = servers("--appendonly", "yes", "--appendfsync", "no")
    if await server_has_waitaof(server):
        pytest.skip("this redis-server has WAITAOF: durable waits for it instead")
    with pytest.raises(NotDurable, match="set `appendfsync always`"):
        await inspect(server, "durable")
    assert "30 s" in (await inspect(server, "none")).guarantee


async def test_appendfsync_always_is_accepted(servers):
    server = servers(*ALWAYS)
    d = await inspect(server, "durable")
    assert d.requested == "durable" and (d.appendonly, d.appendfsync) == ("yes", "always")
    assert "nothing acknowledged is lost" in d.guarantee
    if d.has_waitaof:
        assert (d.method, d.waitaof) == ("waitaof", True)
    else:  # Redis 7.0 (as installed here): no WAITAOF, so appendfsync always is what makes it durable
        assert (d.method, d.waitaof) == ("appendfsync-always", False)
        assert d.server_version and d.server_version < "7.2"


async def test_config_disabled_means_unknown_and_durable_is_refused_clearly(servers):
    server = servers(*ALWAYS, "--rename-command", "CONFIG", "")
    d = await inspect(server, "none")
    assert (d.appendonly, d.appendfsync) == (None, None)
    assert "could not be read" in d.guarantee
    if d.has_waitaof:  # WAITAOF itself shows the AOF works
        assert (await inspect(server, "durable")).method == "waitaof"
        return
    with pytest.raises(NotDurable, match="CONFIG GET is disabled or renamed"):
        await inspect(server, "durable")


async def test_config_renamed_to_another_name_is_unknown_too(servers):
    server = servers(*ALWAYS, "--rename-command", "CONFIG", "SECRET-CONFIG")
    d = await inspect(server, "none")
    assert d.appendonly is None and d.server_version is not None
    if not d.has_waitaof:
        with pytest.raises(NotDurable, match="allow CONFIG GET"):
            await inspect(server, "durable")


async def test_a_server_without_config_or_info_at_all():
    """fakeredis has neither CONFIG nor INFO: as unknown as a server gets."""
    client = fakeredis.FakeAsyncRedis()
    d = await check_durability(client, "none")
    assert (d.server_version, d.appendonly, d.appendfsync) == (None, None, None)
    with pytest.raises(NotDurable, match="cannot be read"):
        await check_durability(client, "durable")
    with pytest.raises(ValueError):
        await check_durability(client, "mostly")


async def test_an_unreachable_server_is_unavailable_not_undurable():
    client = aioredis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5)
    with pytest.raises(StoreUnavailable):
        await check_durability(client, "durable")
    await client.aclose()


def test_the_embedded_store_is_durable_only_with_fsync():
    assert embedded_durability("durable", True).method == "journal-fsync"
    assert "power" in embedded_durability("durable", True).guarantee
    assert embedded_durability("none", False).method == "journal-flush"
    with pytest.raises(NotDurable, match="--fsync"):
        embedded_durability("durable", False)


# --- the WAITAOF flow ---------------------------------------------------------------------------


async def test_waitaof_on_a_server_that_has_it(servers):
    server = servers(*ALWAYS)
    if not await server_has_waitaof(server):
        version = (await inspect(server, "none")).server_version
        pytest.skip(f"the installed redis-server {version} has no WAITAOF (it came in 7.2); see the flow tests below")
    store = RedisStore.from_url(server.url, waitaof=True)
    b = batches(TEMPLATE)
    got = await asyncio.gather(*(store.append(request(f"g-w-{i}", b[0])) for i in range(8)))
    assert {r.outcome for r in got} == {"ok"}
    await store.put_token("t" * 64, b"x")
    await store.close()
    no_aof = servers("--appendonly", "no", name="no-aof")
    with pytest.raises(NotDurable, match="appendonly yes"):
        await inspect(no_aof, "durable")
    store = RedisStore.from_url(no_aof.url, waitaof=True)
    with pytest.raises(NotDurable):
        await store.append(request("g-w", b[0]))
    await store.close()


async def test_waitaof_missing_makes_every_acknowledgement_fail_loudly(servers):
    """Asked to wait on a server without WAITAOF, the store never answers 'ok' (check_durability never asks it to)."""
    server = servers(*ALWAYS)
    if await server_has_waitaof(server):
        pytest.skip("this redis-server has WAITAOF")
    store = RedisStore.from_url(server.url, waitaof=True)
    b = batches(TEMPLATE)
    with pytest.raises(NotDurable, match="WAITAOF"):
        await store.append(request("g-nw", b[0]))
    with pytest.raises(NotDurable):
        await store.put_token("t" * 64, b"x")
    with pytest.raises(NotDurable):
        await store.put_player("p", {"name": "x"})
    await store.close()


class _RecordingClient:
    """A fakeredis client whose pipelines are recorded, with WAITAOF answered as a 7.2 server would ([1, 0]), and WAIT
    as a server with ``replicas`` replicas (fakeredis has neither)."""

    def __init__(self) -> None:
        self.client = fakeredis.FakeAsyncRedis(decode_responses=False)
        self.pipelines: list[list[str]] = []
        self.local, self.replicas = 1, 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def pipeline(self, *args: Any, **kw: Any) -> Any:
        pipe, names = self.client.pipeline(*args, **kw), []
        self.pipelines.append(names)
        execute_command = pipe.execute_command

        def recorded(*cmd: Any, **options: Any) -> Any:
            names.append(str(cmd[0]).upper())
            if cmd[0] == "WAITAOF":
                return execute_command("EVAL", f"return {{{self.local}, 0}}", 0)
            if cmd[0] == "WAIT":
                return execute_command("EVAL", f"return {self.replicas}", 0)
            return execute_command(*cmd, **options)

        pipe.execute_command = recorded
        return pipe


async def test_the_waitaof_goes_in_each_pipeline_after_its_writes():
    client = _RecordingClient()
    store = RedisStore(client, waitaof=True)
    b = batches(TEMPLATE)
    got = await asyncio.gather(*(store.append(request(f"g-f-{i}", b[0])) for i in range(5)))
    assert got == [Appended("ok", b[0].last, 1, b[0].last)] * 5
    await store.put_token("t" * 64, b"x")
    await store.put_player("p-1", {"name": "x"})
    assert await store.token("t" * 64) == b"x" and await store.player("p-1") == {"name": "x"}
    for names in client.pipelines:  # one WAITAOF, last, on the connection that wrote
        assert names[-1] == "WAITAOF" and names.count("WAITAOF") == 1, names
    assert sum(n.count("EVALSHA") for n in client.pipelines) >= 5
    client.local = 0  # the fsync did not happen in time: the append is not acknowledged
    with pytest.raises(NotDurable):
        await store.append(request("g-f-0", b[1]))
    await store.close()


# --- the crash drill ----------------------------------------------------------------------------


def game_of(game_id: str) -> list[Batch]:
    return batches(game_id, seed=7)


def chain_ok(envelopes: list[Envelope]) -> bool:
    prev = GENESIS
    for seq, env in enumerate(envelopes, start=1):
        if env.seq != seq or env.prev_hash != prev or env.hash != chain_hash(prev, canonical(body_of(env))):
            return False
        prev = env.hash
    return True


def verified(game_id: str, envelopes: list[Envelope]) -> bool:
    """The stored log verifies: chain, secrets and every decision re-made from the seed."""
    game = Game.new("free-parking", game_id, rules_for("free-parking").CONFIG(seats=4), bytes([7]) * 32)
    game.fold(envelopes)
    verdict = verify(export_header(game, with_seed=True), envelopes)
    return verdict.ok and verdict.events == len(envelopes)


async def test_crash_drill_sigkill_mid_stream_loses_nothing_acknowledged(servers):
    server = servers(*ALWAYS, name="drill")
    durability = await inspect(server, "durable")
    store = RedisStore.from_url(server.url, waitaof=durability.waitaof)
    games = [f"drill-{i}" for i in range(8)]
    acked: dict[str, int] = {}
    killed = asyncio.Event()

    async def play(gid: str) -> None:
        for b in game_of(gid):
            try:
                got = await store.append(request(gid, b, key=f"server:{b.first}", digest=str(b.first)))
            except StoreUnavailable:
                return  # the server died under this append: it was not acknowledged
            assert got.outcome == "ok", got
            acked[gid] = got.last
            if sum(acked.values()) > 800 and not killed.is_set():
                killed.set()
                server.kill()  # SIGKILL while the other games' appends are in flight

    await asyncio.gather(*(play(g) for g in games))
    assert killed.is_set() and len(acked) == len(games)
    await store.close()

    server.start()  # the same directory: Redis reads its append-only file back
    store = RedisStore.from_url(server.url, waitaof=durability.waitaof)
    for gid in games:
        template = [e for b in game_of(gid) for e in b.envelopes]
        stored = await store.read(gid)
        assert len(stored) >= acked[gid], gid  # everything acknowledged is there
        assert stored == template[: len(stored)]
        assert chain_ok(stored) and verified(gid, stored)
        meta = await store.meta(gid)
        assert meta is not None and int(meta["version"]) == len(stored) and meta["head"] == stored[-1].hash

    # the service goes on after the restart: each game is finished from where it stands
    for gid in games:
        version = int((await store.meta(gid))["version"])
        for b in game_of(gid):
            if b.first > version:
                got = await store.append(request(gid, b, key=f"server:{b.first}", digest=str(b.first)))
                assert got.outcome == "ok"
        stored = await store.read(gid)
        assert stored == [e for b in game_of(gid) for e in b.envelopes]
        assert verified(gid, stored)
    await store.close()


async def test_without_an_append_only_file_a_crash_loses_what_was_acknowledged(servers):
    """Why "durable" refuses `appendonly no`: the same drill with no AOF (and no snapshots) keeps nothing."""
    server = servers("--appendonly", "no", name="volatile")
    store = RedisStore.from_url(server.url)
    b = batches(TEMPLATE)
    for x in b[:5]:
        assert (await store.append(request("g-volatile", x))).outcome == "ok"
    await store.close()
    server.kill()
    server.start()
    store = RedisStore.from_url(server.url)
    assert await store.read("g-volatile") == []
    assert await store.meta("g-volatile") is None
    await store.close()
