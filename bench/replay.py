"""Benchmark 4: ``replays verify`` (chain, secrets, every command re-decided and re-hashed) against folding the same
logs with ``evolve`` alone. Both start from parsed exports (``service.events.export.load``) of whole bot games."""

from __future__ import annotations

import time

from replays.bundle import verify_logs
from replays.verify import verify
from service.events.export import dump, load
from service.rules.engine import Game, export_header

from . import games as g
from .report import Measure


def measures() -> dict[str, Measure]:
    return {
        "4": Measure("4", "`replays verify` events/s (re-decide, re-hash)", "folding the same logs with `evolve` alone", 0.5, "min"),
        "4b": Measure("4b", "`replays verify` of expert-vs-greedy games with every bot move re-derived from its seat",
                      "the same verify without the bots' check (re-decide, re-hash)", 1.0, "min", applies=False,
                      note="reported (issue 30: a game's check is seconds, not minutes); the rounds give seconds a game"),
        "4j": Measure("4j", "`replays verify --jobs 2`: the same logs in two processes (a bundle's tables)",
                      "the same logs in one", 1.6, "min", applies=False,
                      note="no target in the issue (its scaling is reported); 1.6× is what two free cores would give"),
    }


def exports(n_games: int) -> list[tuple]:
    out = []
    for n in range(n_games):
        log = g.simulate(3 * 10**6 + n, keep_envelopes=True)
        header = export_header(log.game, with_seed=True)
        out.append(load(b"".join(dump(header, log.envelopes))))
    return out


def checkable_exports(n_games: int) -> list[tuple]:
    """Expert-vs-greedy games whose bots' seats record their version, as the service seats them: ``verify``
    re-derives every bot move (the expert's search, again, for each of its decisions)."""
    import random

    from service.sim.games import new_game, play

    out = []
    for n in range(n_games):
        sim = new_game("free-parking", 2, bytes([n + 1]) * 32, f"g_bench_bots_{n}", ["expert", "greedy"], checkable=True)
        for _ in play(sim, ["expert", "greedy"], random.Random(n)):
            pass
        out.append(load(b"".join(dump(export_header(sim.game, with_seed=True), sim.envelopes))))
    return out


def bots_check(args, ms: dict[str, Measure], log) -> None:
    """4b: a verify that re-derives every bot move against one that does not (the bots' check switched off)."""
    import replays.verify as rv

    logs = checkable_exports(2 if args.quick else 4)
    for rnd in range(args.rounds):
        t0 = time.perf_counter()
        said = [verify(header, envelopes) for header, envelopes in logs]
        with_bots = time.perf_counter() - t0
        if not all(v.ok and v.bots.endswith("re-derived from their seats' own views") for v in said):
            raise RuntimeError(said[0].summary())
        check, rv._check_bots = rv._check_bots, lambda *a: None
        try:
            t0 = time.perf_counter()
            for header, envelopes in logs:
                verify(header, envelopes)
            without = time.perf_counter() - t0
        finally:
            rv._check_bots = check
        ms["4b"].add(with_bots / without, f"{with_bots / len(logs):.2f} s a game vs {without / len(logs):.3f} s ({said[0].bots})")
        log(f"  round {rnd + 1}: verify with the bots re-derived {with_bots / len(logs):.2f} s a game, without {without / len(logs):.3f} s")


def fold(header, envelopes) -> Game:
    game = Game.new(header.kind, header.game_id, g._config_from(header), bytes.fromhex(header.seed), header.rules_version)
    game.fold(envelopes)
    return game


def run(args, ms: dict[str, Measure], log) -> None:
    logs = exports(6 if args.quick else 12)
    events = sum(len(e) for _, e in logs)
    for rnd in range(args.rounds):
        # best of three each, alternating: the fastest run is the one least disturbed by the machine's other work
        t_verify = t_fold = float("inf")
        for k in range(3):
            for which in ((0, 1) if (rnd + k) % 2 == 0 else (1, 0)):
                t0 = time.perf_counter()
                if which == 0:
                    for header, envelopes in logs:
                        verdict = verify(header, envelopes)
                        if not verdict.ok or not verdict.redecided:
                            raise RuntimeError(verdict.summary())
                    t_verify = min(t_verify, time.perf_counter() - t0)
                else:
                    for header, envelopes in logs:
                        fold(header, envelopes)
                    t_fold = min(t_fold, time.perf_counter() - t0)
        t_jobs = float("inf")
        for _ in range(3):  # best of three, as above; each run starts its processes anew
            t0 = time.perf_counter()
            if not all(v.ok for v in verify_logs(logs, jobs=2)):
                raise RuntimeError("a log failed to verify in the processes")
            t_jobs = min(t_jobs, time.perf_counter() - t0)
        ms["4j"].add(t_verify / t_jobs, f"{events / t_jobs:,.0f} vs {events / t_verify:,.0f} events/s")
        ms["4"].add(t_fold / t_verify, f"{events / t_verify:,.0f} vs {events / t_fold:,.0f} events/s ({len(logs)} games, {events:,} events)")
        log(f"  round {rnd + 1}: verify {events / t_verify:,.0f} events/s, fold {events / t_fold:,.0f} events/s (best of 3 each)")
