"""Rebuild: the read models replayed from nothing equal the ones the projector built as the games were played."""

from __future__ import annotations

import argparse
import asyncio
import time

import pytest

from service.cli import projections as cli
from service.store.embedded import EmbeddedStore
from service.store.keys import PARTITIONS, partition
from service.projections import Projector, project_game, read_results, read_scores, rebuild, registered
from service.projections.projector import Stats
from service.projections.rebuild import all_games, read_all
from tests.projections.helpers import Feeder, Played, assert_projected, pending, shared_games, snapshot
from tests.depth import count
from tests.stores import drop_namespace, namespace, need_redis

# Games in the rebuild test (tests/depth.py): in make test, enough that every partition and every seat count comes
# up on each store, a dozen in progress at once (a few dozen suffice: 64 games fill all 16 partitions); make soak
# plays hundreds. FREE_PARKING_PROJECTION_GAMES sets them all.
REBUILD_GAMES = {"redis": (96, 1000), "embedded": (80, 500), "cluster": (64, 200)}


async def test_rebuild_equals_the_incrementally_built_projections(store):
    """THE test: a few hundred games of 2–8 seats appended chunk by chunk, a dozen in progress at once, a projector
    catching up every few appends; then everything dropped and rebuilt from the streams — and compared."""
    kind = "cluster" if store.cluster else store.name
    many = shared_games(count("FREE_PARKING_PROJECTION_GAMES", *REBUILD_GAMES[kind]))
    assert {partition(g.game_id) for g in many} == set(range(PARTITIONS)), "a game in every partition"
    projector = Projector(store, "incremental")
    catch_ups = 0

    async def catch_up() -> None:
        nonlocal catch_ups
        catch_ups += 1
        await projector.catch_up()

    started = time.perf_counter()
    feeder = Feeder(store, many)
    await feeder.interleaved(active=12, every=40, between=catch_up)
    fed = time.perf_counter() - started
    assert await pending(store) == 0
    incremental = await snapshot(store, many)
    events = sum(g.version for g in many)
    assert projector.stats.events == events and projector.stats.errors == 0

    games, _ = await all_games(store)
    assert sorted(games) == sorted(g.game_id for g in many)
    raw_events, raw_seconds = await read_all(store, games)
    done = await rebuild(store)
    assert (done.games, done.events) == (len(many), events) == (len(many), raw_events)
    assert done.dropped_keys >= 2 * len(many)
    rebuilt = await snapshot(store, many)
    assert rebuilt == incremental
    await assert_projected(store, many)
    print(
        f"\n[{store.name}] {len(many)} games, {events} events in {feeder.appends} appends, {catch_ups} catch-ups: "
        f"fed and projected in {fed:.1f} s; rebuild {done.seconds:.2f} s = {done.events_per_second:,.0f} events/s; "
        f"raw XRANGE + decode {raw_seconds:.2f} s = {raw_events / raw_seconds:,.0f} events/s"
    )


async def test_after_a_rebuild_the_group_resumes_where_the_replay_stopped(store, few: list[Played]):
    feeder = Feeder(store, few[:10])
    for g in few[:10]:
        await feeder.append_chunk(g, size=30)
    await Projector(store, "before").catch_up()
    await rebuild(store)
    assert await pending(store) == 0
    before = feeder.appends
    replayed = sum([(await read_scores(store, g.game_id))[1] for g in few[:10]])
    for g in few[:10]:
        await feeder.append_all(g)
    stats = await Projector(store, "after").catch_up()
    assert stats.entries == feeder.appends - before  # only what was appended since the replay
    assert stats.events == sum(g.version for g in few[:10]) - replayed
    await assert_projected(store, few[:10])


async def test_rebuild_finds_games_whose_log_entries_are_gone(store, few: list[Played]):
    games = few[:6]
    feeder = Feeder(store, games)
    for g in games:
        await feeder.append_all(g)
    for p in range(PARTITIONS):  # as if the logs had been trimmed
        await store.r.delete(store.keys.log(p))
    done = await rebuild(store)
    assert done.games == len(games)
    await assert_projected(store, games)


async def test_racing_applies_of_one_game_write_each_event_once(store, few: list[Played]):
    g = few[5]
    await Feeder(store, [g]).append_all(g)
    stats = Stats()
    await asyncio.gather(*(project_game(store, g.game_id, max_events=50, stats=stats) for _ in range(4)))
    assert stats.events == g.version
    assert stats.conflicts > 0  # they did race: the compare-and-set turned the losers away
    await assert_projected(store, [g])


