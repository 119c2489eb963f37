"""Rules versions: a game is decided under the version its ``game_created`` names, so a recorded game replays under
the rules it was played under after the rules change (RULES_VERSION is the one new games get)."""

from __future__ import annotations

import msgspec
import pytest

from service.events.common import Create
from service.rules.engine import GAMES, Game


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_a_game_is_created_under_its_kinds_current_version_and_remembers_it(kind):
    rules = GAMES[kind]
    assert rules.RULES_VERSION in rules.RULES_VERSIONS and rules.RULES_VERSION == max(rules.RULES_VERSIONS)
    game = Game.new(kind, "g_versions", rules.CONFIG(seats=1 if kind == "solitaire" else 2), bytes(32))
    (created,) = game.play(Create(), None, 1)
    assert msgspec.json.decode(created.public)["rules_version"] == rules.RULES_VERSION
    assert game.state.rules_version == rules.RULES_VERSION


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_version_the_rules_play_is_decided_as_itself_and_no_other_is_played(kind):
    rules = GAMES[kind]
    config = rules.CONFIG(seats=1 if kind == "solitaire" else 2)
    for version in rules.RULES_VERSIONS:
        game = Game.new(kind, "g_versions", config, bytes(32), version)
        (created,) = game.play(Create(), None, 1)
        assert msgspec.json.decode(created.public)["rules_version"] == version
        folded = Game.new(kind, "g_versions", config, bytes(32))  # a fold takes the version from the event
        folded.fold([created])
        assert folded.state.rules_version == version
    with pytest.raises(ValueError, match="rules version"):
        Game.new(kind, "g_versions", config, bytes(32), max(rules.RULES_VERSIONS) + 1)
