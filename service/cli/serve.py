"""``python -m service [serve]``: the HTTP service on 127.0.0.1:8000.

``REDIS_URL`` selects a real Redis (a single server, or any node of a Redis Cluster: ``--cluster auto`` asks it);
without it the embedded store keeps everything under ``--data``.
The embedded store belongs to one process, so it runs with one worker only, and a second service on its folder is
refused (``service/store/owner.py``). A start that cannot be made as configured (the address in use, a journal only
``--repair`` may cut, a store that cannot be reached, a durability it lacks, a data folder another process holds, a
keyring others may read or write) is refused with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import shutil
import socket
import sys
import tempfile
from functools import partial
from pathlib import Path

import msgspec
from sanic import Sanic
from sanic.server.socket import bind_socket
from sanic.worker.loader import AppLoader

from service.api.app import StartupRefused, create_app, open_store_for, receipts_for
from service.api.settings import compact_ratio_ok, REPLICA_WAIT_MOST_MS, Settings
from service.store.owner import DataInUse, Owner


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the HTTP service (the default)", description=__doc__)
    add_arguments(p)
    p.set_defaults(func=main)


def add_arguments(p: argparse.ArgumentParser) -> None:
    env = Settings.from_env()
    p.add_argument("--host", default=env.host, help=f"address to listen on (default {env.host})")
    p.add_argument("--port", type=int, default=env.port, help=f"port (default {env.port})")
    p.add_argument("--workers", type=int, default=env.workers, help="worker processes (real Redis only; default 1)")
    p.add_argument("--data", dest="data_dir", type=Path, default=env.data_dir, help=f"the embedded store's folder (default {env.data_dir})")
    p.add_argument("--fsync", action="store_true", default=env.fsync, help="embedded store: fsync the journal before each answer")
    p.add_argument("--repair", action="store_true", default=env.repair,
                   help="embedded store: start even if the journal is damaged, keeping its intact records before the "
                        "damage and moving the rest to a .damaged file beside it (see docs/durability.md)")
    p.add_argument("--compact-ratio", type=_ratio, default=env.compact_ratio,
                   help=f"embedded store: rewrite the journal to what is live when it is this many times its live size "
                        f"(default {env.compact_ratio:g}; 0: never; see docs/operating.md)")
    p.add_argument("--compact-min-bytes", type=_count, default=env.compact_min_bytes,
                   help=f"…and at least this many bytes (default {env.compact_min_bytes})")
    p.add_argument("--durability", choices=("none", "durable", "replicated"), default=env.durability,
                   help="durable: refuse to start where an acknowledged event could be lost; replicated: durable, and each "
                        "write answered only once --replicas replicas have it (see docs/durability.md)")
    p.add_argument("--allow-volatile", action="store_true", default=env.allow_volatile,
                   help="allow tournaments on a store that could lose an acknowledged event (see docs/tournaments.md)")
    p.add_argument("--cluster", choices=("auto", "yes", "no"), default=env.cluster,
                   help="is REDIS_URL a node of a Redis Cluster? auto (default): ask it (INFO cluster)")
    p.add_argument("--bot-delay-ms", type=int, default=env.bot_delay_ms, help="how long server-seated bots wait before they move")
    p.add_argument("--human-pace-ms", type=int, default=env.human_pace_ms,
                   help=f"at a table where a person sits, a bot waits at least this long before it acts, so the person "
                        f"can follow (default {env.human_pace_ms}; 0: at once; bots alone always play at once)")
    p.add_argument("--human-chance-ms", type=int, default=env.human_chance_ms,
                   help=f"after an event that opened a chance for a person to act out of turn (an Officer Jones, an answer "
                        f"such as a bid), and between moves of a Monopoly auction a person still bids in, the bots wait "
                        f"at least this long, so the person can take it (default {env.human_chance_ms}; see docs/bots.md)")
    p.add_argument("--idle-close-ms", type=int, default=env.idle_close_ms,
                   help=f"close a game nobody joined or moved on for this long (default {env.idle_close_ms}: 24 h; 0: never)")
    p.add_argument("--queue-fill-ms", type=int, default=env.queue_fill_ms,
                   help=f"a player waiting this long in the play-now queue is seated with bots (default {env.queue_fill_ms}; docs/queue.md)")
    p.add_argument("--queue-interval-ms", type=int, default=env.queue_interval_ms,
                   help=f"how often each worker's matcher looks at the play-now queue (default {env.queue_interval_ms})")
    store = p.add_argument_group("the store and the worker (docs/operating.md)")
    store.add_argument("--redis-url", default=env.redis_url,
                       help="a real Redis, or any node of a Redis Cluster (REDIS_URL); without it, the embedded store")
    store.add_argument("--redis-sentinel", default=env.redis_sentinel, metavar="HOST:PORT,…",
                       help="reach the Redis primary through these Sentinels (REDIS_SENTINEL), following its failovers")
    store.add_argument("--sentinel-master", dest="redis_sentinel_master", default=env.redis_sentinel_master,
                       help=f"the primary's name, as the Sentinels know it (REDIS_SENTINEL_MASTER; default {env.redis_sentinel_master})")
    store.add_argument("--replicas", type=_positive, default=env.replicas,
                       help=f"--durability replicated: the replicas each write must reach (default {env.replicas})")
    store.add_argument("--replica-wait-ms", type=_replica_wait, default=env.replica_wait_ms,
                       help=f"--durability replicated: how long a write waits for them before 503 (default {env.replica_wait_ms})")
    store.add_argument("--namespace", default=env.namespace, help=f"the prefix of every Redis key (default {env.namespace})")
    store.add_argument("--store-connections", type=int, default=env.store_connections,
                       help=f"store connections a worker keeps; more concurrent requests wait (default {env.store_connections})")
    store.add_argument("--store-wait-ms", type=int, default=env.store_wait_ms,
                       help=f"how long a request waits for a connection before 503 store_busy (default {env.store_wait_ms})")
    store.add_argument("--cache-size", type=int, default=env.cache_size,
                       help=f"games a worker keeps folded in memory (default {env.cache_size})")
    store.add_argument("--max-body", type=int, default=env.max_body, help=f"the largest request body, in bytes (default {env.max_body})")
    store.add_argument("--backlog", type=int, default=env.backlog,
                       help=f"connections the kernel holds for the workers to accept (default {env.backlog})")
    store.add_argument("--no-runner", dest="runner", action="store_false", default=env.runner,
                       help="run no deadline and bot runner in the workers (FREE_PARKING_RUNNER=false)")
    store.add_argument("--runner-interval-ms", type=int, default=env.runner_interval_ms,
                       help=f"how often the runner scans for games due (default {env.runner_interval_ms})")
    store.add_argument("--projector-poll-ms", type=int, default=env.projector_poll_ms,
                       help=f"how often an idle projector looks for new events (default {env.projector_poll_ms})")
    store.add_argument("--log-keep-ms", type=int, default=env.log_keep_ms,
                       help="the projectors trim a partition log's entries every consumer group applied once they are this "
                            f"old (default {env.log_keep_ms}: ten minutes)")
    ops = p.add_argument_group("operating it (docs/operating.md)")
    ops.add_argument("--archive", dest="archive_dir", default=env.archive_dir, metavar="DIR_OR_URL",
                     help="where finished games move: a folder every worker sees, or an fsspec URL such as s3://bucket/games "
                          "(default: <data>/archive)")
    ops.add_argument("--archive-after-ms", type=int, default=env.archive_after_ms,
                     help=f"move a game to the archive this long after it finished (default {env.archive_after_ms}: a day; 0: never)")
    ops.add_argument("--archive-lease-ms", type=int, default=env.archive_lease_ms,
                     help=f"one worker archives a partition's games, holding its lease this long (default {env.archive_lease_ms})")
    ops.add_argument("--access-log", action="store_true", default=env.access_log,
                     help="one JSON line per request on stderr: request id, method, path, status, latency")
    ops.add_argument("--ready-lag", type=int, default=env.ready_lag,
                     help=f"/readyz answers 503 when the projectors are more entries behind than this (default {env.ready_lag})")
    ops.add_argument("--no-projector", dest="projector", action="store_false", default=env.projector,
                     help="run no projector in the workers (FREE_PARKING_PROJECTOR=false): a standalone one "
                          "(python -m service project) keeps the read models")
    keys = p.add_argument_group("receipts: every view and answer signed (docs/fairness.md)")
    keys.add_argument("--keys", dest="keys_dir", type=Path, default=env.keys_dir,
                      help="the keyring's folder, the same for every worker (default: <data>/keys; or give the key itself "
                           "in FREE_PARKING_SIGNING_KEY)")
    keys.add_argument("--retired-keys", type=Path, default=env.retired_keys, metavar="FILE",
                      help="a JSON file of public keys that signed before, each with its not_after (GET /keys' shape), "
                           "listed by GET /keys: how a key given in FREE_PARKING_SIGNING_KEY is rotated")
    keys.add_argument("--no-receipts", dest="receipts", action="store_false", default=env.receipts,
                      help="sign nothing (FREE_PARKING_RECEIPTS=false): for measuring what signing costs")
    limits = p.add_argument_group("limits on new players, games, seats and commands, per client address and per player (docs/limits.md)")
    limits.add_argument("--no-rate-limits", dest="rate_limits", action="store_false", default=env.rate_limits,
                        help="no limit at all (FREE_PARKING_RATE_LIMITS=false)")
    for what, words in (("games", "new games"), ("players", "new players"), ("seats", "seats taken (not a bot's)"),
                        ("commands", "commands of a player"), ("address_commands", "commands of all the players on an address"),
                        ("bot_games", "a bot account's new games"), ("bot_seats", "a bot account's seats"),
                        ("bot_commands", "commands of a bot account"),
                        ("bot_address_commands", "commands of the bot accounts on an address, with the server bots' at their tables")):
        burst, rate = getattr(env, f"{what}_burst"), getattr(env, f"{what}_per_minute")
        flag = what.replace("_", "-")
        limits.add_argument(f"--{flag}-burst", type=int, default=burst, help=f"{words} at once (default {burst})")
        limits.add_argument(f"--{flag}-per-minute", type=int, default=rate, help=f"then {words} a minute (default {rate}; 0: no limit)")
    limits.add_argument("--proxies-count", type=_count, default=env.proxies_count,
                        help="proxies in front of the service that append to X-Forwarded-For (default 0: the peer is the client)")


LIMIT_FIELDS = ("idle_close_ms", "rate_limits", "games_burst", "games_per_minute", "players_burst", "players_per_minute",
                "seats_burst", "seats_per_minute", "commands_burst", "commands_per_minute", "address_commands_burst",
                "address_commands_per_minute", "bot_games_burst", "bot_games_per_minute", "bot_seats_burst",
                "bot_seats_per_minute", "bot_commands_burst", "bot_commands_per_minute", "bot_address_commands_burst",
                "bot_address_commands_per_minute", "proxies_count")


SECRETS = ("admin_token", "signing_key")
"""Settings given only in the environment (FREE_PARKING_ADMIN_TOKEN, FREE_PARKING_SIGNING_KEY): a flag's value
is on show to anyone who lists the machine's processes."""


