"""Processes the benchmarks start and always stop: a private redis-server, the service, the bare endpoint, the
load generator. Every server binds a free loopback port; nothing touches a Redis the benchmarks did not start
(unless ``--redis-url`` names one, and then only keys under a namespace of their own, deleted afterwards)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, timeout: float = 10) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class Redis:
    """A redis-server of our own (``url``), or one named by ``--redis-url`` (``own`` is False)."""

    def __init__(self, url: str, proc: subprocess.Popen | None) -> None:
        self.url, self.proc = url, proc

    @property
    def own(self) -> bool:
        return self.proc is not None


def have_redis_server() -> bool:
    return shutil.which("redis-server") is not None


@contextlib.contextmanager
def redis_server(external_url: str | None = None) -> Iterator[Redis]:
    """A private redis-server on a free loopback port (no persistence; ``DEBUG RELOAD`` allowed from loopback, its
    RDB in a folder of its own: a restart in place), killed afterwards."""
    if external_url is not None:
        yield Redis(external_url, None)
        return
    if not have_redis_server():
        raise RuntimeError("redis-server is not on PATH (install it, or pass --redis-url)")
    port = free_port()
    folder = tempfile.mkdtemp(prefix="fp-bench-redis-")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning", "--dir", folder,
         "--enable-debug-command", "local"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {port} did not start")
            time.sleep(0.05)
        yield Redis(f"redis://127.0.0.1:{port}/0", proc)
    finally:
        _stop(proc)
        shutil.rmtree(folder, ignore_errors=True)


def namespace() -> str:
    return "bench" + uuid.uuid4().hex[:10]


def drop_namespace_sync(url: str, ns: str) -> None:
    import redis

    r = redis.Redis.from_url(url)
    try:
        batch = []
        for key in r.scan_iter(match=f"{ns}:*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                r.delete(*batch)
                batch = []
        if batch:
            r.delete(*batch)
    finally:
        r.close()


def wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server on port {port} did not answer /healthz within {timeout:.0f}s")


UNLIMITED = {"rate_limits": "false", "idle_close_ms": "0", "human_pace_ms": "0", "human_chance_ms": "0"}
"""What every benchmarked service runs with: the load generator creates its games from one address, as fast as it can,
and no idle close (nothing the benchmarks measure should be closed from under them, or pay for its scheduling)."""


@contextlib.contextmanager
def service(workers: int = 1, redis_url: str | None = None, **settings: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``python -m service serve`` on a free port: on ``redis_url`` under a namespace of its own (its keys deleted
    afterwards), else on the embedded store in a temporary folder. Yields its base URL and process."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}
    ns = namespace()
    env.update({f"FREE_PARKING_{k.upper()}": v for k, v in {**UNLIMITED, **settings}.items()})
    env["FREE_PARKING_NAMESPACE"] = ns
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="fp-bench-") as tmp:
        if redis_url:
            env["REDIS_URL"] = redis_url
        cmd = [PY, "-m", "service", "serve", "--port", str(port), "--workers", str(workers), "--data", str(Path(tmp) / "data")]
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_healthy(port, proc)
            yield f"http://127.0.0.1:{port}", proc
        except BaseException:
            if proc.poll() is not None and proc.stderr is not None:
                sys.stderr.write(proc.stderr.read().decode(errors="replace")[-3000:])
            raise
        finally:
            _stop(proc)
            if redis_url:
                drop_namespace_sync(redis_url, ns)


@contextlib.contextmanager
def bare(workers: int = 1) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([PY, "-m", "bench.bare", "--port", str(port), "--workers", str(workers)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        _stop(proc)


def loadgen(url: str, *, mode: str, games: int, duration: float, warmup: float, seed: int, get_ratio: float = 0.5,
            seats: int = 4, timeout: float = 120, on_marker=None, keyed: bool = False) -> dict:
    """Run the load generator in its own process; its result. ``on_marker(name)`` is called at its markers
    (``window-start``, ``window-end``: the measured window), e.g. to sample the servers' CPU time."""
    cmd = [PY, "-m", "bench.loadgen", "--url", url, "--mode", mode, "--games", str(games), "--seats", str(seats),
           "--duration", str(duration), "--warmup", str(warmup), "--seed", str(seed), "--get-ratio", f"{get_ratio:.4f}",
           *(["--keyed"] if keyed else [])]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        last = b""
        assert proc.stdout is not None
        for line in proc.stdout:
            text = line.strip()
            if text in (b"window-start", b"window-end"):
                if on_marker is not None:
                    on_marker(text.decode())
            elif text:
                last = text
        stderr = proc.stderr.read() if proc.stderr is not None else b""
        proc.wait()
    finally:
        killer.cancel()
    if proc.returncode != 0:
        raise RuntimeError(f"the load generator failed ({proc.returncode}): {stderr.decode(errors='replace')[-2000:]}")
    return msgspec.json.decode(last)


def rss_of_tree(pid: int) -> int:
    """Resident bytes of a process and its children (a Sanic main process and its workers)."""
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def _children(pid: int) -> list[int]:
    out = []
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for k in kids:
        out += [int(k), *_children(int(k))]
    return out


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its children, so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / ticks
