"""Projector crash: a standalone projector (``python -m service project``) ``SIGKILL``ed in the middle of a batch —
log entries read and not acknowledged, games half-applied — while bots keep playing; a projector started afterwards
(a new process: a new consumer name) takes the dead one's pending entries over with ``XAUTOCLAIM`` once they have
been idle ``--min-idle`` ms, and the read models end equal to a full rebuild from the streams.

The service runs without its own projector here, so the standalone ones are the only consumers of the group.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from service.store.keys import PARTITIONS
from service.store.redis_store import RedisStore
from service.projections import rebuild
from tests.drills.support import NAMESPACE, Ledger, background, bearer, bot_games, play, versions, wait_until

GROUP = "projectors"
MIN_IDLE_MS = 300


class Projector:
    """``python -m service project`` on the drill's Redis, in a process of its own (its consumer name: host-pid)."""

    def __init__(self, directory: Path, url: str, n: int) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FREE_PARKING_")}
        env.update(REDIS_URL=url, FREE_PARKING_NAMESPACE=NAMESPACE, COLUMNS="200")
        self.log = directory / f"projector-{n}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "service", "project", "--count", "5", "--concurrency", "2", "--poll", "0.05",
                 "--min-idle", str(MIN_IDLE_MS), "--report", "0.5"],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    async def ready(self) -> bool:
        assert self.proc.poll() is None, self.log.read_text()
        return b"(group" in self.log.read_bytes()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


async def consumers(r: aioredis.Redis) -> dict[str, int]:
    """Every consumer of the group on any partition log, and the entries it holds pending."""
    out: dict[str, int] = {}
    for p in range(PARTITIONS):
        try:
            rows = await r.xinfo_consumers(f"{NAMESPACE}:log:{{p{p}}}", GROUP)
        except Exception:  # no group on this log yet
            continue
        for row in rows:
            name = row["name"].decode() if isinstance(row["name"], bytes) else row["name"]
            out[name] = out.get(name, 0) + int(row["pending"])
    return out


async def snapshot(r: aioredis.Redis) -> dict[bytes, object]:
    """Every read model of the namespace, as plain data (whatever its Redis type)."""
    out: dict[bytes, object] = {}
    async for key in r.scan_iter(match=f"{NAMESPACE}:proj:*", count=1000):
        kind = await r.type(key)
        if kind == b"hash":
            out[key] = await r.hgetall(key)
        elif kind == b"list":
            out[key] = await r.lrange(key, 0, -1)
        elif kind == b"zset":
            out[key] = await r.zrange(key, 0, -1, withscores=True)
        elif kind == b"set":
            out[key] = sorted(await r.smembers(key))
        else:
            out[key] = await r.get(key)
    return out


