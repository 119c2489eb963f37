"""What an acknowledged event survives, and refusing to start when that is less than the service was told.

With a real Redis an append is acknowledged once Redis has applied it; whether it survives a crash
depends on the server's append-only file (see ``docs/durability.md``):

* ``appendonly no`` — only RDB snapshots: an event acknowledged since the last one is lost in a crash;
* ``appendonly yes`` with ``appendfsync no`` / ``everysec`` — a Redis crash alone usually loses nothing
  (the write is in the operating system), but a machine crash or power cut loses what was not yet
  fsynced: up to ~30 s with ``no``, ~1 s (2 s at worst) with ``everysec``;
* ``appendfsync always`` — Redis fsyncs before it answers: nothing acknowledged is lost;
* ``WAITAOF 1 0 0`` (Redis ≥ 7.2) after each append pipeline — the service answers only once the
  append is fsynced to the local AOF, whatever ``appendfsync`` says: nothing acknowledged is lost.

``check_durability(client, "durable")`` picks WAITAOF where the server has it, else requires
``appendonly yes`` and ``appendfsync always``, and raises ``NotDurable`` naming the setting to change
when neither can be had — also when the settings cannot be read (``CONFIG`` disabled or renamed).
``"none"`` never refuses: it only reports what the current settings promise.

On a Redis Cluster every primary is inspected (each holds some games' only copy): ``"durable"`` is refused
when any one of them cannot promise it, naming that node, and when they would be made durable in different
ways (WAITAOF on some, ``appendfsync always`` on others: run one version and one configuration).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from redis import exceptions as rex
from redis.asyncio.cluster import RedisCluster

from .store import UNAVAILABLE, NotDurable, StoreUnavailable, unavailable

Requested = Literal["none", "durable", "replicated"]
REQUESTED = ("none", "durable", "replicated")
Method = Literal["none", "waitaof", "appendfsync-always", "journal-flush", "journal-fsync"]

WAITAOF_SINCE = (7, 2)
_UNREACHABLE = UNAVAILABLE
NO_AOF = (
    "Redis keeps no append-only file (`appendonly no`): an acknowledged event is lost if Redis stops "
    "before its next RDB snapshot (with `save \"\"`, everything is lost)"
)
GUARANTEES = {
    "no": (
        "Redis writes each event to its append-only file but leaves the fsync to the operating system "
        "(`appendfsync no`): a crash of Redis alone loses nothing, a crash of the machine (power, kernel) "
        "can lose the last ~30 s of acknowledged events"
    ),
    "everysec": (
        "Redis fsyncs its append-only file once a second (`appendfsync everysec`): a crash of Redis alone "
        "usually loses nothing, a crash of the machine (power, kernel) can lose up to about the last second "
        "of acknowledged events (two at worst)"
    ),
    "always": "Redis fsyncs its append-only file before it answers (`appendfsync always`): nothing acknowledged is lost",
}
WAITAOF_GUARANTEE = (
    "each append waits for WAITAOF 1 0 0, so it is answered only once it is fsynced to the local append-only "
    "file: nothing acknowledged is lost (a failover to a replica that had not received it still can)"
)
UNKNOWN = "the server's append-only settings could not be read (CONFIG GET is disabled or renamed): the guarantee is unknown"


class Durability(msgspec.Struct, frozen=True, kw_only=True):
    """What the service will do so that an acknowledged event survives, and what that promises."""

    requested: Requested
    method: Method
    waitaof: bool  # build the RedisStore with ``waitaof=True``
    guarantee: str
    server_version: str | None = None
    replicas: int = 0  # ``replicated``: each write waits for this many replicas (WAIT)
    has_waitaof: bool | None = None  # None: could not be told
    appendonly: str | None = None  # None: CONFIG GET unavailable
    appendfsync: str | None = None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def _version(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in text.split(".")[:2]) if text else None
    except ValueError:
        return None


async def _config(client: Any, name: str) -> str | None:
    """A setting as ``CONFIG GET`` tells it, or None when CONFIG is disabled, renamed or refused (ACL)."""
    try:
        got = await client.config_get(name)
    except _UNREACHABLE:
        raise
    except rex.RedisError:
        return None
    for key, value in (got or {}).items():
        if _text(key) == name:
            return _text(value)
    return None


async def _server_version(client: Any) -> str | None:
    try:
        info = await client.info("server")
    except _UNREACHABLE:
        raise
    except rex.RedisError:
        return None
    return _text(info.get("redis_version") or info.get(b"redis_version"))


async def _has_waitaof(client: Any, version: str | None) -> bool | None:
    """Whether the server knows WAITAOF: asked of COMMAND INFO, else told by the version."""
    try:
        got = await client.execute_command("COMMAND INFO", "WAITAOF")
        return bool(got) and got[0] is not None
    except _UNREACHABLE:
        raise
    except rex.RedisError:
        parsed = _version(version)
        return None if parsed is None else parsed >= WAITAOF_SINCE


async def _probe_waitaof(client: Any) -> str | None:
    """Run WAITAOF once (this connection has written nothing, so it answers at once): None if it works,
    else the server's reason (``appendonly no`` makes it refuse numlocal = 1)."""
    try:
        reply = await client.execute_command("WAITAOF", 1, 0, 1000)
    except _UNREACHABLE:
        raise
    except rex.RedisError as e:
        return str(e)
    if isinstance(reply, list | tuple) and reply and int(reply[0]) >= 1:
        return None
    return f"WAITAOF answered {reply!r}"


