"""Benchmark 10: how long the card game's expert bot takes to choose a move, at its default budget.

Seeded games of an expert against greedy bots (heads-up and four seats) are played in memory; every decision the
expert searches (two candidates or more: one is played at once) is timed. The target is a server-seated bot's
decision p99 within 50 ms on this machine — the worker chooses it in a thread of its own (``service/api/runner.py``),
so the event loop keeps answering meanwhile; this measures how long the table waits.
"""

from __future__ import annotations

import random
import statistics
import time

import service.rules.free_parking as rules
from service.bots import next_move
from service.bots.expert import NODES, ExpertBot, candidates
from service.bots.free_parking import GreedyBot
from service.sim.games import new_game

from .report import Measure


def measures() -> dict[str, Measure]:
    return {"10": Measure("10", f"the expert bot's decision p99 ({NODES:,} nodes)", "—", 50.0, "max", unit="ms")}


class Timed(ExpertBot):
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def choose(self, s, seat, legal, rnd):
        searched = len(candidates(s, seat, legal)) > 1
        t0 = time.perf_counter()
        out = super().choose(s, seat, legal, rnd)
        if searched:
            self.times.append(time.perf_counter() - t0)
        return out


def decisions(games: int, first: int) -> list[float]:
    expert = Timed()
    for g in range(first, first + games):
        seats = 2 if g % 2 == 0 else 4
        sim = new_game("free-parking", seats, g.to_bytes(32, "big"), f"bench-{g}", ["expert"] + ["greedy"] * (seats - 1))
        players = [expert] + [GreedyBot()] * (seats - 1)
        rnd = random.Random(g)
        while sim.game.state.phase != "finished":
            seat, command = next_move(rules, sim.game.state, players, rnd)
            sim.send(command, seat)
    return expert.times


def run(args, ms: dict[str, Measure], log) -> None:
    games = 4 if args.quick else 12
    for r in range(args.rounds):
        times = sorted(decisions(games, 1000 * r))
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
        detail = (f"p99 {p99:.1f} ms, median {statistics.median(times) * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms "
                  f"over {len(times)} searched decisions in {games} games")
        ms["10"].add(p99, detail)
        log(f"  round {r + 1}: {detail}")
