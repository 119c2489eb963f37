"""The Sanic application: routes, errors, OpenAPI, and the background runners of each worker."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import os
import socket
import tempfile
import warnings
from collections.abc import AsyncIterator
from typing import Any

from sanic import Sanic
from sanic_ext import Extend

from service.store.archive import ArchiveError
from service.store.durability import Durability
from service.store.journal import JournalCorrupt
from service.store.owner import DataInUse
from service.store.store import NotDurable, Store, StoreUnavailable
from service.store.stores import open_store_checked
from service.projections import Projector

from . import docs, errors, observe, web
from .archiver import Archiver
from .bot_budget import BotBudget
from .games import Games, now_ms
from .limits import ADDRESS_COMMANDS, Limiter, limits_of
from .live import bp as live_bp
from .player_stream import bp as player_stream_bp
from .openapi import spec
from .players import bp as players_bp
from .queue import bp as queue_bp
from .rounds import bp as rounds_bp
from .matchmaker import Matchmaker
from .round_tables import RoundsAdvancer
from .records import bp as records_bp
from .routes import bp
from .runner import Runner
from .settings import Settings, SettingsError
from .signing import Keyring, KeyringError, Receipts, keyring_at, retired_from
from .tournaments import bp as tournaments_bp

log = logging.getLogger("free_parking")


def create_app(settings: Settings | None = None, name: str = "free_parking") -> Sanic:
    settings = settings or Settings.from_env()
    app = Sanic(name)
    app.config.REQUEST_MAX_SIZE = settings.max_body
    app.config.FALLBACK_ERROR_FORMAT = "json"
    app.config.OAS_URL_PREFIX = "/docs"
    if settings.proxies_count:  # else Sanic's own (SANIC_PROXIES_COUNT), like SANIC_REAL_IP_HEADER and SANIC_FORWARDED_SECRET
        app.config.PROXIES_COUNT = settings.proxies_count
    app.ctx.settings = settings
    app.blueprint(bp)
    app.blueprint(records_bp)
    app.blueprint(players_bp)
    app.blueprint(tournaments_bp)
    app.blueprint(live_bp)
    app.blueprint(player_stream_bp)
    app.blueprint(queue_bp)
    app.blueprint(rounds_bp)
    errors.install(app)
    observe.install(app, settings.access_log)
    web.install(app)
    docs.install(app)
    app.ctx.openapi = spec()
    app.config.OAS_CUSTOM_FILE = _spec_file(app.ctx.openapi)
    Extend(app, config={"cors": False, "http_auto_head": False, "http_auto_options": False, "injection": False})
    _head_where_get(app)
    # sanic-ext (pinned below 25, see pyproject.toml) still passes the loop to its listeners: nothing of ours does.
    # After the app is made: Sanic's config puts its own filter for its deprecations first
    warnings.filterwarnings("ignore", message=r".*Passing the loop argument to listeners is deprecated", category=DeprecationWarning)

    @app.before_server_start
    async def _open(app: Sanic) -> None:
        receipts = receipts_for(settings)
        store, durability = await open_store_for(settings)
        if receipts is not None:
            try:
                await hold_listing_head(store, receipts.keyring)
            except StoreUnavailable as e:  # NotReplicated too: the replicas behind at the start, refused in one line
                await store.close()
                raise StartupRefused(f"the store at {settings.sentinel or settings.redis_url} could not record the key "
                                     f"listing's head: {e}") from e
            except BaseException:
                await store.close()
                raise
        log.info("open http://%s:%d/ (pid %d) — store: %s (%s); durability: %s", _shown(settings.host), settings.port,
                 os.getpid(), store.name, settings.sentinel or settings.redis_url or settings.data_dir, durability.guarantee)
        app.ctx.store = store
        app.ctx.durability = durability
        app.ctx.receipts = receipts
        app.ctx.games = Games(
            store, cache_size=settings.cache_size, bot_delay_ms=settings.bot_delay_ms,
            human_pace_ms=settings.human_pace_ms, chance_ms=settings.human_chance_ms, idle_ms=settings.idle_close_ms,
            key_id=receipts.key_id if receipts else None, archive_after_ms=settings.archive_after_ms,
        )
        owner = f"{socket.gethostname()}-{os.getpid()}"
        archiver = Archiver(app.ctx.games, store.archive, settings.archive_after_ms, receipts, owner,
                            settings.archive_lease_ms) if (
            settings.archive_after_ms and store.archive is not None) else None
        limits = limits_of(settings)
        app.ctx.limiter = Limiter(store, limits)
        app.ctx.stop = asyncio.Event()
        app.ctx.tasks = []
        loop = asyncio.get_running_loop()
        if settings.runner:
            budget = BotBudget(app.ctx.limiter, store) if ADDRESS_COMMANDS in limits else None
            app.ctx.runner = Runner(app.ctx.games, interval_ms=settings.runner_interval_ms, archiver=archiver,
                                    budget=budget)
            app.ctx.tasks.append(loop.create_task(app.ctx.runner.run(app.ctx.stop)))
        if settings.runner:  # the queue's matcher: a periodic task in every worker (matchmaker.py)
            app.ctx.matchmaker = Matchmaker(app.ctx.games, fill_ms=settings.queue_fill_ms,
                                            interval_ms=settings.queue_interval_ms)
            app.ctx.tasks.append(loop.create_task(app.ctx.matchmaker.run(app.ctx.stop)))
            app.ctx.rounds = RoundsAdvancer(app)  # each tournament's next round, as the last one ends (round_tables.py)
            app.ctx.tasks.append(loop.create_task(app.ctx.rounds.run(app.ctx.stop)))
        if (compaction := getattr(store, "compaction", None)) is not None:  # the embedded store's journal, kept small
            app.ctx.tasks.append(loop.create_task(compaction.watch(app.ctx.stop, settings.compact_ratio,
                                                                   settings.compact_min_bytes)))
        if settings.projector:
            app.ctx.projector = Projector(store, f"{socket.gethostname()}-{os.getpid()}", log_keep_ms=settings.log_keep_ms)
            app.ctx.tasks.append(loop.create_task(app.ctx.projector.run_forever(app.ctx.stop, poll_interval=settings.projector_poll_ms / 1000)))

    @app.before_server_stop
    async def _close(app: Sanic) -> None:
        app.ctx.stop.set()
        for task in app.ctx.tasks:
            task.cancel()
        await asyncio.gather(*app.ctx.tasks, return_exceptions=True)
        task = app.ctx.games.players.close()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        await app.ctx.games.watches.stop()  # before the store's connections close under its read: no false "paused"
        await app.ctx.store.close()

    return app


def _shown(host: str) -> str:
    """The address to open in a browser: a service listening on every interface answers on the loopback too."""
    return {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, f"[{host}]" if ":" in host else host)


class StartupRefused(Exception):
    """The service cannot start as configured (the store unreachable, a durability it cannot have, a journal only
    ``--repair`` may cut, a data folder it cannot use): one line that says what to do, for the operator."""


def receipts_for(settings: Settings) -> Receipts | None:
    """The signer of receipts (``None`` when they are off): the keyring, made at the first start."""
    if not settings.receipts:
        return None
    try:
        retired = retired_from(settings.retired_keys) if settings.retired_keys is not None else []
        return Receipts(keyring_at(settings.keys_folder, now_ms(), settings.signing_key, retired))
    except KeyringError as e:
        raise StartupRefused(str(e)) from e
    except OSError as e:
        raise StartupRefused(f"the keys folder {settings.keys_folder} cannot be used: {e.strerror or e}") from e


async def hold_listing_head(store: Store, keyring: Keyring) -> None:
    """Refuse a key listing's chain that does not extend the head the store recorded at the last start, then record
    this one. The head is kept in the store, apart from the keyring's files: an operator who rewrites the chain there
    by hand, however consistently, does not also rewrite it here by accident (docs/fairness.md, Keys)."""
    recorded = await store.listing_head()
    if recorded is not None:
        n, head = recorded
        if n > len(keyring.entries) or (n and keyring.entries[n - 1].hash != head):
            raise StartupRefused(f"the key listing's chain (head {keyring.head[:12]}, {len(keyring.entries)} entries) does "
                                 f"not extend the head {head[:12]} of {n} entries this store recorded when the service last "
                                 "started: an earlier entry was rewritten; restore the chain (keys/keylist.json)")
        if n == len(keyring.entries):
            return
    await store.put_listing_head(len(keyring.entries), keyring.head)


async def open_store_for(settings: Settings) -> tuple[Store, Durability]:
    """The store ``settings`` name, checked; ``StartupRefused`` with the reason when it cannot be had."""
    try:
        return await open_store_checked(
            settings.redis_url,
            settings.data_dir,
            namespace=settings.namespace,
            fsync=settings.fsync,
            durability=settings.durability,
            cluster=settings.cluster,
            connections=settings.store_connections,
            wait_ms=settings.store_wait_ms,
            repair=settings.repair,
            archive=settings.archive_root,
            sentinel=settings.sentinel,
            replicas=settings.replicas,
            replica_wait_ms=settings.replica_wait_ms,
        )
    except (JournalCorrupt, NotDurable, ArchiveError, DataInUse, SettingsError) as e:
        raise StartupRefused(str(e)) from e
    except StoreUnavailable as e:
        raise StartupRefused(f"the store at {settings.sentinel or settings.redis_url} cannot be reached: {e}") from e
    except OSError as e:  # the data folder: a file, not writable, no space
        raise StartupRefused(f"the data folder {settings.data_dir} cannot be used: {e.strerror or e} ({e.filename or ''})") from e


_SPEC_FILES: dict[str, str] = {}


def _head_where_get(app: Sanic) -> None:
    """HEAD on every GET route but the streamed ones (``openapi.streamed``), sanic-ext's own among them (Sanic sends
    the GET answer's headers, no body), added while the app is made: sanic-ext's ``http_auto_head`` adds them as the
    server starts, where each route added rebuilds the router again (about half a second an app start here). A
    streamed route's HEAD is 405 with ``Allow: GET`` (docs/limits.md)."""
    for group in list(app.router.groups.values()):
        if "GET" not in group.methods or "HEAD" in group.methods:
            continue
        for route in [r for r in group if "GET" in r.methods and not getattr(r.handler, "streamed", False)]:
            app.add_route(functools.partial(_head, get_handler=route.handler), group.uri, methods=["HEAD"],
                          host=route.requirements.get("host"), strict_slashes=group.strict, name=f"{route.name}_head",
                          unquote=group.unquote)


async def _head(request: Any, *args: Any, get_handler: Any, **kwargs: Any) -> Any:
    answer = get_handler(request, *args, **kwargs)
    return await answer if inspect.isawaitable(answer) else answer


def _spec_file(document: dict) -> str:
    """sanic-ext serves /docs from a file: the document the service built from its msgspec schemas (one file
    per distinct document and process, however many apps are made)."""
    text = json.dumps(document)
    if text not in _SPEC_FILES:
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="free-parking-openapi-", delete=False) as f:
            f.write(text)
        _SPEC_FILES[text] = f.name
    return _SPEC_FILES[text]


@contextlib.asynccontextmanager
async def serving_here(app: Sanic) -> AsyncIterator[str]:
    """Run ``app`` inside the current event loop on a free loopback port; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # Sanic reads port 0 as "the default, 8000": bind a free port ourselves
    server = await app.create_server(sock=sock, return_asyncio_server=True, access_log=False)
    assert server is not None
    await server.startup()
    await server.before_start()
    await server.after_start()
    await server.start_serving()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        await server.before_stop()
        server.close()
        await server.wait_closed()
        await server.after_stop()
