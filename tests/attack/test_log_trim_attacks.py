"""Attacks on the partition logs' trimming (service/store/logtrim.py) and the projector lag that /metrics and
/readyz report from them (service/store/gauges.py). The hole an outside review found: after a rebuild on a live
service Redis 7 cannot say the group's lag (its cursor is an id inside the log), and the gauge counted the whole log
— every worker could read as not ready at once. It now counts the entries after the cursor."""

from __future__ import annotations

import importlib

import pytest

from service.store.gauges import projector_lag
from service.store.keys import PARTITIONS, partition
from service.store.logtrim import trim_logs
from service.projections import Projector, rebuild
from tests.projections.helpers import Feeder, Played, shared_games

rebuild_module = importlib.import_module("service.projections.rebuild")  # the module: the package exports the function


@pytest.fixture(scope="session")
def played() -> list[Played]:
    return shared_games(28)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def true_lag(store, group: str = "projectors") -> dict[int, int]:
    """What the group has not applied, counted entry by entry: the entries after its last delivered one, and those
    delivered and not acknowledged."""
    out = {}
    for p in range(PARTITIONS):
        info = next(g for g in await store.r.xinfo_groups(store.keys.log(p)) if _text(g["name"]) == group)
        unread = await store.r.xrange(store.keys.log(p), f"({_text(info['last-delivered-id'])}", "+")
        out[p] = len(unread) + int(info["pending"])
    return out


@pytest.mark.parametrize("store", ["embedded", "redis"], indirect=True)
async def test_the_lag_after_a_rebuild_on_a_live_service_counts_only_what_the_group_has_not_applied(store, played, monkeypatch):
    games = played[:6]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_chunk(g, size=30)
    await Projector(store, "before").catch_up()
    await trim_logs(store, keep_ms=0)  # as the running projectors do once the retention passed
    for g in games:
        await feeder.append_chunk(g, size=10)
    late = next(g for g in games if feeder.remaining(g))
    scan = rebuild_module.all_games

    async def scan_then_an_append(s):
        found = await scan(s)
        assert await feeder.append_chunk(late, size=1)  # a worker's append while the rebuild replays
        return found

    monkeypatch.setattr(rebuild_module, "all_games", scan_then_an_append)
    await rebuild(store)
    expected = await true_lag(store)
    assert expected[partition(late.game_id)] == 1
    assert await projector_lag(store) == expected
