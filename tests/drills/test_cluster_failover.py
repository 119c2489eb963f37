"""The failover drill on a Redis Cluster with a replica per primary (``tests/cluster.py``, ``replicas=1``): one primary
``SIGKILL``ed and its replica made primary (``CLUSTER FAILOVER TAKEOVER``); the service follows it by the cluster
client's own slot refresh. As under Sentinel (``test_failover.py``): under load with ``replicated``, nothing
acknowledged is lost (``make soak``); with the replica held back (stopped, its link cut), ``durable`` loses exactly
the events of the games on that primary acknowledged meanwhile, and ``replicated`` answers them 503 and keeps them once
resent.
"""

from __future__ import annotations

import asyncio
import random
import time

import httpx
import pytest
import redis

from service.store.keys import Keys
from tests.cluster import Cluster, need_cluster_tools
from tests.depth import SOAK
from tests.drills.support import (
    NAMESPACE, Ledger, background, check_ledger, guest_games, play, read_logs, resend_unknown, under_load, versions,
    wait_until,
)  # fmt: skip
from tests.drills.test_failover import WAIT_MS, held_back_verdict, synced
from tests.replicas import CLUSTER_ARGS, ClusterFailover


@pytest.fixture
def cluster(tmp_path):
    need_cluster_tools()
    started = Cluster(tmp_path / "cluster", replicas=1, args=CLUSTER_ARGS).start()
    yield started
    started.stop()


def primary_of(cluster: Cluster, game_id: str) -> int:
    """The port of the primary holding ``game_id``'s keys now."""
    with redis.RedisCluster(host="127.0.0.1", port=cluster.ports[0]) as c:
        return c.get_node_from_key(Keys(NAMESPACE).stream(game_id)).port


def live_url(failover: ClusterFailover) -> str:
    return f"redis://127.0.0.1:{failover.live()[0]}/0"


@pytest.mark.parametrize("durability", ["durable", "replicated"])
async def test_a_cluster_replica_held_back_loses_what_its_primary_acknowledged_unless_replicated(
    durability, cluster, services,
):  # fmt: skip
    service = services(cluster, cluster="yes", durability=durability, replica_wait_ms=WAIT_MS, runner=False)
    ledger, stop = Ledger(), asyncio.Event()
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as api:
        games = await guest_games(api, 4, seats=2)
        failover = ClusterFailover(cluster, primary_of(cluster, games[0][0]))
        on_it = [(g, t) for g, t in games if primary_of(cluster, g) == failover.primary]
        for i, (g, tokens) in enumerate(games):
            await play(api, g, tokens, ledger, random.Random(i), stop, tag=f"before-{i}", count=3)
        await wait_until(synced(failover.caught_up), 20, "the replica caught up")
        before = {g: set(ledger.acked[g]) for g, _ in games}
        failover.hold_replica()
        for i, (g, tokens) in enumerate(on_it):
            await play(api, g, tokens, ledger, random.Random(10 + i), stop, tag=f"held-{i}",
                       count=3 if durability == "durable" else 1, patience=0.6)  # fmt: skip
        failover.fail_over()
        if durability == "replicated":
            assert len(ledger.unknown) == len(on_it) and ledger.statuses["503 not_replicated"] > 0, ledger.statuses
            failover.reattach_old_primary()
            answers = await resend_unknown(api, ledger)
            assert all(r is not None and r.status_code == 200 for r in answers), ledger.statuses
        else:
            assert not ledger.unknown, ledger.statuses
    service.stop()
    logs = await read_logs(live_url(failover), [g for g, _ in games], cluster=True)
    held_back_verdict(durability, ledger, logs, before, f"Cluster, {len(on_it)} of {len(games)} games on the primary killed")


@pytest.mark.skipif(not SOAK, reason="make soak (FREE_PARKING_SOAK=1): the held-back cases above show the cluster's "
                    "failover in make test; this one adds the load of racing clients and bots, for ten more seconds")
async def test_a_cluster_failover_under_load_loses_nothing_acknowledged_with_replicated(cluster, services):
    service = services(cluster, cluster="yes", durability="replicated", replica_wait_ms=WAIT_MS, bot_delay_ms=20)
    ledger, stop = Ledger(), asyncio.Event()
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as api, background(stop) as start:
        bots, humans, tasks = await under_load(api, start, ledger, stop, bots=6, humans=2, tag="cfo")
        await wait_until(lambda: _acked(ledger, tasks, 150), 30, "150 events acknowledged")
        failover = ClusterFailover(cluster, primary_of(cluster, bots[0]))
        playing = {g: v for g, (v, s) in (await versions(api, bots)).items() if s == "playing"}
        at_kill, killed = ledger.events_acked, time.monotonic()
        failover.fail_over()
        failover.reattach_old_primary()

        async def resumed() -> bool:
            now = await versions(api, list(playing))
            return all(s == "finished" or v >= playing[g] + 20 for g, (v, s) in now.items())

        await wait_until(resumed, 40, "every bot game 20 events further after the failover")
        took = time.monotonic() - killed
        stop.set()
        await asyncio.gather(*tasks)
    service.stop()
    logs = await read_logs(live_url(failover), bots + [g for g, _ in humans], cluster=True)
    counts = check_ledger(ledger, logs)
    lost = sum(len(ledger.lost(g, log.envelopes)) for g, log in logs.items())
    print(f"\n[cluster failover, replicated] killed with {at_kill} events acknowledged; lost {lost}; every bot game "
          f"moved on within {took:.1f} s of the kill; commands {counts}; answers {dict(ledger.statuses)}")  # fmt: skip
    assert lost == 0


async def _acked(ledger: Ledger, tasks: list[asyncio.Task], events: int) -> bool:
    failed = [t.exception() for t in tasks if t.done() and t.exception() is not None]
    assert not failed, failed
    return ledger.events_acked >= events
