"""A service that cannot start takes down everything that started it.

When a worker fails during startup — Redis not reachable yet (the common case of a compose file or a boot script
starting both at once), ``FREE_PARKING_DURABILITY=durable`` refused, a journal that does not replay — Sanic's manager
calls ``kill()``, which is ``os.killpg(os.getpgid(worker), SIGKILL)``: the worker shares the process group of
``python -m service serve`` and of whatever launched it without a session of its own, so the launching shell
script, ``make run``, a supervisor, a test runner and every sibling process in that group are SIGKILLed. The
service itself exits 137. (Found when this very suite was killed by the service it started.)

Expected: a refusal that ends the service alone, with a clear message and a non-zero status (as ``serve.py`` does
for a damaged journal: one line, status 2).
"""

from __future__ import annotations

import subprocess
import sys

from tests.attack.conftest import ROOT, attack_port, service_env


def test_a_service_that_cannot_reach_redis_at_start_does_not_sigkill_its_launcher(tmp_path):
    closed = attack_port()  # nothing listens there
    env = service_env(REDIS_URL=f"redis://127.0.0.1:{closed}/0", FREE_PARKING_RATE_LIMITS="false")
    script = (
        "sleep 30 & sibling=$!\n"
        f"{sys.executable} -m service serve --port {attack_port()} --data {tmp_path / 'data'} >{tmp_path / 'log'} 2>&1\n"
        "status=$?\n"
        "kill $sibling\n"
        "echo launcher survived, service exit $status\n"
    )
    # a launcher of its own session, like a boot script: the service and its workers share its process group
    done = subprocess.run(["bash", "-c", script], check=False, env=env, cwd=ROOT, capture_output=True, text=True, timeout=30,
                          start_new_session=True)
    log = (tmp_path / "log").read_text(errors="replace")
    assert "launcher survived" in done.stdout, (
        f"the launching shell was killed (its status {done.returncode}: -9 is SIGKILL) along with its other "
        f"processes; the service's last words: {log.strip().splitlines()[-1] if log.strip() else ''}")
    assert "exit 137" not in done.stdout, done.stdout
