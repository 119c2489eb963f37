"""A replicated Redis of the tests' own, on free loopback ports: a primary, its replica and one Sentinel
(``redis-server sentinel.conf --sentinel``: the same binary), with what a failover drill does to them.

``Replicated.start()`` returns once the replica is online and the Sentinel follows both. ``hold_replica()`` stops the
replica (``SIGSTOP``) and cuts its link (``CLIENT KILL TYPE replica`` on the primary): what the primary takes from then
on is on no replica — and, the link cut, not even in the replica's socket buffer (a stopped process's kernel still
receives). ``fail_over()`` kills the primary with ``SIGKILL``, lets the replica go on, and waits until the Sentinel
names it the primary. Conditions are waited on (roles, offsets, the Sentinel's answer), never a fixed sleep.

Without ``redis-server`` the tests that need it are skipped with the reason, except in CI (``FREE_PARKING_CI=1``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.servers import REDIS_SERVER, Server, free_port

MASTER = "mymaster"
REPLICATION = ("--repl-diskless-sync-delay", "0")  # a replica's first sync at once, not after 5 s of waiting for others
DOWN_AFTER_MS = 1000  # the Sentinel calls the primary down after this long without an answer…
FAILOVER_TIMEOUT_MS = 3000  # …and retries a failover that found no good replica after twice this


def need_redis_server() -> None:
    """Skip (or, in CI, fail) without redis-server: the replication tests start their own."""
    if REDIS_SERVER is None:
        reason = "redis-server not found: the replication and failover tests start their own servers and Sentinel"
        if os.environ.get("FREE_PARKING_CI"):
            pytest.fail(f"CI must run the replication tests: {reason}")
        pytest.skip(reason)


def wait_for(check, seconds: float, what: str, every: float = 0.05):
    """``check()``'s first true answer, polled; fails naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            got = check()
            if got:
                return got
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(every)


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)


def info(port: int, section: str = "replication") -> dict:
    with client(port) as c:
        return c.info(section)


