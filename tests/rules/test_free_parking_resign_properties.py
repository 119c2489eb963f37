"""Seeded card games in which players resign now and then — on turn or not, while an answer or a choice is awaited
from them or from another, in standard and tournament mode: every event keeps every invariant (each card in exactly
one place, the clock held as the wait says, one winner and only at the end, a resigned seat never winning), and the
log folds back into the very state that was played. Bots never resign: the resignations are the test's own."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.events import free_parking as ev
from tests.rules.invariants import bots_for, play_checked
from tests.rules.test_properties import fold_from_scratch, game_seed

GAMES = 12


@pytest.mark.parametrize("mode", ["standard", "tournament"])
def test_games_with_resignations_keep_every_invariant(mode):
    seen: Counter[str] = Counter()
    for g in range(GAMES):
        seats = 2 + g % 5
        bots = bots_for(("random", "greedy", "mix")[g % 3], seats, random.Random(f"resign:{mode}:{g}"))
        played = play_checked(seats, game_seed(seats, 20_000 + g), bots, g, timeouts=0.1 * (g % 2),
                              game_id=f"resign-{mode}-{g}", mode=mode, resigns=0.01)
        assert fold_from_scratch(played).state == played.state
        s = played.state
        assert s.phase == "finished" and s.winner is not None and not s.seats[s.winner].forfeited
        for i, e in enumerate(played.events):
            if isinstance(e, ev.SeatResigned):
                before, after = played.events[i - 1], played.events[i + 1:i + 2]
                seen["resigned"] += 1
                seen["during a wait"] += isinstance(before, ev.ResponseAwaited | ev.ChoiceAwaited)
                seen["won at once"] += bool(after) and isinstance(after[0], ev.GameWon)
    assert seen["resigned"] >= GAMES and seen["won at once"] >= 1 and seen["during a wait"] >= 1, seen
