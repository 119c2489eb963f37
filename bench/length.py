"""Benchmark 3: the cost of one command at game length 10,000 events against the same command at length 10.

Four seats that never score keep a game going for ever (each turn: discard, end the turn), so a log of 10,000
events is a real game's. It is written through the store's append path, and short games beside it. Then, in one
``Games`` (the service's per-worker cache, as a worker holds it), commands are timed alternately on the long game
and on the short ones — ``Games.execute`` plus the answer's view, i.e. the server's work for a command without the
HTTP layer. The point: the state is never refolded, so a command's cost does not grow with the log.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from service.api.games import Games
from service.events import free_parking as ev
from service.store.embedded import EmbeddedStore
from service.store.redis_store import RedisStore
from service.store.store import Store

from . import games as g
from . import procs
from .report import Measure

LONG = 10_000
SHORT = 10


def measures() -> dict[str, Measure]:
    return {
        "3": Measure("3", "one command at game length 10,000 events (Redis)", "the same command at length 10", 1.2, "max"),
        "3e": Measure("3e", "the same on the embedded store", "the same command at length 10", 1.2, "max"),
    }


def never_score(game: Any, seat: int, legal: list) -> Any:
    """Discard, then end the turn; answer whatever is asked first (a pending wait)."""
    for kind in (ev.Discard, ev.EndTurn, ev.Accept):
        for c in legal:
            if isinstance(c, kind):
                return c
    return legal[0]


async def measure(store: Store, rounds: int, per_round: int, log) -> list[tuple[float, str]]:
    long_log = g.simulate(10**6, max_events=LONG, choose=never_score)
    await g.write(store, long_log)
    games = Games(store)
    long_game = await games.load(long_log.game_id)  # folded once, as a worker's cache would
    out = []
    short_n = 2 * 10**6
    for rnd in range(rounds):
        shorts = []
        for _ in range(per_round // 5 + 1):
            short_n += 1
            sl = g.simulate(short_n, max_events=SHORT, choose=never_score)
            await g.write(store, sl)
            shorts.append((await games.load(sl.game_id)).game_id)
        t_long: dict[tuple[str, int], list[float]] = {}
        t_short: dict[tuple[str, int], list[float]] = {}
        lengths_short = []
        for i in range(per_round):
            # alternate, so that both see the same machine
            kind, t = await _one(games, long_log.game_id)
            t_long.setdefault(kind, []).append(t)
            sid = shorts[i // 5]
            lengths_short.append((await games.load(sid)).version)
            kind, t = await _one(games, sid)
            t_short.setdefault(kind, []).append(t)
        ratio, shared = same_commands(t_long, t_short)
        ml = statistics.median(t for ts in t_long.values() for t in ts)
        msh = statistics.median(t for ts in t_short.values() for t in ts)
        out.append((ratio, f"{ml * 1e6:.0f} µs at {long_game.version} events vs {msh * 1e6:.0f} µs at "
                           f"{min(lengths_short)}–{max(lengths_short)} (medians of {per_round}; {shared})"))
        log(f"  round {rnd + 1}: {out[-1][1]}")
    return out


def same_commands(t_long: dict[tuple[str, int], list[float]], t_short: dict[tuple[str, int], list[float]]) -> tuple[float, str]:
    """The long game's cost over the short games', command for command: a discard (one event) and an end of turn
    (three or four: the draw, the next turn) cost apart, and the two sides meet them in other proportions, so the
    medians of all commands would compare the mix, not the length. Each kind met on both sides gives the ratio of
    its medians; they are weighted by how often the kind was timed (a geometric mean)."""
    kinds = sorted(t_long.keys() & t_short.keys())
    if not kinds:
        raise RuntimeError(f"no command of one kind timed at both lengths: {sorted(t_long)} vs {sorted(t_short)}")
    weights = {k: min(len(t_long[k]), len(t_short[k])) for k in kinds}
    total = sum(weights.values())
    log_ratio = sum(w * math.log(statistics.median(t_long[k]) / statistics.median(t_short[k])) for k, w in weights.items())
    shown = ", ".join(f"{name} ({n} event{'s' if n != 1 else ''}) ×{weights[(name, n)]}" for name, n in kinds)
    return math.exp(log_ratio / total), f"compared kind by kind: {shown}"


async def _one(games: Games, game_id: str) -> tuple[tuple[str, int], float]:
    """One command's time, and its kind: the command's name and how many events it made."""
    game = await games.load(game_id)
    s = game.state
    seat = s.pending.seat if s.pending is not None else s.turn_seat
    command = never_score(game, seat, game.rules.legal_commands(s, seat))
    before = game.version
    t0 = time.perf_counter()
    executed = await games.execute(game_id, command, lambda _: seat, actor_key=f"seat:{seat}", command_id=None, expected_version=game.version)
    executed.game.view(seat)
    elapsed = time.perf_counter() - t0
    return (type(command).__name__, executed.game.version - before), elapsed


def run(args, ms: dict[str, Measure], log) -> None:
    per_round = 40 if args.quick else 100
    if "3" in args.only:
        with procs.redis_server(args.redis_url) as redis:
            ns = procs.namespace()

            async def on_redis() -> list:
                store = RedisStore.from_url(redis.url, namespace=ns)
                try:
                    return await measure(store, args.rounds, per_round, log)
                finally:
                    await store.close()

            try:
                for ratio, detail in asyncio.run(on_redis()):
                    ms["3"].add(ratio, detail)
            finally:
                procs.drop_namespace_sync(redis.url, ns)
    if "3e" in args.only:
        with tempfile.TemporaryDirectory(prefix="fp-bench-") as tmp:

            async def embedded() -> list:
                store = await EmbeddedStore(Path(tmp), namespace="bench").open()
                try:
                    return await measure(store, args.rounds, per_round, log)
                finally:
                    await store.close()

            for ratio, detail in asyncio.run(embedded()):
                ms["3e"].add(ratio, detail)
