"""Benchmark 1r: what ``--durability replicated`` costs — HTTP commands/s when each write waits for a replica (WAIT 1,
after a marker) against the same service with ``--durability durable`` on the same primary, in the same round.

The bench's own primary (``appendonly yes``, ``appendfsync always``: both settings need it) and one replica of it, on
loopback: the wait is one more round trip to the replica per pipeline, shared by the appends of that pipeline (group
commit), and the reads of events this worker did not append wait for a barrier of their own (docs/durability.md).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

from . import procs
from .http import _run, _short
from .report import Measure


def measures() -> dict[str, Measure]:
    return {
        "1r": Measure("1r", "HTTP commands/s with --durability replicated: each write on one replica (WAIT) (1 worker)",
                      "the same load with --durability durable on the same primary (appendfsync always)", 0.5, "min",
                      applies=False, note="reported (issue 35): the price of surviving a failover; a replica on loopback "
                                          "here, so it counts the waits, not a network's round trips"),
    }


def _server(port: int, folder: str, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
         "--appendfsync", "always", "--repl-diskless-sync-delay", "0", "--daemonize", "no", "--loglevel", "warning",
         "--dir", folder, *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server on port {port} did not start")


def _online(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
        s.sendall(b"INFO replication\r\n")
        time.sleep(0.02)
        return b"state=online" in s.recv(65536)


@contextlib.contextmanager
def primary_with_replica() -> Iterator[procs.Redis]:
    """A primary and one replica of it, in sync; yields the primary (its process for the CPU counts)."""
    if not procs.have_redis_server():
        raise RuntimeError("redis-server is not on PATH")
    folders = [tempfile.mkdtemp(prefix="fp-bench-replicated-") for _ in range(2)]
    started: list[subprocess.Popen] = []
    try:
        port = procs.free_port()
        started.append(_server(port, folders[0]))
        started.append(_server(procs.free_port(), folders[1], "--replicaof", "127.0.0.1", str(port)))
        deadline = time.monotonic() + 20
        while not _online(port):
            if time.monotonic() > deadline:
                raise RuntimeError("the bench's replica did not come online")
            time.sleep(0.05)
        yield procs.Redis(f"redis://127.0.0.1:{port}/0", started[0])
    finally:
        for proc in started:
            procs._stop(proc)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def run(args, ms: dict[str, Measure], log) -> None:
    with primary_with_replica() as redis:
        for rnd in range(args.rounds):
            seed = 3000 + rnd
            durable = _run(procs.service(1, redis.url, durability="durable"), "game", args, seed, redis=redis)
            log(f"  round {rnd + 1}: durable:    {_short(durable)}")
            replicated = _run(procs.service(1, redis.url, durability="replicated"), "game", args, seed, redis=redis)
            log(f"  round {rnd + 1}: replicated: {_short(replicated)}")
            ms["1r"].add(replicated["commands_per_s"] / durable["commands_per_s"],
                         f"{replicated['commands_per_s']:.0f} vs {durable['commands_per_s']:.0f} commands/s; p99 "
                         f"{replicated['p99_ms']:.1f} vs {durable['p99_ms']:.1f} ms")  # fmt: skip
