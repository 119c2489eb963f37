"""Compaction of the embedded store on a service with real games (docs/operating.md, "Compaction"): after it and a
restart every game reads as before — events, scores, audit — the projectors' group resumes where it stood (nothing
applied again, nothing skipped), games play on at the right versions; the service compacts on its own once the journal
is ``--compact-ratio`` times its live size, and not before; /metrics shows the journal's size and live share; and
``python -m service compact`` does it by hand."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from service.__main__ import main
from service.store.journal import Journal
from service.store.oplog import decode_op
from service.store.embedded import EmbeddedStore
from tests.api.conftest import ADMIN_HEADERS, make_settings, served
from tests.api.helpers import wait_for

READS = ("/events?limit=5000", "/scores", "/audit")


async def bot_games(api, n: int, seats: int = 2) -> list[str]:
    games = []
    for _ in range(n):
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": seats}, headers=ADMIN_HEADERS)).json()["game_id"]
        for _ in range(seats):
            assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
        games.append(game_id)
    return games


async def settled(api, games: list[str]) -> bool:
    """Every game finished and projected to its end."""
    for game_id in games:
        meta = await api.app.ctx.store.meta(game_id)
        scores = (await api.get(f"/games/{game_id}/scores")).json()
        if meta["status"] != "finished" or scores["version"] != int(meta["version"]):
            return False
    return True


async def reads(api, games: list[str]) -> dict:
    return {(g, path): (await api.get(f"/games/{g}{path}", headers=ADMIN_HEADERS)).content for g in games for path in READS}


def first_op(data_dir) -> str:
    return decode_op(next(iter(Journal.records(data_dir / "journal.bin")))).op


async def test_a_service_restarted_after_a_compaction_reads_every_game_as_before_and_plays_on(tmp_path):
    settings = make_settings("embedded", tmp_path, archive_after_ms=1, runner_interval_ms=50, compact_ratio=0)
    async with served(settings) as api:
        games = await bot_games(api, 4)
        await wait_for(lambda: settled(api, games), seconds=60)
        archived = await wait_for(lambda: _archived(api, games), seconds=30)
        store = api.app.ctx.store
        done = await store.compaction.run()  # everything settled: the groups stand still from here
        assert done.after < done.before
        groups = await cursors(store, games)
        before = await reads(api, games)
        live = await bot_games(api, 1, seats=3)  # playing after the compaction (its tail) and through the restart
    assert first_op(settings.data_dir) == "snapshot_begin"

    again = await EmbeddedStore(settings.data_dir).open()  # as it loads: the projectors' group where it stood
    assert await cursors(again, games) == groups
    await again.close()
    async with served(settings) as api:
        projector = api.app.ctx.projector
        await wait_for(lambda: settled(api, live), seconds=60)
        assert await reads(api, games) == before
        assert projector.stats.errors == 0 and projector.stats.conflicts == 0
        assert archived == games  # read from the archive, through the metadata the snapshot kept
        more = await bot_games(api, 1)  # new games after it, at their versions
        await wait_for(lambda: settled(api, more), seconds=60)


async def cursors(store, games: list[str]) -> dict:
    """Where the projectors' group stands in each of the games' partition logs (its lag aside: the game playing on
    after the compaction adds to a log it may share)."""
    partitions = {store._partition(g) for g in games}
    return {p: [{k: v for k, v in g.items() if k not in ("lag", "entries-read")}
                for g in await store.r.xinfo_groups(store.keys.log(p))] for p in partitions}  # fmt: skip


async def _archived(api, games: list[str]) -> list[str]:
    metas = [await api.app.ctx.store.meta(g) for g in games]
    done = [g for g, m in zip(games, metas, strict=True) if m.get("archived") == "1"]
    return done if len(done) == len(games) else []


async def test_the_service_compacts_on_its_own_once_the_journal_is_ratio_times_its_live_size(tmp_path):
    settings = make_settings("embedded", tmp_path, archive_after_ms=1, runner_interval_ms=50, compact_ratio=0)
    async with served(settings) as api:
        compaction = api.app.ctx.store.compaction
        await wait_for(lambda: _measured(compaction, 1), seconds=10)  # measured once at start (0: never compacts)
        games = await bot_games(api, 3)
        await wait_for(lambda: settled(api, games), seconds=60)
        await wait_for(lambda: _archived(api, games), seconds=30)
        api.app.ctx.stop.set()  # the service's own tasks stop: the journal stands still
        await wait_for(lambda: _stopped(api), seconds=10)
        assert await compaction.run(due=lambda journal, live: False) is None  # measured, not compacted
        journal, live = compaction.journal_bytes(), compaction.live
        metrics = (await api.get("/metrics")).text
        assert int(float(re.search(r"^free_parking_journal_bytes (\S+)$", metrics, re.M).group(1))) == journal
        share = float(re.search(r"^free_parking_journal_live_share (\S+)$", metrics, re.M).group(1))
        assert share == pytest.approx(live / journal) and share < 1
        for ratio, runs in ((journal / live * 1.05, 0), (journal / live * 0.95, 1)):  # not passed, then passed
            api.app.ctx.stop.clear()
            measured = compaction.measures
            watch = asyncio.create_task(compaction.watch(api.app.ctx.stop, ratio, 0, every=0.05))
            await wait_for(lambda: _measured(compaction, measured + 1), seconds=10)
            api.app.ctx.stop.set()
            await watch
            assert compaction.runs == runs
        assert compaction.last.before == journal and compaction.journal_bytes() == compaction.last.after < journal
    assert first_op(settings.data_dir) == "snapshot_begin"


async def _measured(compaction, times: int) -> bool:
    return compaction.measures >= times


async def _stopped(api) -> bool:
    return all(t.done() for t in api.app.ctx.tasks)


async def test_compact_by_hand_rewrites_the_journal_and_says_by_how_much(tmp_path, capsys, monkeypatch):
    for name in [k for k in os.environ if k == "REDIS_URL" or k.startswith("FREE_PARKING_")]:
        monkeypatch.delenv(name)
    settings = make_settings("embedded", tmp_path, archive_after_ms=1, runner_interval_ms=50, compact_ratio=0)
    async with served(settings) as api:
        games = await bot_games(api, 2)
        await wait_for(lambda: settled(api, games), seconds=60)
        await wait_for(lambda: _archived(api, games), seconds=30)
        before = await reads(api, games)
    size = (settings.data_dir / "journal.bin").stat().st_size
    assert await asyncio.to_thread(main, ["compact", "--data", str(settings.data_dir)]) == 0  # a loop of its own
    said = capsys.readouterr().out
    assert re.search(r"journal\.bin: .+ → .+ \(\d+ keys", said), said
    assert (settings.data_dir / "journal.bin").stat().st_size < size and first_op(settings.data_dir) == "snapshot_begin"
    async with served(settings) as api:
        assert await reads(api, games) == before


@pytest.mark.parametrize("value", ["-1", "abc", "1", "inf"])
def test_a_bad_ratio_is_refused_in_one_line(value, capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--compact-ratio", value])
    assert "invalid ratio (0, or more than 1) value" in capsys.readouterr().err


async def test_the_live_share_is_measured_again_as_the_journal_doubles_below_the_compaction_floor(tmp_path):
    """Measured once at start (an empty store), the live share fell with every write and said a journal of live games
    was nearly all waste, for as long as it stayed under --compact-min-bytes: it is measured again at each doubling."""
    settings = make_settings("embedded", tmp_path, compact_ratio=4, compact_min_bytes=2**40)
    async with served(settings) as api:
        compaction = api.app.ctx.store.compaction
        await wait_for(lambda: _measured(compaction, 1), seconds=10)
        games: list[str] = []
        while compaction.journal_bytes() < 2 * 64 * 1024:  # doubled past the floor of re-measures (REMEASURE_FROM):
            games += await bot_games(api, 1)  # games are of any length, so as many as it takes
            await wait_for(lambda: settled(api, games), seconds=60)
        await wait_for(lambda: _measured(compaction, 2), seconds=10)
        assert compaction.runs == 0  # measured, never compacted: under the floor
        share = float(re.search(r"^free_parking_journal_live_share (\S+)$", (await api.get("/metrics")).text,
                                re.M).group(1))  # fmt: skip
        assert share > 0.5  # games still live: most of the journal is what the store holds
