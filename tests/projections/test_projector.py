"""The projector on both stores: read models equal the truth, writes compare and set, consumers share and take over."""

from __future__ import annotations

import asyncio

import pytest

from service.store.embedded import EmbeddedStore
from service.store.store import ProjectionCorrupt, Projected
from service.projections import Projector, project_game, read_audit, read_results, read_scores, rebuild, results
from service.projections.projector import project_games
from service.projections import scores as scores_model
from service.projections.rebuild import drop_groups
from service.rules.engine import Game, audit_lines
from tests.projections.helpers import (
    KIND,
    RULES,
    Feeder,
    Played,
    assert_projected,
    assert_scores_match,
    expected_results,
    pending,
    snapshot,
)


async def test_scores_audit_and_results_equal_the_truth(store, few: list[Played]):
    feeder = Feeder(store, few)
    for g in few:
        await feeder.append_all(g)
    stats = await Projector(store, "one").catch_up()
    assert stats.events == sum(g.version for g in few)
    assert stats.errors == stats.conflicts == 0
    await assert_projected(store, few)
    assert await pending(store) == 0
    assert expected_results(few), "no registered player finished a game: results untested"


async def test_audit_lines_are_audit_lines_of_the_stored_log(store, few: list[Played]):
    feeder = Feeder(store, few[:6])
    for g in few[:6]:
        await feeder.append_all(g)
    await Projector(store, "one").catch_up()
    for g in few[:6]:
        log = await store.read(g.game_id)
        lines, version = await read_audit(store, g.game_id)
        assert lines == audit_lines(RULES, log) and version == len(log)
        assert (await read_audit(store, g.game_id, after=10, limit=5))[0] == lines[10:15]
        assert (await read_audit(store, g.game_id, after=version))[0] == []
        assert (await read_audit(store, g.game_id, limit=0)) == ([], version)
    assert await read_audit(store, "no-such-game") == ([], 0)
    assert await read_scores(store, "no-such-game") == (None, 0)
    assert await read_results(store, "no-such-player") == (None, {})


async def test_a_projection_lags_and_says_which_version_it_reflects(store, few: list[Played]):
    g = few[3]
    feeder = Feeder(store, [g])
    for _ in range(4):
        await feeder.append_chunk(g, size=20)
    projector = Projector(store, "one")
    await projector.catch_up()
    model, version = await read_scores(store, g.game_id)
    appended = (await store.meta(g.game_id))["version"]
    assert version == model.version == int(appended) < g.version
    reference = Game.new(KIND, g.game_id, g.state.config, g.state.seed)
    reference.fold(g.envelopes[:version])
    assert_scores_match(model, version, Played(g.game_id, [], reference.state))
    await feeder.append_chunk(g, size=20)
    assert (await read_scores(store, g.game_id))[1] == version  # lagging until the projector runs
    await projector.catch_up()
    assert (await read_scores(store, g.game_id))[1] > version
    await feeder.append_all(g)
    await projector.catch_up()
    await assert_projected(store, [g])


