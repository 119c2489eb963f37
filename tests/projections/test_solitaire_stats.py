"""Solitaire statistics (RULES.md §2): a read model fed by the projector. A game counts as started at its deal, so the
win rate is over games started and an abandoned deal counts; a game's time runs from its first move to its last;
games on a chosen seed and games in which a redeal was undone are counted apart. Built incrementally it equals a
rebuild; a game counted twice, or an older snapshot of it, changes nothing; best and median times are right on
hand-made times; only registered players count."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.bots import bot
from service.events.base import Player
from service.events.common import Close, Create, TakeSeat
from service.store.embedded import EmbeddedStore
from service.events.entries import encode_entry
from service.events.solitaire import Redeal, Resign, SolitaireConfig, Undo
from service.store.store import AppendRequest, Store
from service.projections import (
    Projector,
    project_game,
    read_results,
    read_scores,
    read_stats,
    rebuild,
    solitaire_stats,
)
from service.projections.scores import fold
from service.projections.solitaire_stats import BUCKETS, median, middle_ranks
from service.rules import solitaire as rules
from service.rules.engine import Game
from service.rules.solitaire.layout import deal
from service.rules.solitaire.legal import move_command
from service.rules.solitaire.solver import solve
from tests.projections.helpers import commands

WINNABLE = bytes([1]) * 32
T0 = 1_700_000_000_000
FIRST_MOVE = T0 + 60_000
"""Every game is dealt at ``T0`` and moved in a minute later: its time starts there, not at the deal."""
RESIGN_AFTER = 30_000
"""A resignation comes this long after the last move: its time ends at the move, not at the resignation."""
IDLE_MS = 3_600_000


async def _append(store: Store, game_id: str, envelopes: list, created_at: int) -> None:
    """Append ``envelopes`` one command at a time, as the service would."""
    status = "waiting"
    for batch in commands(envelopes):
        types = {e.type for e in batch}
        ended = types & {"game_won", "game_lost", "game_closed"}
        status = "finished" if ended else "playing" if "layout_dealt" in types else status
        done = await store.append(AppendRequest(game_id=game_id, expected_version=batch[0].seq - 1,
                                                entries=[encode_entry(e) for e in batch], head=batch[-1].hash,
                                                status=status, created_at=created_at))
        assert done.outcome == "ok", done


ANN, BEA = Player(name="Ann", player_id="p_ann"), Player(name="Bea", player_id="p_bea")
GUEST, BOT = Player(name="Guest", player_id="g_1", guest=True), Player(name="solver bot", player_id="b_1", bot="solver")

# (player, chosen seed, how it goes, time ms). Ann's dealt games: wins of 5, 1, 3 and 7 s; losses of 2 and 9 s; a game
# closed for nobody playing (4 s of moves); one resigned before any move; one still being played; one abandoned at
# the deal. So 10 started, 8 finished, 4 won: a win rate of 4/10 over started (4/8 over finished), best 1 s, median
# win 4 s, median of the 7 finished games with a move 4 s. Apart: a chosen-seed win of 6 s, and two games whose
# redeal she undid (a win of 8 s, a loss of 2.5 s). Bea: one dealt loss. A guest's and a bot's games never count.
GAMES = [
    (ANN, False, "won", 5000), (ANN, False, "won", 1000), (ANN, False, "lost", 2000), (ANN, False, "won", 3000),
    (ANN, False, "won", 7000), (ANN, False, "lost", 9000), (ANN, False, "closed", 4000), (ANN, False, "resigned_at_once", 0),
    (ANN, False, "playing", 3000), (ANN, False, "abandoned", 0),
    (ANN, True, "won", 6000), (ANN, False, "won_after_undoing_a_redeal", 8000), (ANN, False, "lost_after_undoing_a_redeal", 2500),
    (BEA, False, "lost", 4000), (GUEST, False, "won", 1000), (BOT, True, "won", 500),
]


def _steps(game: Game, how: str) -> list:
    """The player's commands of a game going ``how``, before any resignation or close."""
    seed = game.seed
    if how.startswith("won"):
        line = [Redeal() if step == "redeal" else move_command(step) for step in solve(deal(seed), seed=seed, redeals_used=0,
                                                                                         budget=50_000).moves]
        if how == "won_after_undoing_a_redeal":  # the redeal seen, undone, then dealt again: the same cards
            k = line.index(Redeal())
            line[k:k + 1] = [Redeal(), Undo(), Redeal()]
        return line
    if how in ("abandoned", "resigned_at_once"):
        return []
    greedy, rnd, state, out = bot("solitaire", "greedy"), random.Random(0), game.state, []
    for _ in range(5):
        legal = rules.legal_commands(state, 0)
        command = greedy.choose(state, 0, legal, rnd)
        if isinstance(command, Resign | Redeal):
            break
        out.append(command)
        state = rules.run(state, command, 0, T0)[1]
    return out + ([Redeal(), Undo()] if how == "lost_after_undoing_a_redeal" else [])