def _count(text: str) -> int:
    """A count of things (0 or more): argparse says what is wrong with any other in one line."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


_count.__name__ = "count (0 or more)"  # argparse names the type in its message: "invalid count (0 or more) value"


def _positive(text: str) -> int:
    """A count of at least one (replicas, milliseconds): argparse says what is wrong with any other in one line."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive.__name__ = "count (1 or more)"


def _replica_wait(text: str) -> int:
    """Milliseconds, 1 to ``REPLICA_WAIT_MOST_MS`` (why the bound: ``settings.py``)."""
    value = _positive(text)
    if value > REPLICA_WAIT_MOST_MS:
        raise ValueError(text)
    return value


_replica_wait.__name__ = f"wait (1 to {REPLICA_WAIT_MOST_MS} ms)"


def _ratio(text: str) -> float:
    """A ratio (0: off, or more than 1: a journal just compacted is 1 × its live size, so a ratio of 1 or less made it
    due again at once, and rewritten every second), said wrong in one line by argparse like a count."""
    value = float(text)
    if not compact_ratio_ok(value):
        raise ValueError(text)
    return value


_ratio.__name__ = "ratio (0, or more than 1)"


def settings_from(args: argparse.Namespace) -> Settings:
    """The environment's settings, each one a flag was given for replaced by the flag's (every flag's ``dest`` is
    the setting's name; a flag's default is the environment's)."""
    env = Settings.from_env()
    given = {f: getattr(args, f) for f in env.__struct_fields__ if hasattr(args, f)}
    return Settings(**{**{f: getattr(env, f) for f in env.__struct_fields__}, **given})


