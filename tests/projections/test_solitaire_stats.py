"""Solitaire statistics: a read model fed by the projector. Built incrementally it equals a rebuild; a game counted
twice counts once; best and median times are right on hand-made times; only registered players count, and games
on a chosen seed are kept apart."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.bots import bot
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.entries import encode_entry
from service.events.solitaire import Redeal, Resign, SolitaireConfig
from service.events.store import AppendRequest, Store
from service.projections import (
    Projector,
    project_game,
    read_scores,
    read_stats,
    rebuild,
    solitaire_stats,
)
from service.projections.solitaire_stats import median, middle_ranks
from service.rules import solitaire as rules
from service.rules.engine import Game
from service.rules.solitaire.layout import deal
from service.rules.solitaire.legal import move_command
from service.rules.solitaire.solver import solve
from tests.projections.helpers import commands

WINNABLE = bytes([1]) * 32
T0 = 1_700_000_000_000


async def _append(store: Store, game_id: str, envelopes: list, created_at: int) -> None:
    """Append ``envelopes`` one command at a time, as the service would."""
    status = "waiting"
    for batch in commands(envelopes):
        types = {e.type for e in batch}
        status = "finished" if types & {"game_won", "game_lost"} else "playing" if "layout_dealt" in types else status
        done = await store.append(AppendRequest(game_id=game_id, expected_version=batch[0].seq - 1,
                                                entries=[encode_entry(e) for e in batch], head=batch[-1].hash,
                                                status=status, created_at=created_at))
        assert done.outcome == "ok", done


ANN, BEA = Player(name="Ann", player_id="p_ann"), Player(name="Bea", player_id="p_bea")
GUEST, BOT = Player(name="Guest", player_id="g_1", guest=True), Player(name="solver bot", player_id="b_1", bot="solver")

# (player, chosen seed, won, time ms): Ann's dealt wins take 5, 1, 3 and 7 s (best 1 s, median 4 s) and she lost
# two (2 and 9 s: her median over all six is (3 + 5) / 2 s); one chosen-seed win of 6 s; Bea one dealt loss.
GAMES = [
    (ANN, False, True, 5000), (ANN, False, True, 1000), (ANN, False, False, 2000), (ANN, False, True, 3000),
    (ANN, False, True, 7000), (ANN, False, False, 9000), (ANN, True, True, 6000), (BEA, False, False, 4000),
    (GUEST, False, True, 1000), (BOT, True, True, 500),
]


def _envelopes(i: int, player: Player, chosen: bool, won: bool, time_ms: int) -> list:
    """The log of a solitaire created at ``T0`` and over ``time_ms`` later: won by the solver's line on
    ``WINNABLE``, else a few greedy moves then resigned."""
    seed = WINNABLE if won else random.Random(i).randbytes(32)
    game = Game.new("solitaire", f"sol-{i:02d}", SolitaireConfig(seats=1, seed_chosen=chosen), seed)
    log = game.play(Create(), None, T0) + game.play(TakeSeat(player=player), None, T0)
    if won:
        line = solve(deal(seed), seed=seed, redeals_used=0, budget=50_000)
        assert line.won
        steps = [Redeal() if step == "redeal" else move_command(step) for step in line.moves]
    else:
        greedy, rnd = bot("solitaire", "greedy"), random.Random(0)
        for _ in range(5):
            legal = rules.legal_commands(game.state, 0)
            command = greedy.choose(game.state, 0, legal, rnd) if legal else None
            if command is None or isinstance(command, Resign | Redeal):
                break
            log += game.play(command, 0, T0 + 1)
        steps = [Resign()] if rules.status_of(game.state) == "playing" else []
    for n, step in enumerate(steps):
        log += game.play(step, 0, T0 + time_ms if n == len(steps) - 1 else T0 + 2 + n)
    assert rules.status_of(game.state) == "finished" and game.last_at - T0 == time_ms, (game.game_id, game.last_at - T0)
    assert [e.seq for e in log] == list(range(1, game.version + 1))
    return log


@pytest.fixture(scope="module")
def logs() -> list[list]:
    return [_envelopes(i, *spec) for i, spec in enumerate(GAMES)]


async def _snapshot(store: Store) -> dict:
    return {pid: msgspec.to_builtins(await read_stats(store, pid)) for pid in ("p_ann", "p_bea", "g_1", "b_1")}


async def test_statistics_built_incrementally_equal_a_rebuild_and_are_right(store, logs):
    projector = Projector(store, "solitaire-stats")
    for envelopes in logs:  # a projector catching up mid-game and after each game
        half = len(envelopes) // 2
        await _append(store, envelopes[0].game_id, envelopes[:half], T0)
        await projector.catch_up()
        await _append(store, envelopes[0].game_id, envelopes[half:], T0)
    await projector.catch_up()
    incremental = await _snapshot(store)

    ann = await read_stats(store, "p_ann")
    assert (ann.games, ann.as_of) == (7, T0 + 9000)
    assert (ann.dealt.played, ann.dealt.won, ann.dealt.best_ms, ann.dealt.median_ms) == (6, 4, 1000, 4000)
    assert ann.dealt.win_rate == pytest.approx(4 / 6) and ann.dealt.median_played_ms == 4000
    assert (ann.chosen_seed.played, ann.chosen_seed.won, ann.chosen_seed.best_ms, ann.chosen_seed.median_ms) == (1, 1, 6000, 6000)
    bea = await read_stats(store, "p_bea")
    assert (bea.dealt.played, bea.dealt.won, bea.dealt.win_rate, bea.dealt.best_ms, bea.dealt.median_played_ms) == (1, 0, 0.0, None, 4000)
    assert bea.chosen_seed.played == 0 and bea.chosen_seed.win_rate is None
    for unregistered in ("g_1", "b_1"):  # a guest's and a bot's games are not counted
        assert (await read_stats(store, unregistered)).games == 0
    scores, _ = await read_scores(store, logs[0][0].game_id)
    assert scores is not None and scores.solitaire is not None and scores.solitaire.time_ms == 5000

    done = await rebuild(store)
    assert done.games == len(logs)
    assert await _snapshot(store) == incremental


async def test_a_game_counted_again_counts_once(store, logs):
    for envelopes in logs[:3]:
        await _append(store, envelopes[0].game_id, envelopes, T0)
        await project_game(store, envelopes[0].game_id)
    before = await _snapshot(store)
    assert before["p_ann"]["games"] == 3
    for envelopes in logs[:3]:  # a replay of the same finished games, and the upserts written twice
        scores, _ = await read_scores(store, envelopes[0].game_id)
        assert await solitaire_stats.record(store, scores) == 0
        await project_game(store, envelopes[0].game_id)
    assert await _snapshot(store) == before
    await rebuild(store)
    await rebuild(store)
    assert await _snapshot(store) == before


@pytest.mark.parametrize(("times", "best", "median_ms"), [
    ([], None, None), ([7], 7, 7), ([9, 1], 1, 5), ([4, 1, 9], 1, 4), ([10, 2, 8, 4], 2, 6), ([3, 3, 3, 1000], 3, 3),
])
async def test_best_and_median_on_hand_made_times(store, times, best, median_ms):
    for i, t in enumerate(times):
        assert (await store.project_solitaire("p_x", f"g{i}", "dealt", t, True, T0 + i)).applied
        assert not (await store.project_solitaire("p_x", f"g{i}", "dealt", t, True, T0 + i)).applied  # a repeat
    stats = await read_stats(store, "p_x")
    assert (stats.dealt.played, stats.dealt.won, stats.dealt.best_ms, stats.dealt.median_ms) == (len(times), len(times), best, median_ms)
    assert stats.chosen_seed.played == 0 and stats.games == len(times)


def test_the_median_reads_the_middle_ranks():
    assert [middle_ranks(n) for n in (1, 2, 3, 4, 1001)] == [(0, 0), (0, 1), (1, 1), (1, 2), (500, 500)]
    assert median([3]) == 3 and median([3, 6]) == 4 and median([]) is None