async def test_a_projector_killed_mid_batch_is_taken_over_and_ends_as_a_rebuild(servers, services, tmp_path):
    server = servers()  # no append-only file: Redis is not what breaks here
    service = services(server, projector=False, bot_delay_ms=15)  # bots a little slower: the load lasts
    r = aioredis.from_url(server.url)
    projectors: list[Projector] = []
    stop = asyncio.Event()
    try:
        victims = [Projector(tmp_path, server.url, 0)]  # started first: it is up and projecting when the bots play
        await wait_until(victims[0].ready, 30, "the first projector up")
        async with httpx.AsyncClient(base_url=service.url, timeout=30) as api, background(stop) as start:
            games = await bot_games(api, 10, seats=3)
            ledger, humans = Ledger(), []
            for i in range(2):  # a registered player at a table of bots: the players' results read model too
                player = (await api.post("/players", json={"name": f"Reg {i}"})).json()
                game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 3})).json()["game_id"]
                assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player["token"]))).status_code == 201
                for _ in range(2):
                    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
                humans.append((game_id, [player["token"]]))
            start([play(api, g, t, ledger, random.Random(i), stop, tag=f"reg-{i}") for i, (g, t) in enumerate(humans)])
            games += [g for g, _ in humans]

            # kill a projector the moment it holds entries it read and has not acknowledged (retrying in the rare
            # case it acknowledged them in the instant between the look and the kill)
            dead: dict[str, int] = {}
            for attempt in range(5):
                victim = victims[attempt] if attempt < len(victims) else Projector(tmp_path, server.url, attempt)
                projectors.append(victim)

                async def busy() -> bool:
                    assert victim.proc.poll() is None, victim.log.read_text()
                    held = await consumers(r)
                    return any(n > 0 and name.endswith(f"-{victim.proc.pid}") for name, n in held.items())

                await wait_until(busy, 30, "the projector holding entries mid-batch", every=0.01)
                victim.kill()
                dead = {name: n for name, n in (await consumers(r)).items() if name.endswith(f"-{victim.proc.pid}") and n}
                if dead:
                    break
            assert dead, "could not catch a projector mid-batch"
            # the play goes on after the kill, however fast the first games went on a busy machine: five games more,
            # begun now, so the heir takes over the dead one's entries and new ones alike
            games += await bot_games(api, 5, seats=3)

            heir = Projector(tmp_path, server.url, 9)  # a new process: a new consumer, which must reclaim
            projectors.append(heir)

            async def caught_up() -> bool:
                now = await versions(api, games)
                if any(s != "finished" for _, s in now.values()):
                    return False
                held = await consumers(r)
                if any(held.values()):
                    return False
                for game_id, (version, _) in now.items():
                    if (await api.get(f"/games/{game_id}/scores")).json()["version"] != version:
                        return False
                return True

            took = await wait_until(caught_up, 60, "every game over, nothing pending, every game's scores at its version")
            assert heir.proc.poll() is None
            stop.set()
        heir.stop()
        service.stop()  # nothing moves: the read models as the projectors left them, then rebuilt
        held = await consumers(r)
        assert set(dead) <= set(held) and not any(held.values()), held  # the dead consumer's entries were taken over
        incremental = await snapshot(r)
        assert any(b":proj:results:" in key for key in incremental), "no player's results were projected"
        store = RedisStore.from_url(server.url, namespace=NAMESPACE)
        try:
            started = time.monotonic()
            done = await rebuild(store)
            rebuilt_in = time.monotonic() - started
        finally:
            await store.close()
        assert done.games == len(games)
        assert await snapshot(r) == incremental
        print(f"\n[projector] killed holding {sum(dead.values())} entries (attempt {attempt + 1}); the heir caught up "
              f"{took:.1f} s later; {len(incremental)} read-model keys equal a rebuild of {done.events} events "
              f"({rebuilt_in:.2f} s)")  # fmt: skip
    finally:
        for p in projectors:
            p.stop()
        await r.aclose()


async def test_a_read_whose_answer_is_lost_is_read_again(tmp_path):
    """The connection breaks after Redis ran an ``XREADGROUP`` (a restart, a timeout): the entries it delivered
    are pending under the projector's name, and a ``>`` read never returns them again. The projector reads its own
    pending entries on its next pass, instead of leaving the game's last events unprojected until the entries are
    reclaimed (``min_idle_ms``, a minute by default)."""
    from service.store.embedded import EmbeddedStore
    from service.store.store import StoreUnavailable
    from service.projections import Projector as Consumer
    from service.projections import read_scores
    from tests.projections.helpers import Feeder, pending, play_one

    store = await EmbeddedStore(tmp_path / "data").open()
    try:
        game = play_one(3)
        await Feeder(store, [game]).append_all(game)
        projector = Consumer(store, "lost-answer")
        read = projector._read_groups

        async def answer_lost(starts):
            got = await read(starts)  # Redis delivered the entries...
            if ">" in starts.values():
                raise StoreUnavailable("Connection closed by server.")  # ...and the answer never arrived
            return got

        projector._read_groups = answer_lost
        with pytest.raises(StoreUnavailable):
            await projector.step()
        assert await pending(store) > 0 and (await read_scores(store, game.game_id))[1] == 0
        projector._read_groups = read
        await projector.step()
        assert (await read_scores(store, game.game_id))[1] == game.version
        assert await pending(store) == 0
    finally:
        await store.close()
