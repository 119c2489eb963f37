"""The partition logs are trimmed only past what every consumer group applied, and only once older than the
retention (service/store/logtrim.py): nothing a projector or a change feed still needs is let go."""

from __future__ import annotations

import asyncio

from service.store.embedded import EmbeddedStore
from service.store.keys import PARTITIONS
from service.store.logtrim import trim_logs
from service.projections import Projector, read_scores, rebuild
from service.projections import projector as projector_module
from service.projections.rebuild import all_games
from tests.api.helpers import wait_for
from tests.projections.helpers import Feeder, Played, assert_projected, snapshot


async def log_lengths(store) -> dict[int, int]:
    return {p: await store.r.xlen(store.keys.log(p)) for p in range(PARTITIONS)}


async def unread(store, group: str) -> dict[int, list[bytes]]:
    """The entries of each log after the last one delivered to ``group``."""
    out = {}
    for p in range(PARTITIONS):
        info = await store.r.xinfo_groups(store.keys.log(p))
        last = next(g["last-delivered-id"] for g in info if g["name"] in (group, group.encode()))
        last = last.decode() if isinstance(last, bytes) else last
        out[p] = [e for e, _ in await store.r.xrange(store.keys.log(p), f"({last}", "+")]
    return out


async def named(store) -> set[str]:
    """The games the partition logs still name."""
    out = set()
    for p in range(PARTITIONS):
        out |= {fields[b"game"].decode() for _, fields in await store.r.xrange(store.keys.log(p))}
    return out


async def test_entries_every_group_applied_are_trimmed_and_the_group_goes_on(store, few: list[Played]):
    games = few[:8]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_chunk(g, size=40)
    projector = Projector(store, "one")
    await projector.catch_up()
    before = await log_lengths(store)
    trimmed = await trim_logs(store, keep_ms=0)
    after = await log_lengths(store)
    assert trimmed == sum(before.values()) - sum(after.values()) > 0
    assert all(n <= 1 for n in after.values()), after  # the last entry delivered stays: the group's cursor
    for g in games:
        await feeder.append_all(g)
    stats = await projector.catch_up()
    assert stats.entries == feeder.appends - len(games)  # every append since, and nothing twice
    await assert_projected(store, games)


async def test_entries_not_yet_delivered_or_still_pending_are_kept(store, few: list[Played]):
    games = few[8:12]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_chunk(g, size=20)
    await Projector(store, "first").catch_up()
    for g in games:
        await feeder.append_chunk(g, size=20)
    undelivered = await unread(store, "projectors")
    # a consumer that reads some entries and dies before acknowledging them: those entries stay pending
    dead = {}
    for p in range(PARTITIONS):
        got = await store.r.xreadgroup("projectors", "dies", {store.keys.log(p): ">"}, count=3)
        dead[p] = [entry for entry, _ in got[0][1]] if got else []
    assert any(len(ids) > 1 for ids in dead.values())  # somewhere a pending entry lies before the last delivered
    await trim_logs(store, keep_ms=0)
    for p, ids in undelivered.items():
        assert set(ids) <= {e for e, _ in await store.r.xrange(store.keys.log(p))}, p
    projector = Projector(store, "second")
    await projector.catch_up()
    assert await projector.reclaim(min_idle_ms=0) > 0  # the dead consumer's entries were there to take over
    for g in games:
        assert (await read_scores(store, g.game_id))[1] == int((await store.meta(g.game_id))["version"])


async def test_the_retention_keeps_young_entries_and_a_log_no_group_reads_is_never_trimmed(store, few: list[Played]):
    games = few[12:16]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    unread = await log_lengths(store)
    assert await trim_logs(store, keep_ms=0) == 0  # no group has read any log: nothing has applied it
    await Projector(store, "p").catch_up()
    assert await trim_logs(store, keep_ms=3_600_000) == 0  # everything applied, but younger than an hour
    assert await log_lengths(store) == unread


async def test_a_group_behind_holds_the_log_for_itself(store, few: list[Played]):
    games = few[16:20]
    feeder = Feeder(store, games)
    for p in range(PARTITIONS):  # a second group, created before anything is appended, that never reads
        await store.r.xgroup_create(store.keys.log(p), "slow", id="0", mkstream=True)
    for g in games:
        await feeder.append_all(g)
    await Projector(store, "fast").catch_up()
    whole = await log_lengths(store)
    assert await trim_logs(store, keep_ms=0) == 0
    assert await log_lengths(store) == whole
    await Projector(store, "slow", group="slow").catch_up()
    assert await trim_logs(store, keep_ms=0) > 0


async def test_a_rebuild_after_the_logs_were_trimmed_finds_every_game(store, few: list[Played]):
    games = few[20:26]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    await Projector(store, "p").catch_up()
    built = await snapshot(store, games)
    await trim_logs(store, keep_ms=0)
    assert not await named(store) >= {g.game_id for g in games}  # some games are named by no log entry now
    found, _ = await all_games(store)
    assert sorted(found) == sorted(g.game_id for g in games)
    done = await rebuild(store)
    assert done.games == len(games)
    assert await snapshot(store, games) == built


async def test_a_running_projector_trims_the_logs_after_the_retention(store, few: list[Played], monkeypatch):
    monkeypatch.setattr(projector_module, "TRIM_EVERY_S", 0.0)
    games = few[26:28]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    projector = Projector(store, "runs", log_keep_ms=0)
    stop = asyncio.Event()
    task = asyncio.create_task(projector.run_forever(stop, poll_interval=0.01))

    async def trimmed() -> bool:
        return projector.stats.entries == feeder.appends and all(n <= 1 for n in (await log_lengths(store)).values())

    try:
        await wait_for(trimmed, seconds=60)
    finally:
        stop.set()
        await task
    assert projector.stats.trimmed > 0
    await assert_projected(store, games)


async def test_a_trim_of_the_embedded_store_survives_its_restart_and_appends_around_it(tmp_path, few: list[Played]):
    """The embedded store journals a trim: one kept in memory only brought back, at every start, the log entry of every
    append ever made (and put them all in the snapshot of a compaction at start)."""
    games = few[:6]
    store = await EmbeddedStore(tmp_path).open()
    feeder = Feeder(store, games)
    for _ in range(5):
        for g in games:
            await feeder.append_chunk(g, size=4)
    await Projector(store, "one").catch_up()
    assert await trim_logs(store, keep_ms=0) > 0
    for g in games[:3]:  # appends after the trim: the replay puts the trim among them where it fell
        await feeder.append_chunk(g, size=5)
    kept = await log_lengths(store)
    await store.close()

    again = await EmbeddedStore(tmp_path).open()
    try:
        assert await log_lengths(again) == kept
        projector = Projector(again, "one")  # its group was never journalled: made again where the log now starts
        await projector.catch_up()
        feeder.store = again
        for g in games:
            await feeder.append_all(g)
        await projector.catch_up()
        await assert_projected(again, games)
    finally:
        await again.close()
