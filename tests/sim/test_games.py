"""Bot games in memory (service/sim/games.py): each bot plays its own player, as the service's bots do."""

from __future__ import annotations

import random

from service.bots.free_parking import GreedyBot
from service.events import free_parking as ev
from service.sim.games import new_game, play


class Watched(GreedyBot):
    """The greedy bot, noting every player it was asked to move for."""

    def __init__(self) -> None:
        self.moved_for: set = set()

    def choose(self, s, seat, legal, rnd):
        self.moved_for.add(s.seats[seat].player)
        return super().choose(s, seat, legal, rnd)


def traded_game(seats: int):
    """The first seeded game of greedy bots in which players trade places, and the bots that played it."""
    for n in range(200):
        bots = [Watched() for _ in range(seats)]
        sim = new_game("free-parking", seats, bytes([n]) * 32, f"traded-{n}", ["greedy"] * seats)
        start = [st.player for st in sim.game.state.seats]
        types = {e.type for e in play(sim, ["greedy"] * seats, random.Random(n), players=bots)}
        if ev.PlacesTraded.__struct_config__.tag in types:
            return start, bots
    raise AssertionError("no game of 200 traded places")


def test_a_bot_plays_its_own_player_after_a_trade_of_places():
    """Trade Places moves players between seats; a bot seated as a player moves with it and never plays the seat's
    new occupant — else a league credits one bot with the other's play."""
    for seats in (2, 4):
        start, bots = traded_game(seats)
        for player, seated in zip(start, bots, strict=True):
            assert seated.moved_for == {player}
