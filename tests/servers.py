"""Real servers of a test's own, on free loopback ports: ``redis-server`` processes and the service itself.

``Server`` is one ``redis-server`` in a directory of the test's (``--dir``), killed with ``SIGKILL`` and started
again on the same directory — and, with ``restart()``, the same port, so a running service finds it again.
``Service`` is ``python -m service serve`` in a process of its own, with its output kept in a file for when a
test fails. Neither ever touches the shared Redis on 127.0.0.1:6379.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REDIS_SERVER = shutil.which("redis-server")
ALWAYS = ("--appendonly", "yes", "--appendfsync", "always")
EVERYSEC = ("--appendonly", "yes", "--appendfsync", "everysec")


def xdist_share() -> tuple[int, int]:
    """This pytest-xdist worker's index and how many workers there are ((0, 1) in one process). A worker picks only
    ports ≡ index (mod count): a port is free when picked and bound by a server a moment later, so two workers
    picking at once could both take it — and one test would then talk to the other's server."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "") or 1)
    index = int(name[2:]) if name.startswith("gw") and name[2:].isdecimal() else 0
    return index % count, count


def ours(port: int) -> bool:
    """Whether ``port`` is among this worker's share (``xdist_share``)."""
    index, count = xdist_share()
    return port % count == index


SERVER_PORTS = range(10000, 18000)
"""Where ``free_port`` looks: below the ephemeral ports (32768 and up), so no client's connection can take a port
between its pick and its server's bind, and clear of the ranges tests keep for themselves (18100-18900)."""


def free_port() -> int:
    """A free loopback port of this worker's share. Not a port the kernel hands out for port 0: it gives odd ones
    first, so a worker whose share is the even ports (two workers, four, …) would find none."""
    return free_port_in(SERVER_PORTS)


def first_ephemeral_port() -> int:
    """The first port the kernel may hand an outgoing connection (32768 where it cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_in(ports: range) -> int:
    """A free loopback port of ``ports`` (tests given a range of their own) and of this worker's share, tried in a
    random order. A range reaching the ephemeral ports is refused: a client's connection could take the port between
    this pick and the server's bind (a busy CI run saw "Address already in use" so)."""
    if ports.stop > first_ephemeral_port():
        raise ValueError(f"ports {ports.start}-{ports.stop - 1} reach the ephemeral ports: pick a range below them")
    tried = [port for port in ports if ours(port)]
    random.shuffle(tried)
    for port in tried:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def wait_healthy(port: int, proc: subprocess.Popen, seconds: float = 90) -> None:
    """Until ``GET /healthz`` answers 200 on ``port``; fails the test if ``proc`` dies or ``seconds`` pass (a bound only
    to fail rather than hang: a start takes 2 s of CPU, and 20 s of wall time with three starting on a loaded host)."""
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    pytest.fail("the service did not start")


class Server:
    """One redis-server of this test's own, in a directory of its own."""

    def __init__(self, directory: Path, *args: str) -> None:
        self.dir, self.args = directory, args
        self.proc: subprocess.Popen | None = None
        self.port = 0
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, port: int | None = None) -> Server:
        """Start on a free port (or on ``port``: then only that one is tried, for a while)."""
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed")
        for _ in range(5 if port is None else 50):
            self.port = port or free_port()
            self.proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                 "--save", "", "--daemonize", "no", "--loglevel", "warning", *self.args],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                        s.sendall(b"PING\r\n")
                        if s.recv(64).startswith(b"+PONG"):
                            return self
                except OSError:
                    pass
                time.sleep(0.02)
            self.stop()  # the port was taken meanwhile, or the server would not start: try again
            if port is not None:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server would not start in {self.dir} with {self.args}")

    def restart(self) -> Server:
        """Start again on the same directory and the same port, where clients already look for it."""
        return self.start(self.port)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last fsync, no goodbye."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        self.kill()


@pytest.fixture
def servers(tmp_path):
    """``servers(*redis_args, name=...)`` starts a redis-server in ``tmp_path/name``; all are killed at the end."""
    started: list[Server] = []

    def start(*args: str, name: str = "redis") -> Server:
        server = Server(tmp_path / name, *args).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