def _serve(settings: Settings, sock: socket.socket) -> None:
    """One worker runs in this very process (Sanic's single-process mode): a store that cannot be opened is then an
    exception here, said in one line, and nothing else is killed. Several workers (a real Redis) are child processes,
    and a worker that fails to start makes Sanic SIGKILL its whole process group — whoever launched the service too:
    so the store is opened and checked here first, and a refusal is said before any worker starts. Either way Sanic
    is handed the socket ``main`` bound (its workers share it), so it binds nothing itself."""
    if settings.workers == 1:
        _checked_early(settings)
        app = create_app(settings)
        app.prepare(sock=sock, access_log=False, motd=False, backlog=settings.backlog, single_process=True)
        Sanic.serve_single(primary=app)
        return
    asyncio.run(_preflight(settings))
    loader = AppLoader(factory=partial(create_app, settings))
    app = loader.load()
    app.prepare(sock=sock, workers=settings.workers, access_log=False, motd=False, backlog=settings.backlog)
    Sanic.serve(primary=app, app_loader=loader)


def listening(settings: Settings) -> socket.socket:
    """The service's socket, bound and listening here, in the main process, before anything starts: an address that
    cannot be had is ``StartupRefused`` in the operator's words, not Sanic's traceback from inside its start."""
    address = f"{settings.host}:{settings.port}" if ":" not in settings.host else f"[{settings.host}]:{settings.port}"
    try:
        return bind_socket(settings.host, settings.port, backlog=settings.backlog)
    except socket.gaierror as e:
        raise StartupRefused(f"the address {settings.host} is no name or address this machine knows ({e.strerror}): "
                             "give another --host (127.0.0.1, or 0.0.0.0 for every interface)") from e
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            why = "is in use (another service listens there: this one already?): stop that one, or give another --port"
        elif e.errno == errno.EACCES:
            why = "may not be bound by this user (a port below 1024 needs privileges): give a --port above 1023"
        elif e.errno == errno.EADDRNOTAVAIL:
            why = "is no address of this machine: give another --host (127.0.0.1, or 0.0.0.0 for every interface)"
        else:
            why = f"cannot be listened on ({e.strerror or e})"
        raise StartupRefused(f"the address {address} {why}") from e


