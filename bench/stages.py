"""Where a request's CPU goes: the service's worker under the HTTP load of benchmark 1, sampled by py-spy.

py-spy (a sampling profiler that reads the worker's stacks from outside, so the worker runs unchanged) records
the measured window at ``RATE`` samples a second; each sample's stack is given to one stage by its innermost frame
that belongs to one (``STAGES``: by file, or for Sanic's compiled functions by name) — frames of the standard
library, hmac or msgspec pass the sample on to their caller. A stage's share of the samples times the worker's CPU
time a request (measured apart, the same window, from /proc) is its microseconds a request. The bare Sanic
endpoint is measured the same way, for the HTTP stages it shares with the service.

The breakdown is of a request of the load's mix (a command and about half a view per command), as row 1c is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from . import procs
from .report import Measure

RATE = 250
SANIC_COMPILED = {"connection_task", "handle_request", "http1_request_header", "http1_response_header", "send", "read",
                  "_run_request_middleware", "_run_response_middleware"}
"""Sanic's functions compiled at start (``touchup``): a frame with no file but its own name."""

BACKGROUND: list[tuple[str, tuple[str, ...]]] = [
    ("projector (in the worker)", ("service/projections/",)),
    ("runner, bots and change feed", ("service/api/runner.py", "service/bots/", "service/api/watch.py")),
]
"""Work outside the requests: a sample anywhere under these is theirs, whatever it was doing."""
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("store client", ("/redis/", "hiredis", "service/store/resp.py", "service/store/store.py", "service/store/pool.py",
                      "service/store/redis_store.py", "service/events/entries.py", "service/store/outage.py")),
    ("embedded store (fakeredis, journal)", ("/fakeredis/", "/lupa/", "service/store/embedded.py",
                                             "service/store/journal.py")),
    ("receipts (Ed25519)", ("service/api/signing.py", "/cryptography/")),
    ("seal and hash", ("service/events/envelope.py", "service/events/codec.py")),
    ("metrics and access log", ("service/api/observe.py", "service/api/metrics.py", "/prometheus_client/")),
    ("view and legal", ("/view.py", "/legal.py", "/legal_forms.py", "service/api/routes.py:_view",
                        "service/api/routes.py:_seat_of")),
    ("decide", ("service/rules/", "service/events/free_parking.py", "service/events/monopoly.py",
                "service/events/solitaire.py", "service/api/schedule.py")),
    ("load and tail", LOADING := ("service/api/games.py:load", "service/api/games.py:fresh",
                                  "service/api/games.py:_tail", "service/api/games.py:_read_tails")),
    ("auth", ("service/api/auth.py", "service/api/routes.py:_caller", "service/api/limits.py")),
    ("decode", ("service/api/routes.py:_command", "service/api/schemas.py")),
    ("encode", ("service/api/routes.py:_answer",)),
    ("API layer (routes, command flow)", ("service/api/",)),
    ("HTTP (Sanic: parse, route, respond)", ("/sanic/", "/sanic_routing/", "/sanic_ext/", "/httptools/")),
]
"""By the innermost frame that belongs to one; rules code under ``LOADING`` folds a tail, so it is loading."""
HTTP = "HTTP (Sanic: parse, route, respond)"
PASS = ("/sanic/server/runners.py", "/sanic/worker/", "/sanic/app.py:run", "/sanic/mixins/startup.py")
"""Sanic's frames that run the event loop, below every sample: a sample with nothing above them is the loop's."""
EVENT_LOOP = "event loop and system calls"
ORDER = [name for name, _ in STAGES + BACKGROUND] + [EVENT_LOOP]


def frame_place(frame: str) -> str:
    """``func (path:line)`` as ``path:func`` (the function's last dotted part, so methods match by name)."""
    func, _, where = frame.rpartition(" (")
    path = where.rsplit(":", 1)[0]
    name = func.split(".<locals>")[0].rsplit(".", 1)[-1]
    return f"{path}:{name}"


def _match(place: str, table: list[tuple[str, tuple[str, ...]]]) -> str | None:
    rooted = "/" + place  # py-spy names a package's file from the package: "redis/client.py", "/redis/" matches it
    return next((name for name, patterns in table if any(p in rooted for p in patterns)), None)


def stage_of(frames: list[str]) -> str:
    """The stage of a sample (its frames outermost first)."""
    places = [frame_place(f) for f in frames]
    for place in places:
        if background := _match(place, BACKGROUND):
            return background
    for frame, place in zip(reversed(frames), reversed(places)):
        func, _, where = frame.rpartition(" (")
        if "/" not in where and func.split(".")[0] in SANIC_COMPILED:
            return HTTP
        if any(p in "/" + place for p in PASS):
            continue
        if stage := _match(place, STAGES):
            if stage == "decide" and any(p in outer for p in LOADING for outer in places):
                return "load and tail"
            return stage
    return EVENT_LOOP


def read_profile(path: Path) -> Counter[str]:
    """Samples per stage of a py-spy ``raw`` (collapsed stacks) file."""
    out: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            out[stage_of(stack.split(";")[1:])] += int(count)  # the first "frame" names the process
    return out


def have_py_spy() -> str | None:
    return shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))


