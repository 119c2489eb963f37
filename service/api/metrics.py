"""Prometheus metrics (docs/operating.md): what each worker counts as it serves, and what the store says at a scrape.

Counters and histograms live in the worker that observes them; with several workers ``serve`` points
``PROMETHEUS_MULTIPROC_DIR`` at one folder before any worker starts, and a scrape of any worker adds up every
worker's files (prometheus-client's multi-process mode). Figures of the whole deployment — games by status, the
projector's lag per partition — are read from the store at the scrape, so every worker answers the same.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

__all__ = ["APPENDS", "COMMANDS", "CONTENT_TYPE_LATEST", "FEED", "FEED_PAUSES", "FEED_STATES", "REQUESTS", "RESPONSES", "STORE_ERRORS", "STREAMS", "exposition", "labelled"]

REQUESTS = Histogram(
    "free_parking_request_seconds", "Time from a request's arrival to its answer's headers, by route",
    ["method", "route"], buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RESPONSES = Counter("free_parking_responses_total", "Answers by route and status", ["method", "route", "status"])
COMMANDS = Counter(
    "free_parking_commands_total", "Commands sent to games, by kind, command type and outcome (accepted, repeated, "
    "or the error code that refused it)", ["kind", "type", "outcome"],
)
APPENDS = Counter("free_parking_appends_total", "Appends to the event store by outcome (ok, conflict)", ["outcome"])
STORE_ERRORS = Counter("free_parking_store_errors_total", "Requests the store could not serve (busy, unavailable)", ["error"])
STREAMS = Gauge("free_parking_sse_streams", "Event streams open now", multiprocess_mode="livesum")
FEED_STATES = ("blocking", "polling", "paused")
FEED = Gauge(
    "free_parking_change_feed", "Workers whose change feed (the one reader of every partition log that wakes the event "
    "streams, watch.py) is in each state: blocking (one XREAD waits for appends), polling (a cluster's logs, read in turn),"
    " paused (the store could not be read: every watched game polls on its own until it resumes)", ["state"],
    multiprocess_mode="livesum",
)
FEED_PAUSES = Counter("free_parking_change_feed_pauses_total", "Times a change feed paused: its read of the partition "
                      "logs failed (each pause is logged, and so is its end)")


_CHILDREN: dict[tuple[int, tuple[str, ...]], Any] = {}


def labelled(metric: Counter | Histogram, *values: str) -> Any:
    """``metric.labels(*values)``, the child kept: ``labels`` takes a lock and checks its values on every call (a few
    µs), and a request makes three. The label sets are bounded — routes are patterns, methods a fixed set, statuses,
    outcomes and error codes the service's own — so the children kept are too."""
    key = (id(metric), values)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = metric.labels(*values)
    return child


@contextlib.asynccontextmanager
async def open_stream() -> AsyncIterator[None]:
    """An event stream counted in ``STREAMS`` while it is open."""
    with STREAMS.track_inprogress():
        yield


class StoreFigures(Collector):
    """The figures read from the store for one scrape."""

    def __init__(self, games: dict[str, int], lag: dict[int, int], journal: tuple[int, int | None] | None = None) -> None:
        self.games, self.lag = games, lag
        self.journal = journal  # the embedded store's journal: its bytes, and its live bytes as last measured

    def collect(self) -> Iterable[Metric]:
        games = GaugeMetricFamily("free_parking_games", "Games in the store by status", labels=["status"])
        archived = self.games.get("archived", 0)
        for status, count in sorted(self.games.items()):
            if status != "archived":
                games.add_metric([status], count)
        backlog = GaugeMetricFamily("free_parking_archive_backlog", "Finished games whose events are still in the store")
        archived_games = GaugeMetricFamily("free_parking_archived_games", "Finished games whose events are in the archive")
        if self.games:
            backlog.add_metric([], max(0, self.games.get("finished", 0) - archived))
            archived_games.add_metric([], archived)
        lag = GaugeMetricFamily("free_parking_projector_lag", "Partition log entries the projectors have not applied "
                                "(not yet read, or read and not acknowledged)", labels=["partition"])
        for partition, entries in sorted(self.lag.items()):
            lag.add_metric([str(partition)], entries)
        return [games, backlog, archived_games, lag, *self._journal()]

    def _journal(self) -> list[Metric]:
        if self.journal is None:
            return []
        size, live = self.journal
        journal = GaugeMetricFamily("free_parking_journal_bytes", "The embedded store's journal: its size in bytes")
        journal.add_metric([], size)
        share = GaugeMetricFamily(
            "free_parking_journal_live_share", "The share of the embedded store's journal that is live: the size of a "
            "snapshot of the store (measured at start, at each compaction, and when one looks due) over the journal's "
            "size now; compaction rewrites the journal to that snapshot when this falls to 1 / --compact-ratio",
        )
        if live is not None and size:
            share.add_metric([], min(1.0, live / size))
        return [journal, share]


def forget_dead_workers(folder: str) -> None:
    """A worker killed with streams open left its live gauge's file behind: drop the files of every process that is
    gone, so the open streams count only the living (prometheus-client leaves that to the caller)."""
    pids = {int(m.group(1)) for name in os.listdir(folder) if (m := re.match(r"^gauge_live\w*_(\d+)\.db$", name))}
    for pid in pids:
        if not _alive(pid):
            multiprocess.mark_process_dead(pid, folder)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs: a killed worker its manager has not reaped yet is a zombie, dead all the same."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def exposition(games: dict[str, int], lag: dict[int, int], journal: tuple[int, int | None] | None = None) -> bytes:
    """The text format of every worker's metrics (one process's, when it serves alone) and the store's figures."""
    registry = CollectorRegistry()
    if folder := os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        forget_dead_workers(folder)
        multiprocess.MultiProcessCollector(registry)
        own = generate_latest(registry)
    else:
        own = generate_latest(REGISTRY)
    store = CollectorRegistry()
    store.register(StoreFigures(games, lag, journal))
    return own + generate_latest(store)
