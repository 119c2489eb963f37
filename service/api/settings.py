"""The service's settings, from the command line or the environment (workers read the environment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from service.store.logtrim import LOG_KEEP_MS
from service.store.pool import CONNECTIONS, WAIT_MS
from service.store.sentinel import MASTER, SentinelAddress, parse_sentinels
from service.store.stores import ClusterMode

ENV_PREFIX = "FREE_PARKING_"


REPLICA_WAIT_MOST_MS = 4_000
"""The longest ``--replica-wait-ms``: the store's connections read with redis-py's socket timeout (5 s), so a WAIT
bounded longer was cut by it — the connection dropped mid-wait, and the client told 503 ``store_unavailable`` after 5 s
rather than ``not_replicated`` after the bound; and Redis refuses a WAIT of 2**63 ms or more, which made every write
(and every read's barrier) a 500. A second is left for the round trip and a busy loop."""


class Settings(msgspec.Struct, kw_only=True):
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    data_dir: Path = Path("data")
    redis_url: str | None = None
    cluster: ClusterMode = "auto"  # is redis_url a node of a Redis Cluster? auto: ask it (INFO cluster)
    namespace: str = "fp"
    admin_token: str | None = None
    durability: Literal["none", "durable", "replicated"] = "none"
    # Redis through Sentinel (REDIS_SENTINEL=host:port,…; the primary's name in REDIS_SENTINEL_MASTER), and what
    # --durability replicated waits for: this many replicas, at most this long, else 503 (docs/durability.md)
    redis_sentinel: str | None = None
    redis_sentinel_master: str = MASTER
    replicas: Annotated[int, msgspec.Meta(ge=1)] = 1
    replica_wait_ms: Annotated[int, msgspec.Meta(ge=1, le=REPLICA_WAIT_MOST_MS)] = 1000
    fsync: bool = False
    repair: bool = False  # embedded store: drop what the journal cannot read past, kept beside it (docs/durability.md)
    # embedded store: compact the journal when it is this many times its live size (0: never) and at least this big
    compact_ratio: Annotated[float, msgspec.Meta(ge=0)] = 4.0
    compact_min_bytes: Annotated[int, msgspec.Meta(ge=0)] = 64 * 2**20
    allow_volatile: bool = False
    max_body: int = 64 * 1024
    projector: bool = True
    projector_poll_ms: int = 200
    log_keep_ms: int = LOG_KEEP_MS  # a partition log entry every projector applied is trimmed once this old (logtrim.py)
    runner: bool = True
    runner_interval_ms: int = 1000
    bot_delay_ms: int = 0
    human_pace_ms: int = 1000  # at a table where a person sits, a bot waits at least this long before it acts
    human_chance_ms: int = 4000  # …and this long after an event that opened a chance for the person (api/chances.py)
    cache_size: int = 20_000
    store_connections: int = CONNECTIONS  # per worker; more concurrent requests wait for one (service/store/pool.py)
    store_wait_ms: int = WAIT_MS  # how long a request waits for a store connection before 503 store_busy
    backlog: int = 1024  # connections the kernel holds for the workers to accept (Sanic's 100 drops a burst's SYNs)
    rate_limits: bool = True  # per-client limits on new players, games, seats and commands (docs/limits.md); false: none
    games_burst: int = 20  # new games a client may create at once…
    games_per_minute: int = 60  # …and then a minute (0: games are not limited)
    players_burst: int = 20
    players_per_minute: int = 6
    seats_burst: int = 20  # seats a client (an address, a registered player) may take at once (a bot's: not counted)…
    seats_per_minute: int = 60  # …and then a minute (0: seats are not limited)
    commands_burst: int = 60  # commands one player (a token, a guest's too) may send at once, counted in the store…
    commands_per_minute: int = 600  # …and then a minute (0: not limited per player)
    address_commands_burst: int = 120  # commands all the players on one client address may send at once…
    address_commands_per_minute: int = 600  # …and then a minute (0: not limited per address)
    # a bot account's own limits (docs/limits.md, "Bot accounts"), per account and per address: sized for a program
    # playing ten games at once against the server's bots, which wait no person's pace for it
    bot_games_burst: int = 40
    bot_games_per_minute: int = 120
    bot_seats_burst: int = 40
    bot_seats_per_minute: int = 120
    bot_commands_burst: int = 600  # one bot account's commands
    bot_commands_per_minute: int = 6000
    bot_address_commands_burst: int = 1200  # the bot accounts of an address together, and the server's bots at their
    bot_address_commands_per_minute: int = 12000  # tables where no person sits (api/bot_budget.py)
    queue_fill_ms: int = 20_000  # a player waiting this long in the play-now queue is seated with bots (docs/queue.md)
    queue_interval_ms: int = 500  # how often each worker's matcher looks at the queue (docs/queue.md)
    idle_close_ms: int = 24 * 3600 * 1000  # a game nobody joined or moved on for this long is closed (0: never)
    receipts: bool = True  # sign a receipt for every version a reader is shown (docs/fairness.md); false: none
    keys_dir: Path | None = None  # where the keyring lives (default: <data_dir>/keys), shared by every worker
    signing_key: str | None = None  # or the signing key itself, 64 hex digits, the same for every worker and host
    retired_keys: Path | None = None  # a file of public keys that signed before (GET /keys' shape, each with not_after)
    archive_dir: str | None = None  # finished games' archive: a folder or an fsspec URL (default: <data_dir>/archive)
    archive_after_ms: int = 24 * 3600 * 1000  # a game finished this long ago moves to the archive (0: never)
    archive_lease_ms: int = 30_000  # a partition's archiver holds its lease this long (a killed one's runs out then)
    access_log: bool = False  # one JSON line per request on stderr (logger free_parking.access)
    ready_lag: int = 10_000  # /readyz: the most partition log entries the projectors may be behind
    proxies_count: Annotated[int, msgspec.Meta(ge=0)] = 0  # proxies that append to X-Forwarded-For: the client is the address they saw

    @property
    def keys_folder(self) -> Path:
        return self.keys_dir if self.keys_dir is not None else self.data_dir / "keys"

    @property
    def archive_root(self) -> str:
        return self.archive_dir if self.archive_dir else str(self.data_dir / "archive")

    @property
    def store_name(self) -> str:
        return "redis" if self.redis_url or self.redis_sentinel else "embedded"

    @property
    def sentinel(self) -> SentinelAddress | None:
        """Where the Sentinels are, or None; ``SettingsError`` (one line) for an address that is none."""
        if not self.redis_sentinel:
            return None
        try:
            return parse_sentinels(self.redis_sentinel, self.redis_sentinel_master)
        except ValueError as e:
            raise SettingsError(f"REDIS_SENTINEL: {e}") from None

    def to_env(self) -> dict[str, str]:
        """The settings as environment variables, for worker processes to read back."""
        out = {}
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value is not None:
                out[ENV_PREFIX + name.upper()] = str(value).lower() if isinstance(value, bool) else str(value)
        return out

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        raw: dict[str, object] = {}
        for name in cls.__struct_fields__:
            key = ENV_PREFIX + name.upper()
            if key in env:
                raw[name] = env[key]
        for name in ("redis_url", "redis_sentinel", "redis_sentinel_master"):  # also unprefixed, as Redis's tools name them
            if env.get(name.upper()) and name not in raw:
                raw[name] = env[name.upper()]
        try:
            settings = msgspec.convert(raw, cls, strict=False, dec_hook=_from_text)
        except msgspec.ValidationError as e:  # said in the operator's words: which variable, and what is wrong with it
            message, _, where = str(e).partition(" - at `$.")
            name = where.rstrip("`").split(".")[0].split("[")[0]
            raise SettingsError(f"{ENV_PREFIX}{name.upper()}: {message}" if name else str(e)) from None
        settings.sentinel  # noqa: B018 - refused here, in one line, not at the store's start
        if not compact_ratio_ok(settings.compact_ratio):
            raise SettingsError(f"{ENV_PREFIX}COMPACT_RATIO: 0 (never) or a number more than 1 and finite, not "
                                f"{settings.compact_ratio:g} (a journal just compacted is 1 × its live size)")
        return settings


def compact_ratio_ok(ratio: float) -> bool:
    """0 (never), or more than 1 and finite: at 1 or less a journal just compacted is due again at once (it is 1 × its
    live size), and the service rewrote it every second for nothing."""
    return ratio == 0 or 1 < ratio < float("inf")


class SettingsError(ValueError):
    """A setting from the environment that cannot be read (``FREE_PARKING_WORKERS=abc``, a negative count)."""


def _from_text(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(kind)
