"""The leaderboard: built as games finish, equal to the players' results, equal after a rebuild, and left alone by
a repeat of a stale snapshot."""

from __future__ import annotations

import itertools

from service.projections import Projector, read_leaderboard, rebuild
from tests.projections.helpers import Feeder, Played, expected_results


def ranked(expected: dict[str, dict]) -> list[tuple[str, int, int, int]]:
    rows = [(pid, r["played"], r["won"], r["points"]) for pid, r in expected.items()]
    return sorted(rows, key=lambda row: (-row[2], -row[3], row[0]))


async def test_the_leaderboard_ranks_the_players_results_and_a_rebuild_equals_it(store, few: list[Played]):
    games = few[:16]
    projector = Projector(store, "incremental")
    await Feeder(store, games).interleaved(active=6, every=10, between=projector.catch_up)
    leaders = await read_leaderboard(store, None, 200)
    want = ranked(expected_results(games))
    assert sorted((x.player_id, x.played, x.won, x.points) for x in leaders) == sorted(want)
    assert [(x.won, x.points) for x in leaders] == [(w, p) for _, _, w, p in want]
    assert leaders[0].rank == 1 and all(a.rank <= b.rank for a, b in itertools.pairwise(leaders))
    assert await read_leaderboard(store, "free-parking", 200) == leaders
    assert await read_leaderboard(store, None, 3) == leaders[:3]
    await rebuild(store)
    assert await read_leaderboard(store, None, 200) == leaders


async def test_an_older_snapshot_never_overwrites_a_newer_one(store):
    assert (await store.project_leaderboard("p_x", 2, {"all": 5.0})).applied
    assert not (await store.project_leaderboard("p_x", 1, {"all": 9.0})).applied
    assert not (await store.project_leaderboard("p_x", 2, {"all": 9.0})).applied
    assert await store.r.zscore(store.keys.leaderboard("all"), "p_x") == 5.0