class Sentinel:
    """One ``redis-server sentinel.conf --sentinel`` watching ``MASTER`` with a quorum of one."""

    def __init__(self, directory: Path) -> None:
        self.dir, self.port, self.proc = directory, 0, None
        directory.mkdir(parents=True, exist_ok=True)

    def start(self, primary: int) -> Sentinel:
        for _ in range(5):
            self.port = free_port()
            conf = self.dir / "sentinel.conf"  # the Sentinel rewrites it: a file of its own, writable
            conf.write_text(
                f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile {self.dir / 'sentinel.log'}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {primary} 1\n"
                f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
            )  # fmt: skip
            self.proc = subprocess.Popen([REDIS_SERVER, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)  # fmt: skip
            try:
                wait_for(lambda: self.proc.poll() is None and self.primary(), 10, "the Sentinel answering")
                return self
            except AssertionError:
                self.stop()
        raise RuntimeError(f"redis-server --sentinel would not start (see {self.dir}/sentinel.log)")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def primary(self) -> int | None:
        """The port of the primary the Sentinel names now."""
        with client(self.port) as c:
            got = c.sentinel_get_master_addr_by_name(MASTER)
        return int(got[1]) if got else None

    def knows_replica(self, port: int) -> bool:
        """Whether the Sentinel lists ``port`` as a replica it can reach."""
        with client(self.port) as c:
            return any(int(r["port"]) == port and not (r["is_sdown"] or r.get("is_disconnected"))
                       for r in c.sentinel_slaves(MASTER))  # fmt: skip

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


class Replicated:
    """A primary (``appendonly yes``, ``appendfsync always``), one replica and a Sentinel, in ``directory``."""

    def __init__(self, directory: Path, *args: str) -> None:
        need_redis_server()
        self.dir, self.args = directory, (*REPLICATION, *args)
        self.primary = Server(directory / "a", "--appendonly", "yes", "--appendfsync", "always", *self.args)
        self.replica = Server(directory / "b", "--appendonly", "yes", "--appendfsync", "always", *self.args)
        self.sentinel = Sentinel(directory / "sentinel")
        self.held = False

    @property
    def url(self) -> str:
        return self.primary.url

    def start(self) -> Replicated:
        try:
            self.primary.start()
            self.replica.args = (*self.replica.args, "--replicaof", "127.0.0.1", str(self.primary.port))
            self.replica.start()
            wait_for(lambda: self.online(self.primary.port, self.replica.port), 20, "the replica online")
            self.sentinel.start(self.primary.port)
            wait_for(lambda: self.sentinel.knows_replica(self.replica.port), 20, "the Sentinel knowing the replica")
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def online(primary: int, replica: int) -> bool:
        """Whether ``replica`` is an online replica of ``primary``, as the primary says."""
        got = info(primary)
        return any(isinstance(v, dict) and int(v.get("port", 0)) == replica and v.get("state") == "online"
                   for k, v in got.items() if k.startswith("slave"))  # fmt: skip

    def caught_up(self) -> bool:
        """Whether the replica has applied everything the primary wrote (their offsets agree)."""
        return info(self.replica.port)["slave_repl_offset"] == info(self.primary.port)["master_repl_offset"]

    def hold_replica(self, cut: bool = True) -> None:
        """Stop the replica and (``cut``) its link: the primary's writes from now on reach no replica. Uncut, the
        replica still counts as connected, and acknowledges everything once it goes on."""
        os.kill(self.replica.proc.pid, signal.SIGSTOP)
        self.held = True
        if not cut:
            return
        with client(self.primary.port) as c:
            c.execute_command("CLIENT", "KILL", "TYPE", "replica")
        wait_for(lambda: info(self.primary.port)["connected_slaves"] == 0, 10, "the replica's link cut")

    def release_replica(self) -> None:
        if self.held and self.replica.proc is not None:
            os.kill(self.replica.proc.pid, signal.SIGCONT)
        self.held = False

    def fail_over(self, seconds: float = 30) -> None:
        """``SIGKILL`` the primary, let the replica go on, and wait until the Sentinel has promoted it."""
        self.primary.kill()
        self.release_replica()
        wait_for(lambda: self.sentinel.primary() == self.replica.port, seconds, "the Sentinel promoting the replica")
        wait_for(lambda: info(self.replica.port)["role"] == "master", seconds, "the replica answering as the primary")

    def reattach_old_primary(self) -> None:
        """Start the killed primary again as a replica of the promoted one (as an operator would): with one replica,
        the new primary has none until then."""
        old, new = self.primary, self.replica
        old.args = (*self.args, "--appendonly", "yes", "--appendfsync", "always", "--replicaof", "127.0.0.1", str(new.port))
        old.restart()
        wait_for(lambda: self.online(new.port, old.port), 30, "the old primary online as a replica")

    def stop(self) -> None:
        self.release_replica()
        self.sentinel.stop()
        self.replica.stop()
        self.primary.stop()



CLUSTER_ARGS = (*REPLICATION, "--appendonly", "yes", "--appendfsync", "always", "--cluster-replica-validity-factor", "0")
"""A failover drill's cluster nodes: durable, a replica's first sync at once, and any replica may be promoted, however
stale (a held-back one too: what the drill shows)."""


class ClusterFailover:
    """A primary of a ``tests.cluster.Cluster`` with a replica per primary, its replica held back and taken over."""

    def __init__(self, cluster, primary: int) -> None:
        self.cluster, self.primary = cluster, primary
        self.replica = next(int(v["port"]) for k, v in info(primary).items() if k.startswith("slave") and isinstance(v, dict))
        self.held = False

    def live(self) -> list[int]:
        return [p for p, proc in zip(self.cluster.ports, self.cluster.procs, strict=True) if proc.poll() is None]

    def _pid(self, port: int) -> int:
        return self.cluster.procs[self.cluster.ports.index(port)].pid

    def caught_up(self) -> bool:
        return info(self.replica)["slave_repl_offset"] == info(self.primary)["master_repl_offset"]

    def hold_replica(self) -> None:
        """As ``Replicated.hold_replica``: stopped, its link cut."""
        os.kill(self._pid(self.replica), signal.SIGSTOP)
        self.held = True
        with client(self.primary) as c:
            c.execute_command("CLIENT", "KILL", "TYPE", "replica")
        wait_for(lambda: info(self.primary)["connected_slaves"] == 0, 10, "the replica's link cut")

    def release_replica(self) -> None:
        if self.held:
            os.kill(self._pid(self.replica), signal.SIGCONT)
        self.held = False

    def fail_over(self, seconds: float = 30) -> None:
        """``SIGKILL`` the primary, let its replica go on and take its slots over (``CLUSTER FAILOVER TAKEOVER``: no
        vote, so a replica however stale is promoted at once), and wait until the cluster serves every slot again."""
        self.cluster.kill(self.primary)
        self.release_replica()
        with client(self.replica) as c:
            c.execute_command("CLUSTER", "FAILOVER", "TAKEOVER")
        wait_for(lambda: info(self.replica)["role"] == "master", seconds, "the replica taking its primary's slots over")
        wait_for(lambda: self.cluster.ok(self.live()), seconds, "the cluster serving every slot")

    def reattach_old_primary(self, seconds: float = 30) -> None:
        """Start the killed primary again: it finds its slots taken and follows the new primary as its replica."""
        self.cluster.restart(self.primary)
        wait_for(lambda: Replicated.online(self.replica, self.primary), seconds, "the old primary online as a replica")
