"""What the event store is asked and answers, and the errors it raises: the contract both stores keep
(``store.py`` reads, ``redis_store.py`` runs each write as its script, ``embedded.py`` journals it)."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import msgspec
from redis import exceptions as rex

from .keys import STATUSES, Keys

UNAVAILABLE: tuple[type[BaseException], ...] = (
    rex.ConnectionError,
    rex.TimeoutError,
    OSError,
    rex.ClusterDownError,  # a cluster without a quorum, or a slot's primary failing over
    rex.SlotNotCoveredError,
)
"""What says the store cannot be reached right now (as opposed to a refused or malformed command)."""


REFUSING = ("OOM ", "READONLY ", "MISCONF ", "NOREPLICAS ", "MASTERDOWN ", "LOADING ", "BUSY ", "TRYAGAIN ", "CLUSTERDOWN ",
            "WAIT cannot be used with replica")  # a WAIT sent to a demoted primary (a cluster's stale slot map): ERR …
"""Error replies of a server that answers but takes no write now: full (``maxmemory`` with ``noeviction``), a
replica (after a failover), unable to persist, still loading, busy with a script, resharding. Nothing was written."""


def unavailable(e: BaseException) -> bool:
    """Whether ``e`` says the store cannot be reached, or cannot take the command now: one of ``UNAVAILABLE``, an
    error reply of ``REFUSING``, or a cluster client that could reach none of the nodes it knows (a
    ``RedisClusterException`` raised from a connection error)."""
    if isinstance(e, UNAVAILABLE):
        return True
    if isinstance(e, rex.ResponseError):
        return isinstance(e, rex.OutOfMemoryError | rex.ReadOnlyError) or (str(e) + " ").startswith(REFUSING)
    return isinstance(e, rex.RedisClusterException) and isinstance(e.__cause__, UNAVAILABLE)


class StoreUnavailable(Exception):
    """The store cannot be reached; nothing was written (or the write's outcome is unknown and was not acknowledged)."""


class StoreBusy(StoreUnavailable):
    """Every connection to the store stayed in use for the pool's whole wait: nothing was written; retry shortly.
    A kind of unavailability (whoever handles that handles this), which the API answers in words of its own."""


class NotDurable(Exception):
    """The server could lose an acknowledged event under the durability the service was asked for."""


class NotReplicated(StoreUnavailable):
    """Fewer replicas than asked confirmed a write within the bound (``--durability replicated``): not acknowledged.
    The write may still be on the primary, and show later — or be taken back by a failover; a resend with the same
    command id is safe, and is answered once the replicas have it. A kind of unavailability (retry shortly), which the
    API answers in words of its own."""


Outcome = Literal["ok", "duplicate", "command_id_reused", "conflict", "claimed"]


class AppendRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One command's batch, with everything the append script checks and writes."""

    game_id: str
    expected_version: int
    entries: list[bytes]
    # what the append tells its players (``service/api/player_events.py``: a JSON list of [player id, event]), written to
    # the game's outbox with the events, so that it is told (``Store.tell_players``) even if the worker dies right after
    told: bytes = b""
    kind: str = ""  # the game's kind: the append keeps that kind's index of games by status too
    head: str
    status: str
    created_at: int
    due_at: int | None = None
    command_key: str = ""
    command_digest: str = ""
    meta: dict[str, str] = {}
    # a claim this append must hold or take: the field ``claim`` of the hash ``claims`` names this game, or nothing yet
    # (then the append writes it); another game's name refuses the append ("claimed"). One seat per tournament.
    claims: str = ""
    claim: str = ""

    def __post_init__(self) -> None:
        # checked before anything is written: the script would otherwise fail midway (status) or
        # record a pointer to an empty range and a head nothing hashes to (no entries)
        if bool(self.claims) != bool(self.claim):
            raise ValueError(f"an append to {self.game_id} claims with both a hash and a field, or neither")
        if not self.entries:
            raise ValueError(f"an append to {self.game_id} needs at least one entry")
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; one of {', '.join(STATUSES)}")


class Appended(msgspec.Struct, frozen=True):
    outcome: Outcome
    version: int
    first: int = 0
    last: int = 0
    holder: str = ""  # "claimed": the game that holds the claim


class Projected(msgspec.Struct, frozen=True):
    """What a projection write did: ``applied`` (or refused: the checkpoint had moved / the item was already there)
    and the checkpoint (or item version) now stored."""

    applied: bool
    version: int


class ProjectionCorrupt(Exception):
    """A game's audit list does not hold one line per applied event: something other than a projector wrote it."""


class CommandRecord(msgspec.Struct, frozen=True):
    digest: str
    first: int
    last: int


def raise_first(results: list[Any]) -> None:
    """Raise the first error a pipeline answered in place (``StoreUnavailable`` for a lost server)."""
    for r in results:
        if isinstance(r, Exception) and unavailable(r):
            raise StoreUnavailable(str(r)) from r
        if isinstance(r, Exception):
            raise r


def text(value: object) -> str:
    """A Redis reply as text, whether the connection decodes replies or not."""
    return value.decode() if isinstance(value, bytes) else str(value)


def command_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def parse_record(raw: bytes | str) -> CommandRecord:
    digest, first, last = (raw.decode() if isinstance(raw, bytes) else raw).split(":")
    return CommandRecord(digest, int(first), int(last))



def append_args(keys: Keys, req: AppendRequest) -> tuple[list[str], list[Any]]:
    """The append script's KEYS and ARGV for ``req``."""
    argv: list[Any] = [
        req.expected_version,
        req.command_key,
        req.command_digest,
        req.game_id,
        req.status,
        req.created_at,
        "" if req.due_at is None else req.due_at,
        req.claim,
        len(req.meta),
    ]
    for k, v in req.meta.items():
        argv += [k, v]
    argv.append(len(req.entries))
    argv += req.entries
    argv += [req.head, req.told]
    return keys.game_keys(req.game_id, req.kind) + ([req.claims] if req.claim else []), argv


SOLITAIRE_SETS = ("started", "finished", "times", "wins")
"""A solitaire statistics bucket's sorted sets, in ``solitaire_stats.lua``'s order (``Store.project_solitaire_game``)."""
