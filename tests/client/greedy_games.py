"""Seeded bot games played in memory, and every moment of them at which the greedy bot's player has a move: the
moments the bot kit asks a bot. Each moment carries the player's view as the API sends it and what the server's own
bot chooses there, asked as the server asks it (``service.bots.sight.decide``: on a world of its seat's own, with
its own randomness). ``tests/client/test_examples.py`` puts each example bot to the same moments."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from free_parking_client.models import View, view_of
from service.bots import bot, params_of
from service.bots.sight import decide
from service.rules.resign import playing_on
from service.sim.games import new_game, play

GREEDY = {"free-parking": "greedy", "monopoly": "strategic", "solitaire": "greedy"}
"""Each kind's greedy bot: Monopoly has none, and its weakest bot that is not random is ``strategic``."""


@dataclass
class Moment:
    game: int
    player: Any
    """Who is asked (a bot seated once, wherever a trade of places moved it)."""
    view: View
    server: msgspec.Struct | None
    """The server's bot's choice; ``None``: it lets the moment pass."""
    pending: str | None
    """What the game waits on (``None``: nothing), for the count of decisions seen."""


def table(kind: str, i: int) -> tuple[int, list[str], dict | None]:
    """Game ``i``'s seats, bots (the greedy one at one seat or more) and options: tables of every size, against the
    random bot and the greedy one; some card games in tournament mode, some Monopoly games stopped at a round."""
    rnd = random.Random(f"examples:{kind}:{i}")
    if kind == "solitaire":
        return 1, ["greedy"], None
    if kind == "free-parking":
        seats = rnd.randint(2, 6)
        options = {"mode": "tournament"} if i % 5 == 4 else None
        others = ["greedy", "random"]
    else:
        seats = rnd.randint(2, 4)
        options = {"max_rounds": rnd.choice([20, 40])} if i % 2 else None
        others = ["strategic", "random"]
    bots = [GREEDY[kind]] + [rnd.choice(others) for _ in range(seats - 1)]
    rnd.shuffle(bots)
    return seats, bots, options


def moments(kind: str, games: list[int]) -> Iterator[Moment]:
    """Every moment of the seeded games ``games`` of ``kind`` at which a greedy player has a move (``legal`` less
    resign), in the order of each game."""
    name = GREEDY[kind]
    for i in games:
        seats, bots, options = table(kind, i)
        sim = new_game(kind, seats, hashlib.sha256(b"examples:%s:%d" % (kind.encode(), i)).digest(), f"g_ex{i}", bots,
                       options=options)
        rules = sim.game.rules
        players = {st.player: bot(kind, b, params_of(kind, b)) for st, b in zip(sim.game.state.seats, bots)
                   if b == name}  # fmt: skip
        for s in _states(sim, bots, random.Random(i)):
            for seat, st in enumerate(s.seats):
                if st.player not in players or not playing_on(rules.legal_commands(s, seat)):
                    continue
                data = msgspec.json.decode(msgspec.json.encode(sim.game.view(seat)))
                pending = getattr(getattr(s, "pending", None), "kind", None)
                yield Moment(i, st.player, view_of(data), decide(players[st.player], rules, s, seat, sim.game.game_id),
                             pending)


def _states(sim: Any, bots: list[str], rnd: random.Random) -> Iterator[Any]:
    """The game's state at its start and after each command (a command's events come as one batch)."""
    yield sim.game.state
    version = sim.game.state.version
    for _ in play(sim, bots, rnd):
        if sim.game.state.version != version:
            version = sim.game.state.version
            yield sim.game.state
