"""What a player's ``game_over`` says of how the game ended (service/api/player_events.py), in each kind, from the
batch that ended it: the ending event, the winning seat, and whether the player's seat won."""

from __future__ import annotations

import random

from service.api.player_events import _result
from service.sim.games import new_game, play


def _ended(kind: str, seats: int, bots: list[str], first_seed: int, wanted: str) -> tuple[object, list]:
    """The rules and envelopes of the first seeded game of ``kind`` from ``first_seed`` that ends with ``wanted``."""
    for n in range(first_seed, first_seed + 200):
        sim = new_game(kind, seats, bytes([n % 256]) * 32, f"g_end{n}", bots)
        list(play(sim, bots, random.Random(n)))
        if any(e.type == wanted for e in sim.envelopes):
            return sim.game.rules, sim.envelopes
    raise AssertionError(f"no {kind} game of 200 ended with {wanted}")


def test_a_won_solitaire_says_its_one_seat_won():
    rules, envelopes = _ended("solitaire", 1, ["solver"], 0, "game_won")
    assert _result(rules, envelopes, 0) == {"ended_by": "game_won", "winner_seat": 0, "won": True}


def test_a_lost_solitaire_says_it_was_lost_not_that_its_seed_was_revealed():
    rules, envelopes = _ended("solitaire", 1, ["greedy"], 0, "game_lost")
    assert envelopes[-1].type != "game_lost"  # the seed is revealed after it: the ending is found further back
    assert _result(rules, envelopes, 0) == {"ended_by": "game_lost", "winner_seat": None, "won": False}


def test_the_card_games_and_monopolys_winner_is_the_seat_their_ending_names():
    rules, envelopes = _ended("free-parking", 3, ["greedy"] * 3, 0, "game_won")
    winner = next(rules.CODEC.join(e.public).seat for e in envelopes if e.type == "game_won")
    assert [_result(rules, envelopes, s)["won"] for s in range(3)] == [s == winner for s in range(3)]
    rules, envelopes = _ended("monopoly", 2, ["strategic"] * 2, 0, "game_ended")
    winner = next(rules.CODEC.join(e.public).winner for e in envelopes if e.type == "game_ended")
    assert _result(rules, envelopes, winner) == {"ended_by": "game_ended", "winner_seat": winner, "won": True}
