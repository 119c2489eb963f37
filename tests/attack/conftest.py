"""The attack tests' own servers, on loopback ports 23000-24999 only (below the ephemeral ports): an in-process service (``inproc``), a
``python -m service serve`` process (``proc_service``) and a redis-server of their own (``own_redis``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from service.api.app import create_app
from service.api.settings import Settings
from tests.http import TLS
from tests.servers import free_port_in

ADMIN = "attack-admin-token"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
ROOT = Path(__file__).resolve().parents[2]
_apps = 0


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


ATTACK_PORTS = range(23000, 25000)


def attack_port() -> int:
    """A free loopback port in 23000-24999 (the range these tests may use): below the ephemeral ports (32768 and up),
    so that no client's outgoing connection takes it between its choice and the bind — under load one did (a busy CI
    run: "Address already in use" for a service on 47944, when this range was 47100-47999)."""
    return free_port_in(ATTACK_PORTS)


def settings(tmp_path: Path, **overrides) -> Settings:
    base = {"data_dir": tmp_path / "data", "admin_token": ADMIN, "runner_interval_ms": 250, "rate_limits": False,
            "idle_close_ms": 0, "human_pace_ms": 0, "human_chance_ms": 0}
    base.update(overrides)
    return Settings(**base)


@contextlib.asynccontextmanager
async def inproc(config: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app in this event loop on an attack port; the client's ``.app`` is the Sanic app."""
    global _apps
    _apps += 1
    app = create_app(config, name=f"free_parking_attack_{_apps}")
    app.config.TOUCHUP = False
    sock = socket.socket()
    sock.bind(("127.0.0.1", attack_port()))
    server = await app.create_server(sock=sock, return_asyncio_server=True, access_log=False)
    await server.startup()
    await server.before_start()
    await server.after_start()
    await server.start_serving()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=30, verify=TLS) as client:
            client.app = app
            yield client
    finally:
        await server.before_stop()
        server.close()
        await server.wait_closed()
        await server.after_stop()


@pytest.fixture
async def api(tmp_path):
    """An embedded-store service in this process, rate limits off."""
    async with inproc(settings(tmp_path)) as client:
        yield client


class Proc:
    """``python -m service serve`` on an attack port, its output in a file."""

    def __init__(self, directory: Path, env: dict[str, str], args: list[str]) -> None:
        self.dir, self.env, self.args = directory, env, args
        self.port = attack_port()
        self.log = directory / "service.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run(self, timeout: float = 30) -> subprocess.CompletedProcess:
        """Run to its end (a start that is refused): its exit status and output."""
        return subprocess.run(check=False, args=[sys.executable, "-m", "service", "serve", "--port", str(self.port), *self.args],
                              env=self.env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              start_new_session=True)  # Sanic SIGKILLs its whole process group when a worker fails

    def start(self, seconds: float = 30) -> Proc:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "service", "serve", "--port", str(self.port), *self.args],
                                         env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                         start_new_session=True)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"the service did not start: {self.log.read_text()[-2000:]}")

    def workers(self) -> list[int]:
        assert self.proc is not None
        try:
            kids = [int(p) for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]
        except OSError:
            return []
        out = []
        for pid in kids:
            try:
                if b"SANIC_WORKER_NAME=" in Path(f"/proc/{pid}/environ").read_bytes():
                    out.append(pid)
            except OSError:
                pass
        return out

    def stop(self) -> None:
        if self.proc is None:
            return
        kids = []
        with contextlib.suppress(OSError):
            kids = [int(p) for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pid in kids:
            with contextlib.suppress(OSError):
                if b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)
        self.proc = None


def service_env(**settings_env: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}
    env.update({"PYTHONPATH": str(ROOT), "FREE_PARKING_ADMIN_TOKEN": ADMIN, "FREE_PARKING_IDLE_CLOSE_MS": "0"})
    env.update(settings_env)
    return env


@pytest.fixture
def proc_service(tmp_path):
    """``proc_service(args, **env)``: a service process (not started: ``.start()`` or ``.run()``); all stopped at the end."""
    made: list[Proc] = []

    def make(args: list[str], **env: str) -> Proc:
        p = Proc(tmp_path, service_env(**env), args)
        made.append(p)
        return p

    yield make
    for p in made:
        p.stop()


class OwnRedis:
    """A redis-server of the test's own, on an attack port (never the shared one on 6379)."""

    def __init__(self, directory: Path, *args: str) -> None:
        self.dir, self.args = directory, args
        directory.mkdir(parents=True, exist_ok=True)
        self.port = attack_port()
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed")
        self.proc = subprocess.Popen([exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(directory), "--save", "",
                                      "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def cli(self, *args: str) -> str:
        return subprocess.run(check=False, args=["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True, timeout=10).stdout

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def own_redis(tmp_path):
    servers: list[OwnRedis] = []

    def start(*args: str) -> OwnRedis:
        server = OwnRedis(tmp_path / f"redis{len(servers)}", *args)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def error_of(r: httpx.Response) -> tuple[int, str]:
    """A response's status and error code (``""`` when the body is not the error shape)."""
    try:
        return r.status_code, r.json()["error"]["code"]
    except Exception:  # noqa: BLE001
        return r.status_code, ""


@pytest.fixture
def no_safety_look(monkeypatch):
    """A watch's safety look (every ``SAFETY_SECONDS``) put out of reach: then only the change feed makes a watch look."""
    from service.api import watch

    monkeypatch.setattr(watch, "SAFETY_SECONDS", 3600.0)
