"""Per-client limits on what creates records kept for good: new players and new games (docs/limits.md).

Each limit is a token bucket (GCRA, ``Store.rate_take``): ``burst`` at once, then ``per_minute``. A request is
charged to its client address's bucket and, when it carries a registered player's token, to that player's too, so
neither many players on one address nor one player on many addresses gets past it. The buckets live in the store,
so the limit holds across workers; a request refused by one bucket gives back what it took from the others, and
writes nothing else. The admin is never limited.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections import OrderedDict
from collections.abc import Callable

import msgspec
from sanic import Request

from service.store.store import Store

from .auth import Caller
from .errors import ApiError
from .games import now_ms
from .settings import Settings

WHAT = {"games": "new games", "players": "new players", "commands": "commands"}


class Limit(msgspec.Struct, frozen=True):
    burst: int
    per_minute: int

    @property
    def interval_ms(self) -> int:
        """One token every this many ms (rounded up: never more than ``per_minute``)."""
        return -(-60_000 // self.per_minute)


def limits_of(settings: Settings) -> dict[str, Limit]:
    """The limits the settings ask for; none when they are off, and none for an action at 0 a minute."""
    if not settings.rate_limits:
        return {}
    wanted = {
        "games": Limit(settings.games_burst, settings.games_per_minute),
        "players": Limit(settings.players_burst, settings.players_per_minute),
        "commands": Limit(settings.commands_burst, settings.commands_per_minute),
    }
    return {action: limit for action, limit in wanted.items() if limit.per_minute > 0}


def client_address(request: Request) -> str:
    """Whom a request comes from: the address the trusted proxies name (Sanic's ``remote_addr``, set only when
    ``PROXIES_COUNT``, ``REAL_IP_HEADER`` or ``FORWARDED_SECRET`` say whom to trust), else the peer's. An IPv6 client
    counts as its /56: a home connection is delegated a /56 (or a /48: RIPE-690), whose 256 /64s must not be 256
    clients; a business's /48 is then 256 of them."""
    raw = request.remote_addr or request.ip
    try:
        ip = ipaddress.ip_address(raw.strip("[]"))
    except ValueError:
        return raw  # a unix socket, or an obfuscated name a proxy sent (RFC 7239)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 56), strict=False))
    return str(ip)


def rate_limited(action: str, by: str, limit: Limit, wait_ms: int) -> ApiError:
    """429, with the wait in whole seconds (at least one) in ``Retry-After`` and ``detail.retry_after``."""
    seconds = max(1, -(-wait_ms // 1000))
    source = "from this address" if by == "address" else "by this player"
    message = (
        f"Too many {WHAT[action]} {source}: try again in {seconds} s "
        f"(up to {limit.burst} at once, then {limit.per_minute} a minute)"
    )
    return ApiError(
        429, "rate_limited", message, headers={"retry-after": str(seconds)},
        retry_after=seconds, limit=action, by=by, burst=limit.burst, per_minute=limit.per_minute,
    )  # fmt: skip


class Limiter:
    """The service's limits over the store's buckets; ``clock`` (ms) can be replaced, e.g. by a test's."""

    def __init__(self, store: Store, limits: dict[str, Limit], clock: Callable[[], int] = now_ms) -> None:
        self.store, self.limits, self.clock = store, limits, clock

    async def charge(self, action: str, request: Request, who: Caller | None = None) -> None:
        """Take a token for ``action`` from each of the caller's buckets, or raise 429 having kept none."""
        limit = self.limits.get(action)
        if limit is None or (who is not None and who.admin):
            return
        now, taken = self.clock(), []
        for bucket, by in _buckets(action, request, who):
            wait = await self.store.rate_take(bucket, now, limit.interval_ms, limit.burst)
            if wait:
                for back in taken:
                    await self.store.rate_give_back(back, now, limit.interval_ms)
                raise rate_limited(action, by, limit, wait)
            taken.append(bucket)


class CommandLimiter:
    """Commands per player, per worker, in this worker's memory: a command is the hot path, and a store round trip per
    command would cost more than it guards. What it guards: every command a game accepts is an event kept for good
    (a solitaire's moves and undos have no end), so one client must not append without bound. With W workers a player
    gets W times the rate, which bounds it all the same. Buckets of players idle past the burst are forgotten."""

    SIZE = 100_000

    def __init__(self, limit: Limit | None, clock: Callable[[], int] = now_ms) -> None:
        self.limit, self.clock = limit, clock
        self._due: OrderedDict[str, int] = OrderedDict()  # GCRA: each player's theoretical arrival time

    def charge(self, who: Caller) -> None:
        """Take one of ``who``'s tokens, or raise 429."""
        if self.limit is None or who.admin or who.player_id is None:
            return
        now, step = self.clock(), self.limit.interval_ms
        due = max(self._due.pop(who.player_id, now), now)
        if due - now > step * (self.limit.burst - 1):
            self._due[who.player_id] = due
            raise rate_limited("commands", "player", self.limit, due - now - step * (self.limit.burst - 1))
        self._due[who.player_id] = due + step
        while len(self._due) > self.SIZE:
            self._due.popitem(last=False)


def _buckets(action: str, request: Request, who: Caller | None) -> list[tuple[str, str]]:
    """The buckets a request is charged to: its address's (hashed: no client address is stored), and a registered
    player's. A guest's token is not a player's: anyone gets one by joining a game, so it would be no limit."""
    address = hashlib.sha256(client_address(request).encode()).hexdigest()[:32]
    out = [(f"{action}:addr:{address}", "address")]
    if who is not None and who.player_id is not None and who.guest_of is None:
        out.append((f"{action}:player:{who.player_id}", "player"))
    return out