def _envelopes(i: int, player: Player, chosen: bool, how: str, time_ms: int) -> list:
    """The log of a solitaire dealt at ``T0``, its first move at ``FIRST_MOVE`` and its last ``time_ms`` later; won by
    the solver's line on ``WINNABLE``, else a few greedy moves and then, as ``how`` says, resigned or closed or not."""
    seed = WINNABLE if how.startswith("won") else random.Random(i).randbytes(32)
    game = Game.new("solitaire", f"sol-{i:02d}", SolitaireConfig(seats=1, seed_chosen=chosen), seed)
    log = game.play(Create(), None, T0) + game.play(TakeSeat(player=player), None, T0)
    steps = _steps(game, how)
    for n, step in enumerate(steps):
        log += game.play(step, 0, FIRST_MOVE + time_ms if n == len(steps) - 1 else FIRST_MOVE)
    if how in ("lost", "lost_after_undoing_a_redeal", "resigned_at_once"):
        log += game.play(Resign(), 0, game.last_at + RESIGN_AFTER)
    elif how == "closed":
        log += game.play(Close(idle_ms=IDLE_MS, since=game.last_at), None, game.last_at + IDLE_MS)
    finished = how not in ("playing", "abandoned")
    assert (rules.status_of(game.state) == "finished") == finished, (game.game_id, how)
    assert [e.seq for e in log] == list(range(1, game.version + 1))
    return log


@pytest.fixture(scope="module")
def logs() -> list[list]:
    return [_envelopes(i, *spec) for i, spec in enumerate(GAMES)]


async def _snapshot(store: Store) -> dict:
    return {pid: msgspec.to_builtins(await read_stats(store, pid)) for pid in ("p_ann", "p_bea", "g_1", "b_1")}


