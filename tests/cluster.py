"""A real three-master Redis Cluster of the tests' own, on free loopback ports.

Each master is ``redis-server --cluster-enabled yes`` in a directory of its own (no RDB, no AOF); ``redis-cli
--cluster create`` splits the 16384 slots over them, with no replicas — or, given ``replicas=1`` (the failover
drill), one replica per master. ``start_cluster`` waits until every node says ``cluster_state:ok`` (and every replica
is in sync). It never touches the shared Redis on 127.0.0.1:6379.

Without ``redis-server`` or ``redis-cli`` the tests that need the cluster are skipped with the reason — except
in CI (``FREE_PARKING_CI=1``), where that is a failure.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.servers import ours

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
MASTERS = 3
_running: Cluster | None = None  # the session's cluster (``redis_cluster`` in tests/conftest.py), once started


def _free(port: int) -> bool:
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


NODE_PORTS = range(22000, 22768)
"""Where cluster nodes listen: each node's bus port (port + 10000) then lies below the ephemeral ports too."""


def free_cluster_port() -> int:
    """A free loopback port of this worker's share whose cluster bus port (port + 10000) is free too."""
    tried = [port for port in NODE_PORTS if ours(port)]
    random.shuffle(tried)
    for port in tried:
        if _free(port) and _free(port + 10000):
            return port
    raise RuntimeError("no free pair of loopback ports (port, port + 10000) for a cluster node")


def _answer(port: int, command: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(command)
        time.sleep(0.01)
        return s.recv(65536)


class Cluster:
    """Three masters on loopback, each with ``replicas`` replicas; ``url`` names one of them (a cluster client finds
    the others). ``args`` are given every node (``--appendfsync always``…)."""

    def __init__(self, directory: Path, replicas: int = 0, args: tuple[str, ...] = ()) -> None:
        self.dir, self.replicas, self.args = directory, replicas, args
        self.ports: list[int] = []
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def _start_node(self, port: int | None = None) -> subprocess.Popen:
        """Start a node (on a free port, or again on ``port``, in its directory: its ``nodes.conf`` says who it was)."""
        for _ in range(10 if port is None else 50):
            node_port = port or free_cluster_port()
            node_dir = self.dir / f"node-{node_port}"
            node_dir.mkdir(parents=True, exist_ok=True)
            proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(node_port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", str(node_dir / f"nodes-{node_port}.conf"), "--cluster-node-timeout", "5000",
                 "--save", "", "--appendonly", "no", "--dir", str(node_dir), "--daemonize", "no",
                 "--loglevel", "warning", "--logfile", str(node_dir / "redis.log"), *self.args],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if _answer(node_port, b"PING\r\n").startswith(b"+PONG"):
                        if port is None:
                            self.ports.append(node_port)
                            self.procs.append(proc)
                        return proc
                except OSError:
                    pass
                time.sleep(0.02)
            proc.kill()  # the port was taken meanwhile, or the node would not start: another port (or a moment)
            proc.wait()
            time.sleep(0 if port is None else 0.1)
        raise RuntimeError(f"a cluster node would not start (see {self.dir}/node-*/redis.log)")

    def restart(self, port: int) -> None:
        """Start the node of ``port`` again (after ``kill``), as it was."""
        self.procs[self.ports.index(port)] = self._start_node(port)

    def kill(self, port: int) -> None:
        """SIGKILL the node of ``port``."""
        proc = self.procs[self.ports.index(port)]
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def start(self) -> Cluster:
        try:
            for _ in range(MASTERS * (1 + self.replicas)):
                self._start_node()
            created = subprocess.run(
                [REDIS_CLI, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                 "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if created.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout}\n{created.stderr}")
            deadline = time.monotonic() + 30
            while not self.ok(self.ports):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster did not reach cluster_state:ok within 30 s")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        return self

    def ok(self, ports: list[int]) -> bool:
        """Whether every node of ``ports`` says ``cluster_state:ok``, and every replica among them is in sync."""
        return all(b"cluster_state:ok" in _answer(p, b"CLUSTER INFO\r\n") for p in ports) and all(
            b"role:master" in info or b"master_link_status:up" in info
            for info in (_answer(p, b"INFO replication\r\n") for p in ports))  # fmt: skip

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.procs = []


def running() -> Cluster:
    """The session's cluster; a test reaches it through a fixture that requested ``redis_cluster``."""
    if _running is None:
        raise RuntimeError("no Redis Cluster is running: request the redis_cluster fixture first")
    return _running


def cluster_tools_found() -> bool:
    return REDIS_SERVER is not None and REDIS_CLI is not None


def need_cluster_tools() -> None:
    """Skip (or, in CI, fail) when the cluster cannot be started here."""
    missing = [name for name, path in (("redis-server", REDIS_SERVER), ("redis-cli", REDIS_CLI)) if path is None]
    if missing:
        reason = f"{' and '.join(missing)} not found: the Redis Cluster tests need both to start a cluster"
        if os.environ.get("FREE_PARKING_CI"):
            pytest.fail(f"CI must run the Redis Cluster tests: {reason}")
        pytest.skip(reason)
