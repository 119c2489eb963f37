"""The read models' reducers as pure functions: no store, the decider as the reference."""

from __future__ import annotations

import msgspec
import pytest

from service.events.base import Player
from service.events.envelope import redacted
from service.projections import audit, results, scores
from service.projections.scores import OutOfOrder
from service.rules.engine import Game
from tests.projections.helpers import KIND, Played, assert_scores_match, commands, public_audit


def test_scores_follow_the_decider_after_every_command(few: list[Played]):
    """After every batch of every game, the fold of the public parts says what the decider's table says."""
    traded = 0
    for g in few:
        game = Game.new(KIND, g.game_id, g.state.config, g.state.seed)
        model = None
        for batch in commands(g.envelopes):
            game.fold(batch)
            model = scores.fold(model, batch)
            traded += sum(1 for e in batch if e.type == "places_traded")
            assert_scores_match(model, model.version, Played(g.game_id, [], game.state))
        won = next(e.seq for e in g.envelopes if e.type == "game_won")
        assert model.status == "finished" and model.finished_version == won
    assert traded > 0, "no game traded places: the case where scores follow the player is untested"


def test_scores_read_only_public_parts(few: list[Played]):
    for g in few[:7]:
        assert scores.fold(None, g.envelopes) == scores.fold(None, [redacted(e) for e in g.envelopes])
        assert audit.lines(KIND, [redacted(e) for e in g.envelopes]) == public_audit(g)


def test_a_fold_leaves_its_input_alone_and_refuses_gaps_and_repeats(few: list[Played]):
    envs = few[0].envelopes
    first = scores.fold(None, envs[:10])
    frozen = msgspec.json.encode(first)
    whole = scores.fold(first, envs[10:])
    assert msgspec.json.encode(first) == frozen
    assert whole == scores.fold(None, envs)
    with pytest.raises(OutOfOrder):
        scores.fold(first, envs[11:])  # a gap
    with pytest.raises(OutOfOrder):
        scores.fold(first, envs[5:])  # a repeat
    with pytest.raises(OutOfOrder):
        scores.fold(None, envs[1:])  # not from the start


def test_registered_players_only():
    assert results.registered(Player(name="Ann", player_id="p1"))
    assert not results.registered(Player(name="Ann"))
    assert not results.registered(Player(name="greedy-0", player_id="b1", bot="greedy"))
    assert not results.registered(None)
    if "guest" in Player.__struct_fields__:
        assert not results.registered(Player(name="guest", player_id="g1", guest=True))


def test_results_of_a_game_count_once_however_often_applied(few: list[Played]):
    model = None
    finals = [scores.fold(None, g.envelopes) for g in few]
    assert all(not results.results_of(scores.fold(None, g.envelopes[:-3])) for g in few)  # before the end: nothing
    per_player: dict[str, results.PlayerResults] = {}
    for final in finals + finals[::-1]:  # every game applied twice
        for pid, result in results.results_of(final):
            per_player[pid] = results.upsert(per_player.get(pid), pid, result)
    for pid, model in per_player.items():
        mine = [(g, r) for g in finals for p, r in results.results_of(g) if p == pid]
        assert model.played == len(mine) == len(model.games)
        assert model.won == sum(r.won for _, r in mine)
        assert model.points == sum(r.points for _, r in mine)
    # an older version of a game's result changes nothing; a newer one replaces it, counters and all
    pid, model = next(iter(per_player.items()))
    gid, result = next(iter(model.games.items()))
    older = msgspec.structs.replace(result, version=result.version - 1, points=999, won=not result.won)
    assert results.upsert(model, pid, older) == model
    newer = msgspec.structs.replace(result, version=result.version + 1, points=result.points + 5)
    moved = results.upsert(model, pid, newer)
    assert (moved.played, moved.points) == (model.played, model.points + 5)
    assert moved.games[gid] == newer
