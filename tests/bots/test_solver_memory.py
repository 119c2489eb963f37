"""The solitaire solver keeps its line between moves (so it need not search again each move), and a bot is checkable
only if that memory never changes a choice (issue 30): a solver made afresh at every move — as after a restart, on
another worker, or in ``replays verify`` — chooses exactly what the one that played the whole game chose."""

from __future__ import annotations

import hashlib

from service.bots.sight import decide
from service.bots.solitaire import SolverBot
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.rules.engine import Game, rules_for


def test_a_solver_made_afresh_at_every_move_chooses_what_the_one_that_kept_its_line_chose():
    rules = rules_for("solitaire")
    compared = 0
    for n in range(2):
        game = Game.new("solitaire", f"g_solver_{n}", rules.CONFIG(seats=1), hashlib.sha256(b"solver %d" % n).digest())
        game.play(Create(), None, 1)
        game.play(TakeSeat(player=Player(name="solver", bot="solver", bot_version=1)), None, 1)
        kept = SolverBot()
        while rules.status_of(game.state) != "finished":
            chosen = decide(kept, rules, game.state, 0, game.game_id)
            assert decide(SolverBot(), rules, game.state, 0, game.game_id) == chosen, (n, game.version)
            game.play(chosen, 0, 1)
            compared += 1
    assert compared > 20  # games long enough to follow lines across searches and redeals