async def test_a_game_projected_while_the_rebuild_drops_keeps_its_results(store, few: list[Played], monkeypatch):
    """A projector brings a game from nothing to its end while ``drop_projections`` runs: after the drop listed the
    keys (the game had no read model yet) and before it deleted the player's results (which then held the game's
    result). The rebuild must still end with that result, counted once.

    The interleaving is driven, not timed: the drop's delete of the player's results key first lets the projector
    apply the whole game. On the embedded store the drop is one write under the store's lock, so the projector's
    writes wait for it to end (the same steps, in the only order that store allows)."""
    first, late, player = _two_games_of_one_player(few)
    feeder = Feeder(store, [first, late])
    await feeder.append_all(first)
    await Projector(store, "early").catch_up()  # the player's results key exists: the drop lists it and deletes it
    await feeder.append_all(late)  # appended, never projected: no read model of it for the drop to list
    results_key = store.keys.projection("results", player)
    real_delete = store.r.delete
    meanwhile: list[asyncio.Task] = []

    async def delete(*keys):
        if not meanwhile and results_key in [k.decode() if isinstance(k, bytes) else k for k in keys]:
            meanwhile.append(asyncio.create_task(project_game(store, late.game_id)))
            if store.name != "embedded":  # nothing holds a projector back while the drop runs on Redis
                await meanwhile[0]
                assert (await read_results(store, player))[0].games.keys() == {first.game_id, late.game_id}
        return await real_delete(*keys)

    monkeypatch.setattr(store.r, "delete", delete)
    await rebuild(store)
    monkeypatch.undo()
    assert meanwhile, "the drop never deleted the player's results: nothing was interleaved"
    await meanwhile[0]
    await assert_projected(store, [first, late])
    assert await snapshot(store, [first, late]) == await _rebuilt_alone(store, [first, late])


def _two_games_of_one_player(games: list[Played]) -> tuple[Played, Played, str]:
    """Two finished games with a registered player in common, and that player."""
    seated = {}
    for g in games:
        if g.state.winner is None:
            continue
        for pid in sorted({s.player.player_id for s in g.state.seats if registered(s.player)}):
            if pid in seated:
                return seated[pid], g, pid
            seated[pid] = g
    raise AssertionError("no registered player finished two games")


async def _rebuilt_alone(store, games: list[Played]) -> dict:
    """What a rebuild with nothing running beside it makes of the same streams."""
    await rebuild(store)
    return await snapshot(store, games)


def _args(parser: argparse.ArgumentParser, *argv: str) -> argparse.Namespace:
    return parser.parse_args(list(argv))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m service")
    sub = p.add_subparsers(dest="command")
    cli.add_rebuild_parser(sub)
    cli.add_project_parser(sub)
    return p


def test_the_cli_rebuilds_and_projects_the_embedded_store(tmp_path, few: list[Played], monkeypatch, capsys):
    monkeypatch.delenv("REDIS_URL", raising=False)
    games = few[:5]
    data = tmp_path / "data"

    async def fill() -> None:
        store = await EmbeddedStore(data).open()
        feeder = Feeder(store, games)
        for g in games:
            await feeder.append_all(g)
        await store.close()

    async def check() -> dict:
        store = await EmbeddedStore(data).open()
        try:
            await assert_projected(store, games)
            return await snapshot(store, games)
        finally:
            await store.close()

    asyncio.run(fill())
    args = _args(_parser(), "project", "--data", str(data), "--name", "cli")
    assert args.func(args) == 0
    projected = asyncio.run(check())
    args = _args(_parser(), "rebuild", "--data", str(data), "--compare")
    assert args.func(args) == 0
    assert asyncio.run(check()) == projected
    out = capsys.readouterr().out
    assert "events/s" in out and "raw XRANGE" in out


@pytest.mark.parametrize("kind", ["redis", "cluster"])
def test_the_cli_uses_redis_when_redis_url_is_set(kind: str, few: list[Played], monkeypatch, request):
    """``rebuild`` and ``project`` on the Redis of ``REDIS_URL``: a single server, or a cluster node (then the CLI
    finds the cluster by itself: FREE_PARKING_CLUSTER is unset, so ``auto``)."""
    from service.store.redis_store import RedisStore

    cluster = kind == "cluster"
    url = request.getfixturevalue("redis_cluster").url if cluster else need_redis()
    ns = namespace()
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.delenv("FREE_PARKING_CLUSTER", raising=False)
    games = few[:3]

    async def fill() -> None:
        store = RedisStore.from_url(url, namespace=ns, cluster=cluster)
        feeder = Feeder(store, games)
        for g in games:
            await feeder.append_all(g)
        await store.close()

    async def check_and_drop() -> None:
        store = RedisStore.from_url(url, namespace=ns, cluster=cluster)
        try:
            await assert_projected(store, games)
        finally:
            await drop_namespace(store.r, ns)
            await store.close()

    asyncio.run(fill())
    args = _args(_parser(), "project", "--namespace", ns, "--once")
    assert args.func(args) == 0
    args = _args(_parser(), "rebuild", "--namespace", ns)
    assert args.func(args) == 0
    asyncio.run(check_and_drop())