def _checked_early(settings: Settings) -> None:
    """What needs no store opened, refused before Sanic says a word: the keyring, and the embedded store's folder
    held by another process. The store's own start takes the folder's lock for good (and refuses it there too, had
    another process taken it in between); this only asks."""
    receipts_for(settings)
    if settings.store_name == "redis":
        return
    try:
        Owner(settings.data_dir).release()
    except DataInUse as e:
        raise StartupRefused(str(e)) from e
    except OSError as e:
        raise StartupRefused(f"the data folder {settings.data_dir} cannot be used: {e.strerror or e} ({e.filename or ''})") from e


async def _preflight(settings: Settings) -> None:
    """Before any worker starts: the store answers, and the keyring exists (so every worker signs with one key)."""
    receipts_for(settings)
    store, _ = await open_store_for(settings)
    await store.close()


def _metrics_folder() -> str:
    """A fresh folder for the workers' metric files: counts of an earlier run must not be added to this one's."""
    return tempfile.mkdtemp(prefix="free-parking-metrics-")


def _logging() -> None:
    """The service's own lines (its store, what goes wrong) to stderr, once each (Sanic logs its own to stdout)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    ours = logging.getLogger("free_parking")
    ours.addHandler(handler)
    ours.setLevel(logging.INFO)
    ours.propagate = False
    logging.getLogger("sanic.error").addFilter(_NotRefusals())


class _NotRefusals(logging.Filter):
    """Sanic logs whatever stopped it with its traceback; a refused start is said in one line instead (``main``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], StartupRefused))


def main(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if settings.workers < 1:
        print("--workers must be at least 1", file=sys.stderr)
        return 2
    if settings.workers > 1 and settings.store_name != "redis":
        print(
            "the embedded store belongs to one process: run it with --workers 1, or set REDIS_URL to share a real Redis",
            file=sys.stderr,
        )
        return 2
    _logging()
    try:
        sock = listening(settings)
    except StartupRefused as e:
        print(f"free-parking: not started: {e}", file=sys.stderr)
        return 2
    # the port bound (``--port 0``: the one the kernel chose) is the one every worker says it opens
    settings = msgspec.structs.replace(settings, port=sock.getsockname()[1])
    os.environ.update(settings.to_env())  # workers build their app from the environment
    made = None
    if settings.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # every worker's counters in one folder, added up at each scrape (service/api/metrics.py); ours to remove
        made = os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_folder()
    try:
        _serve(settings, sock)
    except StartupRefused as e:
        print(f"free-parking: not started: {e}", file=sys.stderr)
        return 2
    finally:
        sock.close()
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return 0
