"""What a server bot sees, and so what it can be checked against: its own seat's information, its own randomness.

A bot is never handed the table as it is. ``world_of`` deals every place its seat cannot see afresh, from the seat's
own randomness: the other hands and both deck orders of the card game (``worlds.sample``), the Chance and Community
Chest orders of Monopoly, and — in every kind — the seed that rolls the dice, shuffles a deck back in or deals a
redeal. Two tables the seat sees alike give the same world for the same randomness, so the move a bot makes is a
function of the seat's information, the seat's randomness and the bot's parameters alone: ``replays verify``
re-derives it from the log after the game (``replays/bots.py``) and refuses a move that does not come out the same —
the move of a bot that read a hand, a deck or the dice it could not see.

The randomness is the seat's own (``seat_random``): from the game, the version and the seat — never shared between
seats, so whether another bot was asked first (which its hidden hand decides) changes nothing, and never from the
game's seed.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
from msgspec.structs import replace

from service.rules.resign import bot_legal

from . import worlds
from .turns import order

SIGHTED = 1
"""The version of how a bot is asked (``seat_taken`` records it as the bot's ``bot_version``): a log whose bots carry
none was played before bots were checkable, and is not re-derived."""


def seat_random(game_key: str, version: int, seat: int) -> random.Random:
    """The randomness of ``seat``'s bot at ``version`` of the game named ``game_key``: its own, and public."""
    return random.Random(f"bot:{game_key}:{version}:{seat}")


def _monopoly(s: Any, seat: int, rnd: random.Random) -> Any:
    """Both card decks in a new order (every seat sees only the cards drawn so far), and new dice. Each deck is
    sorted before it is shuffled: shuffled as it lies, the world's order would be a permutation of the true one by
    the seat's public randomness, and the true next card could be read back out of the world."""
    chance, chest = sorted(s.chance), sorted(s.chest)
    rnd.shuffle(chance)
    rnd.shuffle(chest)
    return replace(s, chance=tuple(chance), chest=tuple(chest), seed=rnd.randbytes(32), seeding="legacy", game_seed=None)


def _solitaire(s: Any, seat: int, rnd: random.Random) -> Any:
    """Every card is face up: only the next redeal's shuffle is hidden."""
    return replace(s, seed=rnd.randbytes(32), seeding="legacy", game_seed=None)


HIDDEN = {"free-parking": worlds.sample, "monopoly": _monopoly, "solitaire": _solitaire}
"""Each kind's places a seat cannot see, dealt afresh. A kind missing here hides nothing from its bots."""


def world_of(kind: str, s: Any, seat: int, rnd: random.Random) -> Any:
    """A table ``seat`` cannot tell from ``s``: every place it cannot see dealt afresh from ``rnd``, and a new seed."""
    deal = HIDDEN.get(kind)
    return deal(s, seat, rnd) if deal is not None else s


LIST_FIRST = frozenset({"free-parking"})
"""The kinds whose world costs far more to deal than a seat's commands to list: the card game deals every card its seat
has not seen afresh (two shuffles of up to 192 cards) where listing its commands is a few checks, and at most
moments of a table all seats but one have nothing to do. There a seat with nothing to do is passed over before a world
is dealt for it. A seat's commands are its own information (its view lists them): the list on the true table is the
list on every world of its seat's (tests/attack/test_bot_sight_attacks.py), so no choice changes and no randomness is
drawn otherwise, only the worlds nobody would use go undealt. Monopoly's world is two small decks, cheaper to deal than
its commands (trades, forms) to list twice: its seats are asked on their world alone."""


def decide(bot: Any, rules: Any, s: Any, seat: int, game_key: str) -> msgspec.Struct | None:
    """What ``bot`` at ``seat`` does now: asked on a world of its seat's own, with its own randomness."""
    if rules.KIND in LIST_FIRST and not bot_legal(rules, s, seat):
        return None
    rnd = seat_random(game_key, s.version, seat)
    world = world_of(rules.KIND, s, seat, random.Random(rnd.getrandbits(64)))
    if getattr(bot, "omniscient", False) or getattr(bot, "open_hands", False):
        world = s  # the league's ceilings (service/league/games.py), told the true table: no game may seat them
    legal = bot_legal(rules, world, seat)
    return bot.choose(world, seat, legal, rnd) if legal else None


def bot_move(rules: Any, s: Any, bots: dict[int, Any], game_key: str) -> tuple[int, msgspec.Struct] | None:
    """The first of the ``bots`` (by seat) that acts now, with its move; ``None`` when none of them does."""
    for seat in order(s):
        if seat in bots:
            command = decide(bots[seat], rules, s, seat, game_key)
            if command is not None:
                return seat, command
    return None