def _counts(stats, bucket: str) -> tuple:
    b = getattr(stats, bucket)
    return b.started, b.finished, b.won, b.best_ms, b.median_ms, b.median_played_ms


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
    assert (ann.started, ann.games) == (13, 11)
    assert ann.as_of == max(e.at for log in logs[:13] for e in log)  # the close, an hour after its last move
    assert _counts(ann, "dealt") == (10, 8, 4, 1000, 4000, 4000)
    assert ann.dealt.win_rate == pytest.approx(4 / 10) and ann.dealt.finished_win_rate == pytest.approx(4 / 8)
    assert ann.dealt.played == ann.dealt.finished  # the old name of the count
    assert _counts(ann, "chosen_seed") == (1, 1, 1, 6000, 6000, 6000)
    assert _counts(ann, "redeal_undone") == (2, 2, 1, 8000, 8000, (2500 + 8000) // 2)
    bea = await read_stats(store, "p_bea")
    assert _counts(bea, "dealt") == (1, 1, 0, None, None, 4000) and bea.dealt.win_rate == 0.0
    assert bea.chosen_seed.started == 0 and bea.chosen_seed.win_rate is None
    for unregistered in ("g_1", "b_1"):  # a guest's and a bot's games are not counted
        assert (await read_stats(store, unregistered)).started == 0
    scores, _ = await read_scores(store, logs[0][0].game_id)
    assert scores is not None and scores.solitaire is not None and scores.solitaire.time_ms == 5000

    done = await rebuild(store)
    assert done.games == len(logs)
    assert await _snapshot(store) == incremental


async def test_the_win_rate_counts_every_game_started(store, logs):
    """An abandoned deal (no move) and a game still being played count as started and not won."""
    for i in (0, 8, 9):  # a win, a game still being played, a deal nobody moved in
        await _append(store, logs[i][0].game_id, logs[i], T0)
        await project_game(store, logs[i][0].game_id)
    ann = await read_stats(store, "p_ann")
    assert (ann.started, ann.games, ann.dealt.won) == (3, 1, 1)
    assert ann.dealt.win_rate == pytest.approx(1 / 3) and ann.dealt.finished_win_rate == 1.0


async def test_a_game_counts_as_started_when_dealt_before_any_move(store, logs):
    abandoned = logs[9]
    assert [e.type for e in abandoned] == ["game_created", "seat_taken", "layout_dealt"]
    await _append(store, abandoned[0].game_id, abandoned, T0)
    await project_game(store, abandoned[0].game_id)
    ann = await read_stats(store, "p_ann")
    assert (ann.started, ann.games, ann.dealt.started, ann.dealt.finished, ann.as_of) == (1, 0, 1, 0, T0)


def test_a_games_time_runs_from_its_first_move_to_its_last(logs):
    """Not from the deal, and not to a resignation or the server's close; a game with no move has no time."""
    times = {how: fold(None, logs[i]).solitaire.time_ms for i, (_, _, how, _) in enumerate(GAMES) if i < 10}
    assert times == {"won": 7000, "lost": 9000, "closed": 4000, "resigned_at_once": None, "playing": None, "abandoned": None}
    lost = fold(None, logs[2])
    assert (lost.solitaire.first_move_at, lost.solitaire.last_move_at, lost.solitaire.time_ms) == (FIRST_MOVE, FIRST_MOVE + 2000, 2000)
    assert lost.finished_at == FIRST_MOVE + 2000 + RESIGN_AFTER


async def test_a_game_whose_redeal_is_undone_is_counted_apart_from_then_on(store, logs):
    """RULES.md §2: the player has seen that redeal. Counted as dealt until the undo, then apart, never in both."""
    envelopes, game_id = logs[12], logs[12][0].game_id
    undo = next(e.seq for e in envelopes if e.type == "undone")
    await _append(store, game_id, envelopes[:undo - 1], T0)
    await project_game(store, game_id)
    before = await read_stats(store, "p_ann")
    assert (before.dealt.started, before.redeal_undone.started) == (1, 0)
    await _append(store, game_id, envelopes[undo - 1:], T0)
    await project_game(store, game_id)
    after = await read_stats(store, "p_ann")
    assert (after.started, after.dealt.started, after.redeal_undone.started, after.redeal_undone.finished) == (1, 0, 1, 1)
    scores, _ = await read_scores(store, game_id)
    assert scores.solitaire.redeal_undone and solitaire_stats.bucket_of(scores) == "redeal_undone"


async def test_a_game_with_an_undone_redeal_is_left_out_of_the_results_like_a_chosen_seed_game(store, logs):
    for i in (0, 10, 11):  # a dealt win, a chosen-seed win, a win after an undone redeal
        await _append(store, logs[i][0].game_id, logs[i], T0)
        await project_game(store, logs[i][0].game_id)
    results, _ = await read_results(store, "p_ann")
    assert results is not None and list(results.games) == [logs[0][0].game_id]
    assert (await read_stats(store, "p_ann")).started == 3


async def test_a_game_counted_again_or_an_older_snapshot_of_it_counts_once(store, logs):
    for envelopes in logs[:3]:
        await _append(store, envelopes[0].game_id, envelopes, T0)
        await project_game(store, envelopes[0].game_id)
    before = await _snapshot(store)
    assert before["p_ann"]["games"] == 3
    for envelopes in logs[:3]:  # the upserts written again, and an older snapshot written after the newest
        scores, _ = await read_scores(store, envelopes[0].game_id)
        assert await solitaire_stats.record(store, None, scores) == 0
        dealt = fold(None, envelopes[:3])
        assert await solitaire_stats.record(store, None, dealt) == 0
        await project_game(store, envelopes[0].game_id)
    assert await _snapshot(store) == before
    await rebuild(store)
    await rebuild(store)
    assert await _snapshot(store) == before


async def _upsert(store: Store, game: str, version: int, bucket: str = "dealt", *, started_at: int = T0,
                  finished_at: int | None = None, time_ms: int | None = None, won: bool = False):
    return await store.project_solitaire_game("p_x", game, version, list(BUCKETS), bucket, started_at, finished_at, time_ms, won)


@pytest.mark.parametrize(("times", "best", "median_ms"), [
    ([], None, None), ([7], 7, 7), ([9, 1], 1, 5), ([4, 1, 9], 1, 4), ([10, 2, 8, 4], 2, 6), ([3, 3, 3, 1000], 3, 3),
])
async def test_best_and_median_on_hand_made_times(store, times, best, median_ms):
    for i, t in enumerate(times):
        assert (await _upsert(store, f"g{i}", 5, finished_at=T0 + i, time_ms=t, won=True)).applied
        assert not (await _upsert(store, f"g{i}", 5, finished_at=T0 + i, time_ms=t, won=True)).applied  # a repeat
    stats = await read_stats(store, "p_x")
    assert _counts(stats, "dealt") == (len(times), len(times), len(times), best, median_ms, median_ms)
    assert stats.chosen_seed.started == 0 and stats.games == len(times)


async def test_an_upsert_moves_a_game_between_buckets_and_refuses_an_older_version(store):
    assert (await _upsert(store, "g", 3)).applied
    assert (await _upsert(store, "g", 9, "redeal_undone", finished_at=T0 + 9, time_ms=4, won=True)).applied
    refused = await _upsert(store, "g", 5, finished_at=T0 + 5, time_ms=2, won=True)  # late, from a slower projector
    assert (refused.applied, refused.version) == (False, 9)
    stats = await read_stats(store, "p_x")
    assert _counts(stats, "dealt") == (0, 0, 0, None, None, None)
    assert _counts(stats, "redeal_undone") == (1, 1, 1, 4, 4, 4) and stats.as_of == T0 + 9


async def test_an_embedded_journal_with_the_statistics_write_of_before_still_replays(tmp_path):
    """The old write (finished games only) is journalled in existing data: it must replay, though nothing reads it."""
    store = await EmbeddedStore(tmp_path / "data").open()
    assert (await store._write("project_solitaire", "p_x", "g_old", "dealt", 1000, True, T0)).applied
    await store.close()
    again = await EmbeddedStore(tmp_path / "data").open()
    assert await again.r.zscore(again.keys.player_projection("solitaire", "p_x", "won:dealt"), "g_old") == 1000
    assert (await read_stats(again, "p_x")).started == 0  # counted again only by a rebuild, from the game's log
    await again.close()


def test_the_median_reads_the_middle_ranks():
    assert [middle_ranks(n) for n in (1, 2, 3, 4, 1001)] == [(0, 0), (0, 1), (1, 1), (1, 2), (500, 500)]
    assert median([3]) == 3 and median([3, 6]) == 4 and median([]) is None