def _guarantee(appendonly: str | None, appendfsync: str | None) -> str:
    if appendonly is None:
        return UNKNOWN
    if appendonly != "yes":
        return NO_AOF
    return GUARANTEES.get(appendfsync or "", f"appendfsync is {appendfsync!r}: the guarantee is unknown")


NONE_HINT = "or start the service with FREE_PARKING_DURABILITY=none to accept the server as it is"


async def check_durability(client: Any, requested: str, replicas: int = 1) -> Durability:
    """Inspect the server behind ``client`` and say how appends will be made durable.

    Raises ``NotDurable`` when ``requested`` is ``"durable"`` (or ``"replicated"``, which is ``"durable"`` and more)
    and the server cannot promise that nothing acknowledged is lost, or when ``"replicated"`` finds a primary with
    fewer than ``replicas`` replicas attached; the message names the setting to change.
    """
    if requested not in REQUESTED:
        raise ValueError(f"durability must be one of {', '.join(REQUESTED)}, not {requested!r}")
    try:
        if isinstance(client, RedisCluster):
            return await _check_cluster(client, requested, replicas)
        return await _check_replicated(client, requested, replicas, "the primary")
    except _UNREACHABLE as e:
        raise StoreUnavailable(str(e)) from e


REPLICATED_GUARANTEE = (
    "; and each write waits (WAIT) until {n} replica(s) have it, so a failover to a replica (Sentinel, Cluster) keeps "
    "every acknowledged event"
)


async def _check_replicated(client: Any, requested: str, replicas: int, server: str) -> Durability:
    """``_check``; for ``"replicated"`` the local durability of ``"durable"`` (a primary that restarts without a write
    before a failover would hand its replicas a log without it: the replicas copy the primary) and ``replicas`` replicas
    attached now (``INFO replication``)."""
    if requested != "replicated":
        return await _check(client, requested)
    local = await _check(client, "durable")
    info = await client.info("replication")
    role = _text(info.get("role"))
    if role != "master":
        raise NotDurable(f"replicated appends go to a primary, and {server} is a {role}: name the primary (REDIS_URL), "
                         "or reach it through Sentinel (REDIS_SENTINEL)")  # fmt: skip
    online = [f"{v.get('ip')}:{v.get('port')}" for k, v in info.items()
              if str(k).startswith("slave") and isinstance(v, dict) and _text(v.get("state")) == "online"]  # fmt: skip
    if len(online) < replicas:
        have = f"{len(online)} ({', '.join(online)})" if online else "none"
        raise NotDurable(
            f"replicated appends wait for {replicas} replica(s) to confirm each write, and {server} has {have} online: "
            "attach a replica (`replicaof`), or lower --replicas (FREE_PARKING_REPLICAS), or start the service with "
            f"FREE_PARKING_DURABILITY=durable to accept that a failover may lose acknowledged events"
        )
    guarantee = local.guarantee + REPLICATED_GUARANTEE.format(n=replicas)
    return msgspec.structs.replace(local, requested="replicated", replicas=replicas, guarantee=guarantee)


class _OnNode:
    """One node of a cluster, asked the way ``_check`` asks a server: every command sent to that node."""

    def __init__(self, client: RedisCluster, node: Any) -> None:
        self._client, self._node = client, node

    async def config_get(self, name: str) -> Any:
        return await self._client.config_get(name, target_nodes=self._node)

    async def info(self, section: str) -> Any:
        return await self._client.info(section, target_nodes=self._node)

    async def execute_command(self, *args: Any) -> Any:
        return await self._client.execute_command(*args, target_nodes=self._node)


async def _check_cluster(client: RedisCluster, requested: str, replicas: int) -> Durability:
    try:
        await client.initialize()
    except rex.RedisClusterException as e:
        if unavailable(e):  # no startup node answered
            raise StoreUnavailable(str(e)) from e
        raise  # e.g. "Cluster mode is not enabled on this node": REDIS_URL names a single server
    found: list[tuple[str, Durability]] = []
    for node in sorted(client.get_primaries(), key=lambda n: n.name):
        try:
            found.append((node.name, await _check_replicated(_OnNode(client, node), requested, replicas, node.name)))
        except NotDurable as e:
            raise NotDurable(f"on the cluster's primary {node.name}: {e}") from None
    first = found[0][1]
    methods = {d.method for _, d in found}
    if len(methods) > 1:
        each = ", ".join(f"{name}: {d.method}" for name, d in found)
        raise NotDurable(
            f"the cluster's primaries would be made durable in different ways ({each}): run one Redis version "
            f"and one append-only configuration on every primary, {NONE_HINT}"
        )
    guarantees = {d.guarantee for _, d in found}
    if len(guarantees) == 1:
        guarantee = f"on every primary of the cluster: {first.guarantee}"
    else:
        guarantee = "; ".join(f"on {name}: {d.guarantee}" for name, d in found)
    return msgspec.structs.replace(first, guarantee=guarantee)


