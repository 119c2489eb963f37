"""Tables where a person's out-of-turn chance opens for certain, found offline with the rules code and the bots.

A bot's move is a function of its seat's information and the game's id (``service/bots/sight.py``); the bots used
here (the card game's greedy one, Monopoly's strategic one) decide on their own hand and the public table alone, so
the moves found here are the ones the server's bots make in a game of any id dealt from the same admin-fixed seed.
"""

from __future__ import annotations

import hashlib
from functools import cache

from service.api.schedule import server_move
from service.events import free_parking as fp
from service.events import monopoly as mono
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.rules.engine import Game, rules_for

PERSON = 0
"""The person takes the first seat; the bots the others."""


def seated(kind: str, seed: bytes, bots: tuple[str, ...], **options) -> Game:
    """A ``kind`` game dealt from ``seed``: a person in seat 0, then ``bots`` in seat order, each at time 1."""
    config = rules_for(kind).CONFIG(seats=1 + len(bots), **options)
    game = Game.new(kind, "g_chance_search", config, seed)
    game.play(Create(), None, 1)
    game.play(TakeSeat(player=Player(name="Ann", player_id="g_ann", guest=True)), None, 1)
    for i, name in enumerate(bots, 1):
        game.play(TakeSeat(player=Player(name=f"Bot {i}", player_id=f"g_bot{i}", bot=name, bot_version=1)), None, 1)
    return game


def bot_plays(game: Game, at: int) -> tuple[int, object]:
    """The server's bot move now (``server_move``, as the runner asks it), played at ``at``: its seat and command."""
    move = server_move(game, at)
    assert move is not None and move.seat is not None, move
    game.play(move.command, move.seat, at, move.command_id)
    return move.seat, move.command


def _search(prefix: bytes, good) -> bytes:
    for i in range(2_000):
        seed = hashlib.sha256(prefix + b"-%d" % i).digest()
        if good(seed):
            return seed
    raise AssertionError("no test seed deals what the test needs")


@cache
def officer_jones_seed() -> bytes:
    """A two-seat card game (the person in seat 0, greedy in seat 1, which plays first) whose bot opens with a Free
    Parking play: an errand scored at Violation, so Ann — holding Officer Jones — may play it on the bot, off turn."""

    def good(seed: bytes) -> bool:
        game = seated("free-parking", seed, ("greedy",))
        seat, command = bot_plays(game, 2)
        legal = game.rules.legal_commands(game.state, PERSON)
        return seat == 1 and isinstance(command, fp.FreeParking) and any(isinstance(c, fp.OfficerJones) for c in legal)

    return _search(b"chance-officer-jones", good)


@cache
def auction_seed() -> bytes:
    """A three-seat Monopoly game (the person in seat 0, who rolls first; two strategic bots) whose first roll lands
    the person on a property for sale: declined, it goes to an auction of all three, and the bots bid it up."""

    def good(seed: bytes) -> bool:
        game = seated("monopoly", seed, ("strategic", "strategic"))
        if game.state.turn_seat != PERSON:
            return False
        game.play(mono.Roll(), PERSON, 2)
        if game.state.offer is None or game.state.offer.kind != "buy":
            return False
        game.play(mono.Decline(), PERSON, 3)
        return game.state.auction is not None and isinstance(bot_plays(game, 4)[1], mono.Bid)

    return _search(b"chance-auction", good)
