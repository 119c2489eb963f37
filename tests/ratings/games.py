"""Rated games for the ratings tests: bot games with a drawn seed (``seeding: combined``), whose seats hold
registered players (``r0``…``r5``), greedy and expert bots and now and then a guest, played in memory once per
session. Game ``i`` is always the same game; ``start_at`` spreads their finishing times, so the order games finished
is not the order of their ids."""

from __future__ import annotations

import random
from dataclasses import dataclass

from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.envelope import Envelope
from service.rules.engine import Game, rules_for
from service.sim.games import START_AT, Simulation, play

PLAYERS = [f"r{i}" for i in range(6)]


@dataclass
class Rated:
    game_id: str
    kind: str
    envelopes: list[Envelope]
    seed: bytes


def seating(i: int, n: int, rnd: random.Random) -> tuple[list[Player], list[str]]:
    """The seats' players and the bot that plays each (a person's seat is played by a greedy bot)."""
    people = rnd.sample(PLAYERS, rnd.randint(0, min(n, 3)))
    players, bots = [], []
    for seat in range(n):
        if seat < len(people):
            players.append(Player(name=f"Player {people[seat]}", player_id=people[seat]))
            bots.append("greedy")
        elif rnd.random() < 0.15:
            players.append(Player(name="a guest", player_id=f"guest-{i}-{seat}", guest=True))
            bots.append("greedy")
        else:
            kind = rnd.choice(["greedy", "expert"]) if rnd.random() < 0.3 else "greedy"
            players.append(Player(name=f"{kind.title()} {seat}", player_id=f"bot-{i}-{seat}", bot=kind))
            bots.append(kind)
    order = list(range(n))
    rnd.shuffle(order)
    return [players[k] for k in order], [bots[k] for k in order]


def play_one(i: int, seeding: str = "combined") -> Rated:
    rnd = random.Random(f"rated-{i}")
    n = 2 + i % 3
    kind = "free-parking"
    game_id = f"rated-{i:04d}"
    seed = rnd.randbytes(32)
    rules = rules_for(kind)
    sim = Simulation(Game.new(kind, game_id, rules.CONFIG(seats=n), seed), at=START_AT + rnd.randrange(0, 10**9, 1000))
    sim.send(Create(seeding=seeding), None)
    players, bots = seating(i, n, rnd)
    for player in players:
        sim.send(TakeSeat(player=player, client_seed=rnd.randbytes(32).hex()), None)
    for _ in play(sim, bots, rnd, timeouts=0.05):
        pass
    return Rated(game_id, kind, sim.envelopes, seed)


_shared: list[Rated] = []


def rated_games(count: int) -> list[Rated]:
    """The first ``count`` rated games, played once per session."""
    _shared.extend(play_one(i) for i in range(len(_shared), count))  # a few seconds: a process pool costs more
    return _shared[:count]