class Recording:
    """py-spy recording ``pid`` (and its children) for ``seconds``, from ``start()`` on."""

    def __init__(self, pid: int, seconds: float) -> None:
        self.pid, self.seconds = pid, seconds
        self.folder = Path(tempfile.mkdtemp(prefix="fp-bench-stages-"))
        self.out = self.folder / "profile.raw"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        spy = have_py_spy()
        if spy is None:
            raise RuntimeError("py-spy is not installed (make bench installs it: pip install py-spy)")
        self.proc = subprocess.Popen([spy, "record", "--pid", str(self.pid), "--subprocesses", "--nonblocking",
                                      "--rate", str(RATE), "--format", "raw", "--output", str(self.out),
                                      "--duration", str(max(1, round(self.seconds)))],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stages(self) -> Counter[str]:
        assert self.proc is not None, "never started"
        _, err = self.proc.communicate(timeout=self.seconds + 60)
        if self.proc.returncode != 0 or not self.out.exists():
            raise RuntimeError(f"py-spy failed ({self.proc.returncode}): {err.decode(errors='replace')[-500:]}")
        try:
            return read_profile(self.out)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def breakdown(server, mode: str, args, seed: int, get_ratio: float = 0.5) -> tuple[dict[str, float], dict]:
    """The worker's CPU µs a request in each stage under the load, and the load's result."""
    with server as (url, proc):
        recording = Recording(proc.pid, args.duration)
        cpu: dict[str, float] = {}

        def marker(name: str) -> None:
            cpu[name] = procs.cpu_seconds(proc.pid)
            if name == "window-start":
                recording.start()

        result = procs.loadgen(url, mode=mode, games=args.games, duration=args.duration, warmup=args.warmup, seed=seed,
                               get_ratio=get_ratio, on_marker=marker)
        samples = recording.stages()
    requests = max(1, result["commands"] + result["views"] + result["other"])
    per_request = (cpu["window-end"] - cpu["window-start"]) / requests * 1e6
    total = max(1, sum(samples.values()))
    return {stage: per_request * n / total for stage, n in samples.items()}, result


class Breakdown:
    """Each server's µs a request by stage, over the rounds (their mean), for the table beside row 1."""

    def __init__(self) -> None:
        self.columns: dict[str, list[dict[str, float]]] = {}

    def add(self, column: str, stages: dict[str, float]) -> None:
        self.columns.setdefault(column, []).append(stages)

    def mean(self, column: str, stage: str) -> float:
        runs = self.columns[column]
        return sum(r.get(stage, 0.0) for r in runs) / len(runs)

    def rows(self) -> list[tuple[str, list[float]]]:
        names = list(self.columns)
        out = [(stage, [self.mean(c, stage) for c in names]) for stage in ORDER]
        out = [(stage, values) for stage, values in out if any(v >= 0.5 for v in values)]
        return [*out, ("all (the worker's CPU a request)", [sum(self.mean(c, s) for s in ORDER) for c in names])]

    def markdown(self) -> str:
        names = list(self.columns)
        lines = ["| stage (µs of worker CPU a request) | " + " | ".join(names) + " |",
                 "| --- | " + " | ".join("---:" for _ in names) + " |"]
        lines += [f"| {stage} | " + " | ".join(f"{v:.0f}" for v in values) + " |" for stage, values in self.rows()]
        return "\n".join(lines) + "\n"

    def table(self):
        from rich.table import Table

        t = Table(title="1s — where a request's CPU goes (py-spy samples × CPU a request; the mean of the rounds)")
        t.add_column("stage")
        for name in self.columns:
            t.add_column(name, justify="right")
        for stage, values in self.rows():
            t.add_row(stage, *(f"{v:.0f} µs" for v in values))
        return t


BREAKDOWN = Breakdown()


def measures() -> dict[str, Measure]:
    return {"1s": Measure("1s", "bare Sanic's worker CPU a request ÷ the service's, under py-spy (by stage: the table below)",
                          "— (the stages of 1c's worker part)", 0.5, "min", applies=False)}


def run(args, ms, log) -> None:
    """Row 1s: the breakdown of the service on Redis, on the embedded store, and of the bare endpoint, per round."""
    with procs.redis_server(args.redis_url) as redis:
        for rnd in range(args.rounds):
            seed = 2000 + rnd
            stages, game = breakdown(procs.service(1, redis.url), "game", args, seed)
            BREAKDOWN.add("service, Redis", stages)
            stages, _ = breakdown(procs.service(1, None), "game", args, seed)
            BREAKDOWN.add("service, embedded", stages)
            stages, _ = breakdown(procs.bare(1), "bare", args, seed, get_ratio=game["get_ratio"])
            BREAKDOWN.add("bare Sanic", stages)
            ours, bare = (sum(BREAKDOWN.columns[c][-1].values()) for c in ("service, Redis", "bare Sanic"))
            ms["1s"].add(bare / ours, f"{bare:.0f} µs vs {ours:.0f} µs")
            log(f"  round {rnd + 1}: worker CPU a request — Redis {sum(BREAKDOWN.columns['service, Redis'][-1].values()):.0f} µs, "
                f"embedded {sum(BREAKDOWN.columns['service, embedded'][-1].values()):.0f} µs, "
                f"bare {sum(BREAKDOWN.columns['bare Sanic'][-1].values()):.0f} µs")
