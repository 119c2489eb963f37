"""Benchmarks 1, 2, 6, 8 and 9: the service under a bot load over HTTP, against its building blocks, in each round.

A round runs the load generator (a separate process: ``bench.loadgen``) for the same time against
- the service on a private redis-server, one worker (the project);
- the bare Sanic JSON endpoint, one worker, with the same request mix (views per command) as that run;
- the service on the embedded store, one worker (benchmark 8: the same load as on Redis);
- the service on Redis with two workers (benchmark 6);
- the service on Redis signing no receipts (benchmark 9: what signing every version costs);
- the service on Redis with every seat keyed, each command signed by its player (benchmark 9k: what checking the
  players' signatures costs);
- the service on Redis with the command limits on (benchmark 1l: what counting every command in the store costs);
then times the append script alone: ``EVALSHA`` called directly, one call at a time, for its own p99.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

import msgspec

from . import procs
from .report import Measure


COUNTED = {"rate_limits": "true", "games_per_minute": "0", "players_per_minute": "0", "seats_per_minute": "0",
           "commands_burst": "1000000000", "commands_per_minute": "1000000000",
           "address_commands_burst": "1000000000", "address_commands_per_minute": "1000000000"}
"""Benchmark 1l's service: every command charged to its player's and its address's buckets, none ever refused."""


def measures() -> dict[str, Measure]:
    nproc = os.cpu_count() or 1
    return {
        "1": Measure("1", "HTTP commands/s, bots in 64 concurrent games (1 worker, Redis)",
                     "bare Sanic JSON endpoint, same load generator and request mix", 0.5, "min"),
        "1c": Measure("1c", "the same by CPU time: bare Sanic's CPU a request ÷ the service's (worker + Redis)",
                      "— (not a target of the issue: the load's CPU cost, which a shared machine disturbs less)", 0.5, "min",
                      applies=False),
        "2": Measure("2", "command p99 latency under that load", "bare Sanic p99 + the append script's own p99 (EVALSHA)", 2.0, "max"),
        "6": Measure("6", "commands/s with 2 workers (Redis)", "1 worker", 1.6, "min", applies=nproc >= 4,
                     note=f"the target applies where nproc ≥ 4; this machine has nproc = {nproc}, shared with the load generator"),
        "6c": Measure("6c", "CPU a request with 2 workers (both workers + Redis)", "1 worker's (flat, ≤ 1.1×, means it scales)",
                      1.1, "max", applies=False,
                      note="reported (issue 19): the CPU a request costs does not grow with workers where this is near 1"),
        "8": Measure("8", "embedded store: HTTP commands/s (same load)", "the service on real Redis", 0.5, "min"),
        "9": Measure("9", "HTTP commands/s with signed receipts (1 worker, Redis)", "the same service signing nothing (--no-receipts)",
                     0.9, "min"),
        "1l": Measure("1l", "HTTP commands/s with every command counted against its player's and address's limits (1 worker, Redis)",
                      "the same load, --no-rate-limits", 0.9, "min",
                      note="the limits set far above the load (none refused) and games, players and seats not limited: the "
                           "load generator creates its games from one address (docs/limits.md)"),
        "9k": Measure("9k", "HTTP commands/s with every seat keyed, each command signed by its player (1 worker, Redis)",
                      "the same load, unkeyed seats (docs/signed-commands.md)", 0.85, "min"),
    }


def _run(server, mode: str, args, seed: int, get_ratio: float = 0.5, redis=None, keyed: bool = False) -> dict:
    """The load generator against ``server`` (a context manager yielding its URL and process); the result, with the
    server's CPU seconds per request (its processes', and the private redis-server's apart) over the whole run."""
    with server as (url, proc):
        samples: dict[str, tuple[float, float]] = {}

        def sample(marker: str) -> None:
            samples[marker] = (procs.cpu_seconds(proc.pid), _redis_cpu(redis))

        result = procs.loadgen(url, mode=mode, games=args.games, duration=args.duration, warmup=args.warmup, seed=seed,
                               get_ratio=get_ratio, on_marker=sample, keyed=keyed)
    if result["errors"]:
        raise RuntimeError(f"load generator errors ({mode}): {result['errors']}")
    (cpu0, rcpu0), (cpu1, rcpu1) = samples["window-start"], samples["window-end"]
    n = max(1, result["commands"] + result["views"] + result["other"])  # the requests of the window
    result["server_cpu_us"] = (cpu1 - cpu0) / n * 1e6
    result["redis_cpu_us"] = (rcpu1 - rcpu0) / n * 1e6
    return result


def _redis_cpu(redis) -> float:
    return procs.cpu_seconds(redis.proc.pid) if redis is not None and redis.own else 0.0