class SaysWhenWaitedOn(asyncio.Lock):
    """The projector's lock, telling when a caller has to wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = asyncio.Event()

    async def acquire(self) -> bool:
        if self.locked():
            self.waited.set()
        return await super().acquire()


async def test_catch_up_beside_a_running_projector_waits_for_the_pass_in_flight(store, few: list[Played]):
    """The service runs ``run_forever``; a ``catch_up`` on the same projector must not return while the running pass
    holds entries it has read and not yet applied (a new read would not show them to ``catch_up``)."""
    g = few[2]
    await Feeder(store, [g]).append_all(g)
    projector = Projector(store, "one")
    projector._turn = turn = SaysWhenWaitedOn()
    holding, gate = asyncio.Event(), asyncio.Event()
    process = projector._process

    async def held_back(batch):
        if batch:
            holding.set()
            await gate.wait()
        return await process(batch)

    projector._process = held_back
    stop = asyncio.Event()
    running = asyncio.create_task(projector.run_forever(stop, poll_interval=0.01))
    await holding.wait()  # the running pass has read the game's entries
    catching = asyncio.create_task(projector.catch_up())
    waited = asyncio.create_task(turn.waited.wait())
    done, _ = await asyncio.wait({catching, waited}, return_when=asyncio.FIRST_COMPLETED)
    assert catching not in done, "catch_up returned while the running pass held entries it had not applied"
    gate.set()
    await catching
    assert (await read_scores(store, g.game_id))[1] == g.version
    stop.set()
    await running


async def test_results_are_idempotent_when_the_same_entries_are_applied_twice(store, few: list[Played]):
    games = few[:14]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    await Projector(store, "one").catch_up()
    before = await snapshot(store, games)
    await assert_projected(store, games)

    # the results of every game upserted again (a retry after a crash between the two writes): nothing new
    for g in games:
        model, _ = await read_scores(store, g.game_id)
        assert await results.record(store, model) == 0
    # every log entry delivered again, to a new group: each range is already applied, so only acknowledged
    again = Projector(store, "two", group="second")
    stats = await again.catch_up()
    assert stats.entries == feeder.appends and stats.applies == 0 and stats.skipped == feeder.appends
    # the games' own read models lost (their checkpoints with them) and replayed: the players' results stay as they were
    for g in games:
        keys = store.keys
        await store.r.delete(keys.game_projection("scores", g.game_id), keys.game_projection("audit", g.game_id))
        await project_game(store, g.game_id)
    assert await snapshot(store, games) == before


async def test_project_game_is_a_compare_and_set(store, few: list[Played]):
    g = few[0]
    feeder = Feeder(store, [g])
    await feeder.append_all(g)
    envs = await store.read(g.game_id, count=10)
    first = scores_model.fold(None, envs)
    lines = audit_lines(RULES, envs)
    assert await store.project_game(g.game_id, 0, 10, scores_model.encode(first), lines) == Projected(True, 10)
    # the same write again, or one from a stale checkpoint, is refused and writes nothing
    assert await store.project_game(g.game_id, 0, 10, scores_model.encode(first), lines) == Projected(False, 10)
    assert await store.project_game(g.game_id, 5, 12, b"{}", ["x", "y"]) == Projected(False, 10)
    assert await read_audit(store, g.game_id) == (lines, 10)
    assert (await read_scores(store, g.game_id))[0] == first
    # an audit list that does not match the checkpoint is refused loudly, before anything is written
    await store.r.rpush(store.keys.game_projection("audit", g.game_id), "stray line")
    with pytest.raises(ProjectionCorrupt):
        await store.project_game(g.game_id, 10, 11, b"{}", ["z"])
    assert (await read_scores(store, g.game_id))[1] == 10


async def test_project_result_is_an_idempotent_upsert(store):
    entry = b'{"game_id":"g1"}'
    counters = {f"played:{KIND}": 1, f"won:{KIND}": 1, f"points:{KIND}": 210}
    assert await store.project_result("p1", "g1", 50, entry, counters) == Projected(True, 50)
    assert await store.project_result("p1", "g1", 50, entry, counters) == Projected(False, 50)
    older = {f"played:{KIND}": 1, f"points:{KIND}": 5}
    assert await store.project_result("p1", "g1", 40, entry, older) == Projected(False, 50)
    raw = await store.r.hgetall(store.keys.projection("results", "p1"))
    assert int(raw[f"points:{KIND}".encode()]) == 210 and int(raw[f"played:{KIND}".encode()]) == 1
    # a newer version of the same game replaces the old one: its counters are taken back first
    newer = {f"played:{KIND}": 1, f"won:{KIND}": 0, f"points:{KIND}": 180}
    assert await store.project_result("p1", "g1", 60, entry, newer) == Projected(True, 60)
    other = {f"played:{KIND}": 1, f"won:{KIND}": 0, f"points:{KIND}": 20}
    await store.project_result("p1", "g2", 30, b'{"game_id":"g2"}', other)
    raw = await store.r.hgetall(store.keys.projection("results", "p1"))
    assert {k: int(raw[k.encode()]) for k in counters} == {f"played:{KIND}": 2, f"won:{KIND}": 0, f"points:{KIND}": 200}


async def test_two_projectors_in_one_group_end_as_one_would(store, few: list[Played]):
    a, b = Projector(store, "a", count=2), Projector(store, "b", count=2)  # small reads, so both get a share

    async def both() -> None:
        await asyncio.gather(a.catch_up(), b.catch_up())

    await Feeder(store, few).interleaved(active=10, every=15, between=both)
    assert a.stats.entries > 0 and b.stats.entries > 0, "one projector did all the work"
    assert a.stats.errors == b.stats.errors == 0
    assert await pending(store) == 0
    together = await snapshot(store, few)
    await rebuild(store)  # one projector's worth: every game replayed once, in order
    assert await snapshot(store, few) == together
    await assert_projected(store, few)


async def test_projectors_of_two_groups_contend_for_every_game(store, few: list[Played]):
    """Both see every entry and race to apply every game: the compare-and-set lets one write through each time."""
    games = few[:14]
    a, b = Projector(store, "a", group="left"), Projector(store, "b", group="right")
    stop = asyncio.Event()
    runners = [asyncio.create_task(p.run_forever(stop, poll_interval=0.005)) for p in (a, b)]
    feeder = Feeder(store, games)
    await feeder.interleaved(active=7, every=5, between=lambda: asyncio.sleep(0.002))
    await asyncio.gather(a.catch_up(), b.catch_up())
    stop.set()
    await asyncio.gather(*runners)
    assert a.stats.entries == b.stats.entries == feeder.appends
    assert a.stats.events + b.stats.events == sum(g.version for g in games)  # every event applied exactly once
    assert a.stats.errors == b.stats.errors == 0
    await assert_projected(store, games)


@pytest.mark.parametrize("batched", [False, True])
async def test_read_models_dropped_between_a_result_and_its_checkpoint_are_written_again(store, few, batched, monkeypatch):
    """A rebuild drops every read model at a moment of its own: here, after a projector wrote a finished game's
    results (outside the game's slot) and before it moved the game's checkpoint from 0, which the drop leaves at 0
    too, so the compare-and-set takes. The results must not be lost with a checkpoint already past them."""
    feeder = Feeder(store, few)
    for g in few:
        await feeder.append_all(g)
    real = type(store).project_game

    async def dropped_first(self, game_id, expected, *args):
        await self.drop_projections()
        return await real(self, game_id, expected, *args)

    monkeypatch.setattr(type(store), "project_game", dropped_first)
    for g in few:  # each game alone: every drop comes between its own two writes
        if batched:
            await project_games(store, {g.game_id: None}, max_events=100_000)
        else:
            await project_game(store, g.game_id, max_events=100_000)
    monkeypatch.setattr(type(store), "project_game", real)
    last = few[-1]
    scores, version = await read_scores(store, last.game_id)
    assert_scores_match(scores, version, last)
    players = {s.player.player_id for s in last.state.seats if s.player is not None and s.player.player_id}
    for pid, want in expected_results([last]).items():
        got, _ = await read_results(store, pid)
        assert got is not None and last.game_id in got.games, f"{pid}: the result of {last.game_id} was lost"
    assert players, "the last game has no registered player: nothing checked"


async def test_projectors_running_while_games_are_played(store, few: list[Played]):
    """Three projectors run in the background while games are played; midway the groups are destroyed (as a rebuild
    does) and, later, everything is rebuilt under their feet: they recover, and end where the truth is."""
    games = few[:14]
    stop = asyncio.Event()
    projectors = [Projector(store, f"worker-{i}", count=7) for i in range(3)]
    runners = [asyncio.create_task(p.run_forever(stop, poll_interval=0.005)) for p in projectors]
    feeder = Feeder(store, games)
    calls = 0

    async def meanwhile() -> None:
        nonlocal calls
        calls += 1
        if calls == 30:
            await drop_groups(store)
        elif calls == 60:
            await rebuild(store)
        await asyncio.sleep(0)

    await feeder.interleaved(active=7, every=3, between=meanwhile)
    assert calls > 60
    await asyncio.gather(*(p.catch_up() for p in projectors))
    stop.set()
    await asyncio.gather(*runners)
    assert await pending(store) == 0
    await assert_projected(store, games)


async def test_a_killed_projector_is_taken_over_and_ends_as_a_rebuild(store, few: list[Played]):
    games = few[:14]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_chunk(g, size=40)
    await Projector(store, "early").catch_up()
    for g in games:
        await feeder.append_all(g)

    # "cancelled" was stopped in the middle of its work (between a read and its acknowledgement, or inside an apply)
    cancelled = Projector(store, "cancelled", count=5)
    task = asyncio.create_task(cancelled.catch_up(reclaim=False))
    while cancelled.stats.applies < 2:
        assert not task.done()
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # "dead" read a batch of every partition and never acknowledged it, having half-applied a few games
    dead = Projector(store, "dead", count=4)
    taken = [entry for p in dead.partitions for entry in await dead._read_group(p, ">")]
    assert taken
    for g in games[:4]:
        applied = (await read_scores(store, g.game_id))[1]
        await project_game(store, g.game_id, applied + 30, max_events=10)
    assert await pending(store) >= len(taken)

    patient = Projector(store, "patient")  # the default idle time: it does not take live consumers' entries
    assert await patient.reclaim() == 0
    heir = Projector(store, "heir", min_idle_ms=0)
    stats = await heir.catch_up()
    assert stats.reclaimed >= len(taken)
    assert await pending(store) == 0
    incremental = await snapshot(store, games)
    await rebuild(store)
    assert await snapshot(store, games) == incremental
    await assert_projected(store, games)


async def test_the_embedded_projections_survive_a_restart(tmp_path, few: list[Played]):
    games = few[:7]
    store = await EmbeddedStore(tmp_path / "data").open()
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    await Projector(store, "one").catch_up()
    before = await snapshot(store, games)
    await store.close()

    store = await EmbeddedStore(tmp_path / "data").open()
    try:
        assert await snapshot(store, games) == before
        # the consumer group was not journalled: it is made again, and every entry is found already applied
        stats = await Projector(store, "one").catch_up()
        assert stats.applies == 0 and stats.entries == stats.skipped == feeder.appends
        assert await snapshot(store, games) == before
    finally:
        await store.close()


async def test_a_game_that_fails_to_project_does_not_stop_the_others(store, few: list[Played]):
    games = few[:3]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    bad = games[1]
    await store.r.rpush(store.keys.game_projection("audit", bad.game_id), "a line no projector wrote")
    projector = Projector(store, "one")
    with pytest.raises(Exception, match="failed"):
        await projector.catch_up()
    await assert_projected(store, [games[0], games[2]])
    assert await pending(store) > 0  # the bad game's entries wait to be retried
    await store.r.delete(store.keys.game_projection("audit", bad.game_id))
    await projector.catch_up()
    assert await pending(store) == 0
    await assert_projected(store, games)
    assert projector.stats.entries == feeder.appends


def test_each_projection_script_touches_one_slot():
    """Redis Cluster runs a script only when all its keys are in one slot (fakeredis would not complain)."""
    from redis.crc import key_slot

    from service.store.keys import Keys

    keys = Keys("fp")
    for game_id in ("g1", "a-much-longer-game-id-0042", "proj-8-0299"):
        pair = [keys.game_projection("scores", game_id), keys.game_projection("audit", game_id)]
        assert len({key_slot(k.encode()) for k in pair}) == 1
        assert key_slot(pair[0].encode()) == key_slot(keys.stream(game_id).encode())  # the game's own slot