class Service:
    """``python -m service serve`` on a free port, in a process of its own (its workers are its children).

    ``settings`` are ``Settings`` fields (``runner_interval_ms=100``, ``projector=False``…), passed through the
    environment as the service's own workers read them.
    """

    def __init__(self, directory: Path, redis_url: str | None, *, workers: int = 1, **settings: object) -> None:
        from service.api.settings import Settings

        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.settings = Settings(data_dir=directory / "data", redis_url=redis_url, workers=workers, **settings)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log = directory / "service.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, seconds: float = 120) -> Service:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}
        env.update(self.settings.to_env())
        self.port = free_port()
        logged = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "service", "serve", "--port", str(self.port), "--workers", str(self.settings.workers),
                 "--data", str(self.settings.data_dir)],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            wait_healthy(self.port, self.proc, seconds)
            self._wait_every_worker_ready(logged, seconds)
        except BaseException:
            print(self.tail())
            raise
        return self

    def _wait_every_worker_ready(self, logged: int, seconds: float) -> None:
        """Until every worker has said it is ready: ``/healthz`` answers once one has. A service stopped before the
        others are up stays in Sanic's wait for their startup (its main process ignores SIGTERM there until its
        threshold passes), so each early stop cost a test 15 seconds."""
        deadline = time.time() + seconds
        while time.time() < deadline and self.proc is not None and self.proc.poll() is None:
            with open(self.log, "rb") as f:
                f.seek(logged)
                if f.read().count(b"Worker ready") >= self.settings.workers:
                    return
            time.sleep(0.05)
        pytest.fail(f"not every one of the {self.settings.workers} workers started")

    def workers(self) -> dict[str, int]:
        """The Sanic worker processes now alive: name (``Sanic-Server-0-0``…) → pid."""
        assert self.proc is not None
        out = {}
        for pid in _children(self.proc.pid):
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            for item in environ:
                if item.startswith(b"SANIC_WORKER_NAME="):
                    out[item.split(b"=", 1)[1].decode()] = pid
        return out

    def worker_serving(self, client_port: int) -> int | None:
        """The pid of the worker holding the server side of the connection a client made from ``client_port``
        (read off ``/proc``: the socket's inode in ``/proc/net/tcp``, then the worker whose descriptors hold it)."""
        inode = _socket_inode(("127.0.0.1", self.port), ("127.0.0.1", client_port))
        if inode is None:
            return None
        for pid in self.workers().values():
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                        return pid
                except OSError:
                    continue
        return None

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None:
            return
        children = _children(self.proc.pid)
        workers = list(self.workers().values()) if self.settings.workers > 1 else []
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15 if not workers else self._after_workers(workers))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pid in children:  # a worker the main process left behind
            if b"multiprocessing" in _cmdline(pid):
                _kill(pid)
        self.proc = None


    @staticmethod
    def _after_workers(workers: list[int]) -> float:
        """How long the main process may take to exit once its workers have shut down (waited on here, up to 15
        seconds): a second, for it has nothing of its own left to do. SIGTERM meeting it still in Sanic's wait for
        its workers' startup leaves it in that wait, which ends only at its threshold (30 seconds) — that stop is a
        kill, not a 15-second wait."""
        deadline = time.time() + 15
        while time.time() < deadline and any(Path(f"/proc/{pid}").exists() and _running(pid) for pid in workers):
            time.sleep(0.05)
        return 1.0


def _running(pid: int) -> bool:
    """Not a zombie: a worker that exited stays in /proc until its parent reaps it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _socket_inode(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The inode of the IPv4 TCP socket from ``local`` to ``remote``, from ``/proc/net/tcp``."""

    def hexed(address: tuple[str, int]) -> str:
        packed = socket.inet_aton(address[0])[::-1].hex().upper()  # the kernel writes the address little-endian
        return f"{packed}:{address[1]:04X}"

    wanted = (hexed(local), hexed(remote))
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if (fields[1], fields[2]) == wanted:
            return int(fields[9])
    return None


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