def run(args, ms: dict[str, Measure], log) -> None:
    with procs.redis_server(args.redis_url) as redis:
        for rnd in range(args.rounds):
            seed = 1000 + rnd
            game = _run(procs.service(1, redis.url), "game", args, seed, redis=redis)
            log(f"  round {rnd + 1}: service (Redis, 1 worker): {_short(game)}")
            bare = _run(procs.bare(1), "bare", args, seed, get_ratio=game["get_ratio"])
            log(f"  round {rnd + 1}: bare Sanic (1 worker):      {_short(bare)}")
            append_p99 = asyncio.run(evalsha_p99(redis.url, seconds=min(2.0, args.duration / 2)))
            log(f"  round {rnd + 1}: EVALSHA append alone: p99 {append_p99:.2f} ms")
            ms["1"].add(game["commands_per_s"] / bare["commands_per_s"],
                        f"{game['commands_per_s']:.0f} vs {bare['commands_per_s']:.0f} commands/s ({game['get_ratio']:.2f} views per command)")
            ms["2"].add(game["p99_ms"] / (bare["p99_ms"] + append_p99),
                        f"{game['p99_ms']:.1f} ms vs {bare['p99_ms']:.1f} + {append_p99:.2f} ms")
            ours = game["server_cpu_us"] + game["redis_cpu_us"]
            ms["1c"].add(bare["server_cpu_us"] / ours,
                         f"{game['server_cpu_us']:.0f} µs worker + {game['redis_cpu_us']:.0f} µs Redis vs {bare['server_cpu_us']:.0f} µs")
            if "8" in args.only:
                emb = _run(procs.service(1, None), "game", args, seed)
                log(f"  round {rnd + 1}: service (embedded):         {_short(emb)}")
                ms["8"].add(emb["commands_per_s"] / game["commands_per_s"],
                            f"{emb['commands_per_s']:.0f} vs {game['commands_per_s']:.0f} commands/s")
            if "9" in args.only:
                unsigned = _run(procs.service(1, redis.url, receipts="false"), "game", args, seed, redis=redis)
                log(f"  round {rnd + 1}: service, no receipts:      {_short(unsigned)}")
                ms["9"].add(game["commands_per_s"] / unsigned["commands_per_s"],
                            f"{game['commands_per_s']:.0f} vs {unsigned['commands_per_s']:.0f} commands/s")
            if "1l" in args.only:
                counted = _run(procs.service(1, redis.url, **COUNTED), "game", args, seed, redis=redis)
                log(f"  round {rnd + 1}: service, commands counted: {_short(counted)}")
                ms["1l"].add(counted["commands_per_s"] / game["commands_per_s"],
                             f"{counted['commands_per_s']:.0f} vs {game['commands_per_s']:.0f} commands/s; worker CPU a request "
                             f"{counted['server_cpu_us']:.0f} vs {game['server_cpu_us']:.0f} µs, Redis "
                             f"{counted['redis_cpu_us']:.0f} vs {game['redis_cpu_us']:.0f} µs")
            if "9k" in args.only:
                keyed = _run(procs.service(1, redis.url), "game", args, seed, redis=redis, keyed=True)
                log(f"  round {rnd + 1}: service, keyed seats:      {_short(keyed)}")
                ms["9k"].add(keyed["commands_per_s"] / game["commands_per_s"],
                             f"{keyed['commands_per_s']:.0f} vs {game['commands_per_s']:.0f} commands/s; worker CPU a request "
                             f"{keyed['server_cpu_us']:.0f} vs {game['server_cpu_us']:.0f} µs")
            if "6" in args.only or "6c" in args.only:
                two = _run(procs.service(2, redis.url), "game", args, seed, redis=redis)
                log(f"  round {rnd + 1}: service (Redis, 2 workers): {_short(two)}")
                ms["6"].add(two["commands_per_s"] / game["commands_per_s"],
                            f"{two['commands_per_s']:.0f} vs {game['commands_per_s']:.0f} commands/s")
                both = two["server_cpu_us"] + two["redis_cpu_us"]
                ms["6c"].add(both / ours, f"{two['server_cpu_us']:.0f} µs workers + {two['redis_cpu_us']:.0f} µs Redis vs "
                                          f"{game['server_cpu_us']:.0f} + {game['redis_cpu_us']:.0f} µs")


def _short(r: dict) -> str:
    return (f"{r['commands_per_s']:.0f} commands/s ({r['requests_per_s']:.0f} requests/s), p50 {r['p50_ms']:.1f} ms, "
            f"p99 {r['p99_ms']:.1f} ms; CPU a request: server {r['server_cpu_us']:.0f} µs, Redis {r['redis_cpu_us']:.0f} µs, "
            f"load generator {r['client_cpu_s'] / max(1, r['all_requests']) * 1e6:.0f} µs (its whole run)")


async def evalsha_p99(url: str, seconds: float = 2.0) -> float:
    """The append script's own p99 (ms): ``EVALSHA`` called directly, one call at a time, each appending a real
    command's events (a simulated game's batches, in order) to a game of its own namespace."""
    import redis.asyncio as aioredis

    from service.events.entries import encode_entry
    from service.store.keys import Keys
    from service.store.redis_store import APPEND_LUA
    from service.store.store import AppendRequest, append_args
    from service.sim.games import new_game, play

    bots = ["random"] * 4
    sim = new_game("free-parking", 4, bytes(range(32)), "g_bench00000000", bots)
    for _ in zip(range(300), play(sim, bots, random.Random(7)), strict=False):
        pass
    batches: list[list] = []
    for env in sim.envelopes:
        if env.command != msgspec.Raw(b"null") or not batches:
            batches.append([])
        batches[-1].append(env)
    ns = procs.namespace()
    keys = Keys(ns)
    r = aioredis.from_url(url)
    try:
        sha = await r.script_load(APPEND_LUA)
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        n = 0
        encoded = [([encode_entry(e) for e in batch], batch[-1].hash) for batch in batches]
        while time.perf_counter() < deadline:
            game_id = f"g_{n:016x}"
            n += 1
            version = 0
            for entries, head in encoded:
                req = AppendRequest(game_id=game_id, expected_version=version, entries=entries, head=head, status="playing",
                                    created_at=1, due_at=None)
                k, argv = append_args(keys, req)
                t0 = time.perf_counter()
                await r.evalsha(sha, len(k), *k, *argv)
                latencies.append(time.perf_counter() - t0)
                version += len(entries)
                if time.perf_counter() >= deadline:
                    break
        latencies.sort()
        return latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))] * 1000
    finally:
        batch_keys = [k async for k in r.scan_iter(match=f"{ns}:*", count=1000)]
        for i in range(0, len(batch_keys), 500):
            await r.delete(*batch_keys[i : i + 500])
        await r.aclose()
