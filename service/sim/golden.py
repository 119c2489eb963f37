"""Playing a golden log's recipe (``replays/golden.py``) to its end: the bots and the simulation that recorded the
goldens. It lives here, not in ``replays``, because checking a golden must need nothing that played it; ``python -m
service golden --write`` (``service/cli/golden.py``) hands it to ``replays.golden.write``."""

from __future__ import annotations

import random
from typing import Any

from service.events.export import dumps
from service.rules.engine import export_header

from .games import new_game, play as play_game


def play(recipe: Any) -> bytes:
    """The export of ``recipe`` (a ``replays.golden.Recipe``) played to its end, seed in the header."""
    sim = new_game(
        recipe.kind, recipe.seats, recipe.seed, recipe.game_id, list(recipe.bots), recipe.options, recipe.rules_version,
        seeding=recipe.seeding,
        client_seeds={seat: bytes.fromhex(hex_) for seat, hex_ in recipe.client_seeds},
    )
    for _ in play_game(sim, list(recipe.bots), random.Random(recipe.bots_seed), timeouts=recipe.timeouts,
                      turn_timeouts=recipe.turn_timeouts):
        pass
    return dumps(export_header(sim.game, with_seed=True), sim.envelopes)