async def _check(client: Any, requested: str) -> Durability:
    version = await _server_version(client)
    has_waitaof = await _has_waitaof(client, version)
    appendonly = await _config(client, "appendonly")
    appendfsync = await _config(client, "appendfsync")
    seen = {
        "server_version": version,
        "has_waitaof": has_waitaof,
        "appendonly": appendonly,
        "appendfsync": appendfsync,
    }
    server = f"Redis {version}" if version else "this Redis"

    if requested == "none":
        return Durability(requested="none", method="none", waitaof=False, guarantee=_guarantee(appendonly, appendfsync), **seen)

    if has_waitaof:
        if appendonly not in (None, "yes"):
            raise NotDurable(
                f"durable appends wait for WAITAOF, which needs the append-only file, and {server} has "
                f"`appendonly {appendonly}`: set `appendonly yes` (redis.conf, or CONFIG SET appendonly yes), {NONE_HINT}"
            )
        refused = await _probe_waitaof(client)
        if refused is not None:
            raise NotDurable(
                f"durable appends wait for WAITAOF, and {server} refused it ({refused}): set `appendonly yes` "
                f"(redis.conf, or CONFIG SET appendonly yes), {NONE_HINT}"
            )
        return Durability(requested="durable", method="waitaof", waitaof=True, guarantee=WAITAOF_GUARANTEE, **seen)

    missing = "has no WAITAOF (it came in Redis 7.2)" if has_waitaof is False else "may not have WAITAOF (its version could not be read)"
    if appendonly is None or appendfsync is None:
        raise NotDurable(
            f"durable appends need `appendonly yes` and `appendfsync always` when the server {missing}, and the "
            f"settings of {server} cannot be read (CONFIG GET is disabled or renamed): allow CONFIG GET for the "
            f"service, or run Redis >= 7.2 (WAITAOF), {NONE_HINT}"
        )
    if appendonly != "yes" or appendfsync != "always":
        now = f"it has `appendonly {appendonly}`" + (f" and `appendfsync {appendfsync}`" if appendonly == "yes" else "")
        change = "set `appendonly yes` and `appendfsync always`" if appendonly != "yes" else "set `appendfsync always`"
        raise NotDurable(
            f"durable appends need `appendonly yes` and `appendfsync always` on {server}, which {missing}; "
            f"{now}: {change} (redis.conf, or CONFIG SET), or run Redis >= 7.2 (WAITAOF), {NONE_HINT}"
        )
    return Durability(
        requested="durable", method="appendfsync-always", waitaof=False, guarantee=GUARANTEES["always"], **seen
    )


JOURNAL_GUARANTEES = {
    False: (
        "each write is journalled and flushed to the operating system before it is answered: a crash or kill "
        "of the service loses nothing acknowledged, a crash of the machine (power, kernel) can lose the "
        "writes of the last few seconds (until the operating system wrote them out)"
    ),
    True: (
        "each write is journalled and fsynced before it is answered (`--fsync`): nothing acknowledged is lost, "
        "even in a power cut"
    ),
}


def embedded_durability(requested: str, fsync: bool) -> Durability:
    """The embedded store's guarantee; ``"durable"`` needs the journal fsynced (``--fsync``)."""
    if requested not in REQUESTED:
        raise ValueError(f"durability must be one of {', '.join(REQUESTED)}, not {requested!r}")
    if requested == "replicated":
        raise NotDurable("replicated writes wait for Redis replicas, and the embedded store has none: set REDIS_URL "
                         "(or REDIS_SENTINEL) to a replicated Redis, or use --durability durable with --fsync")  # fmt: skip
    if requested == "durable" and not fsync:
        raise NotDurable(
            "durable writes on the embedded store need the journal fsynced: start the service with `--fsync` "
            f"(FREE_PARKING_FSYNC=true), {NONE_HINT}"
        )
    return Durability(
        requested=requested,  # type: ignore[arg-type]
        method="journal-fsync" if fsync else "journal-flush",
        waitaof=False,
        guarantee=JOURNAL_GUARANTEES[fsync],
    )


LOSES_NOTHING: frozenset[str] = frozenset({"waitaof", "appendfsync-always", "journal-fsync"})
"""The methods under which nothing acknowledged is lost, even in a crash of the machine."""


def loses_nothing(durability: Durability) -> bool:
    """Whether an acknowledged write survives any crash: what a tournament needs (an embedded journal that is only
    flushed survives a crash of the service, not a power cut, so it does not count)."""
    return durability.method in LOSES_NOTHING
