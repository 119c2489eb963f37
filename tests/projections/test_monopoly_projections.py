"""Monopoly's finished games in the read models like the other kinds': the scores say who won and what each seat
was worth at the end (a Monopoly game's points), the players' results and the leaderboard count them under their own
kind, and the audit lines are the rules' own words."""

from __future__ import annotations

import random

import pytest

from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.projections import Projector, read_audit, read_leaderboard, read_results, read_scores, results, scores
from service.rules.engine import Game, audit_lines, rules_for
from service.sim.games import Simulation, play
from tests.projections.helpers import Feeder, Played, commands

KIND = "monopoly"
RULES = rules_for(KIND)
PLAYERS = [f"m{i:02d}" for i in range(6)]
BOTS = ("strategic", "random")


def play_one(i: int, rounds: int = 8) -> Played:
    """Game ``i``: four seats, registered players in some of them (the rest server bots), ``rounds`` rounds at most."""
    rnd = random.Random(f"monopoly-{i}")
    game_id = f"mono-{i:03d}"
    sim = Simulation(Game.new(KIND, game_id, RULES.CONFIG(seats=4, max_rounds=rounds), rnd.randbytes(32)))
    sim.send(Create(), None)
    names = [BOTS[(i + k) % 2] for k in range(4)]
    pids = rnd.sample(PLAYERS, 2 + i % 3)
    for seat, name in enumerate(names):
        player = (
            Player(name=f"player {pids[seat]}", player_id=pids[seat])
            if seat < len(pids)
            else Player(name=f"{name}-{seat}", bot=name)
        )
        sim.send(TakeSeat(player=player), None)
    for _ in play(sim, names, rnd, timeouts=0.05):
        pass
    return Played(game_id, sim.envelopes, sim.game.state)


@pytest.fixture(scope="module")
def games() -> list[Played]:
    return [play_one(i) for i in range(6)]


def test_a_monopoly_games_points_are_each_seats_worth_at_the_end(games):
    for g in games:
        s = g.state
        assert s.over and s.winner is not None, g.game_id
        model = scores.fold(None, g.envelopes)
        ended = next(e.seq for e in g.envelopes if e.type == "game_ended")
        assert (model.kind, model.status, model.winner, model.finished_version) == (KIND, "finished", s.winner, ended)
        assert [seat.points for seat in model.seats] == list(s.worth)
        assert [seat.player for seat in model.seats] == [seat.player for seat in s.seats]
        assert model.round == s.round and model.finished_at == g.envelopes[ended - 1].at


def test_before_the_end_a_monopoly_game_is_playing_and_counts_for_no_one(games):
    g = games[0]
    during = scores.fold(None, g.envelopes[: len(g.envelopes) // 2])
    assert during.status == "playing" and during.winner is None and during.round >= 1
    assert all(seat.points == 0 for seat in during.seats)
    assert results.results_of(during) == []


def test_the_results_of_a_monopoly_game_are_its_registered_players_worth_and_win(games):
    for g in games:
        model = scores.fold(None, g.envelopes)
        got = dict(results.results_of(model))
        seated = {seat.player.player_id: i for i, seat in enumerate(g.state.seats) if seat.player.bot is None}
        assert set(got) == set(seated)
        for pid, seat in seated.items():
            r = got[pid]
            assert (r.kind, r.seat, r.points, r.won, r.players) == (
                KIND,
                seat,
                g.state.worth[seat],
                seat == g.state.winner,
                4,
            )


def test_projected_in_batches_the_scores_equal_one_fold_and_the_audit_is_the_rules_words(games):
    g = games[1]
    model = None
    for batch in commands(g.envelopes):
        model = scores.fold(model, batch)
    assert model == scores.fold(None, g.envelopes)
    lines = audit_lines(RULES, g.envelopes)
    assert any(" wins, " in line for line in lines) and any(" rolls " in line for line in lines)


async def test_results_and_the_leaderboard_count_monopoly_games_under_their_own_kind(store, games):
    projector = Projector(store, "monopoly")
    await Feeder(store, games).interleaved(active=3, every=5, between=projector.catch_up)
    want: dict[str, list[int]] = {}
    for g in games:
        final, version = await read_scores(store, g.game_id)
        assert version == g.version and final == scores.fold(None, g.envelopes)
        lines, audit_version = await read_audit(store, g.game_id)
        assert audit_version == g.version and lines == audit_lines(RULES, g.envelopes)
        for i, seat in enumerate(g.state.seats):
            if seat.player.bot is None:
                w = want.setdefault(seat.player.player_id, [0, 0, 0])
                w[0], w[1], w[2] = w[0] + 1, w[1] + int(i == g.state.winner), w[2] + g.state.worth[i]
    for pid, (played, won, points) in want.items():
        mine, _ = await read_results(store, pid)
        assert mine.kinds[KIND].played == played and mine.kinds[KIND].won == won and mine.kinds[KIND].points == points
    board = await read_leaderboard(store, KIND, 50)
    assert {x.player_id: (x.played, x.won, x.points) for x in board} == {pid: tuple(w) for pid, w in want.items()}
    assert [(x.won, x.points) for x in board] == sorted(((w[1], w[2]) for w in want.values()), reverse=True)
