"""Per-client limits on what is kept for good: new players, games and seats, and commands (docs/limits.md).

Each limit is a token bucket (GCRA, ``Store.rate_take_all``): ``burst`` at once, then ``per_minute``. A request is
charged to its client address's bucket and to its player's (a registered player's for what creates records; a
guest's too for commands, every seat being a new player), so neither many players on one address nor one player on
many addresses gets past it. The buckets live in the store, so the limit holds across workers; a request is charged
to all its buckets in one step, or to none, and a refused one writes nothing else. The admin is never limited.

A bot account has limits of its own (``bot_`` before the action: ``bot_games``, ``bot_seats``, ``bot_commands``), in
buckets of their own, so that a program playing many games at once neither runs into a person's limits nor uses up
the budget of the people behind its address; registering is limited alike for both.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Callable

import msgspec
from sanic import Request

from service.store.store import Store

from .auth import Caller
from .errors import ApiError
from .games import now_ms
from .settings import Settings

WHAT = {"games": "new games", "players": "new players", "seats": "seats taken", "commands": "commands"}
BOT = "bot_"
"""Before an action's name, a bot account's limit of it (and its buckets' names): ``bot_commands``."""
WHAT |= {BOT + action: words for action, words in WHAT.items() if action != "players"}
ADDRESS_COMMANDS = "commands:addr"
"""The key in ``limits_of`` of the commands limit per address (the action is ``commands``, by ``address``)."""
BOT_ADDRESS_COMMANDS = BOT + ADDRESS_COMMANDS
"""…and of the bot accounts' commands per address (with the server bots' moves at their tables of no person)."""


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
        "seats": Limit(settings.seats_burst, settings.seats_per_minute),
        "commands": Limit(settings.commands_burst, settings.commands_per_minute),
        ADDRESS_COMMANDS: Limit(settings.address_commands_burst, settings.address_commands_per_minute),
        "bot_games": Limit(settings.bot_games_burst, settings.bot_games_per_minute),
        "bot_seats": Limit(settings.bot_seats_burst, settings.bot_seats_per_minute),
        "bot_commands": Limit(settings.bot_commands_burst, settings.bot_commands_per_minute),
        BOT_ADDRESS_COMMANDS: Limit(settings.bot_address_commands_burst, settings.bot_address_commands_per_minute),
    }
    return {action: limit for action, limit in wanted.items() if limit.per_minute > 0}


def client_address(request: Request) -> str:
    """Whom a request comes from: the address the trusted proxies name (Sanic's ``remote_addr``, set only when
    ``PROXIES_COUNT``, ``REAL_IP_HEADER`` or ``FORWARDED_SECRET`` say whom to trust), else the peer's. An IPv6 client
    counts as its /56: a home connection is delegated a /56 (or a /48: RIPE-690), whose 256 /64s must not be 256
    clients; a business's /48 is then 256 of them. A 6to4 address counts as the IPv4 address it is made from."""
    raw = request.remote_addr or request.ip
    try:
        ip = ipaddress.ip_address(raw.strip("[]"))
    except ValueError:
        return raw  # a unix socket, or an obfuscated name a proxy sent (RFC 7239)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if ip.sixtofour is not None:  # 2002:<v4>::/48 is one IPv4 address's: 256 /56s, one client
            return str(ip.sixtofour)
        return str(ipaddress.IPv6Network((ip, 56), strict=False))
    return str(ip)


def rate_limited(action: str, by: str, limit: Limit, wait_ms: int) -> ApiError:
    """429, with the wait in whole seconds (at least one) in ``Retry-After`` and ``detail.retry_after``."""
    seconds = max(1, -(-wait_ms // 1000))
    source = "from this address" if by == "address" else "by this player"
    if action.startswith(BOT):
        source = "of bot accounts " + source if by == "address" else "by this bot account"
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
        """Take a token for ``action`` (``games``, ``players``, ``seats``) from each of the caller's buckets, or raise
        429 having kept none. A bot account's games and seats are its own limits' (``bot_games``, ``bot_seats``)."""
        if who is not None and who.bot_account and action != "players":
            action = BOT + action
        limit = self.limits.get(action)
        if limit is None or (who is not None and who.admin):
            return
        await self._take([(bucket, action, by, limit) for bucket, by in _buckets(action, request, who)])

    async def charge_command(self, request: Request, who: Caller) -> None:
        """Take a token for a command from its player's bucket (a guest's too: a command is an event kept for good,
        and a solitaire has no end of them) and from its address's, which bounds the many players an address can
        have — a new guest with every seat — or raise 429 having kept none: one store call, the command's hot path.
        A bot account's commands take theirs from the bot accounts' buckets (``bot_commands``)."""
        if who.admin or who.player_id is None:
            return
        action = BOT + "commands" if who.bot_account else "commands"
        takes = []
        if (limit := self.limits.get(action)) is not None:
            takes.append((f"{action}:player:{who.player_id}", action, "player", limit))
        if (limit := self.limits.get(f"{action}:addr")) is not None:
            takes.append((address_commands_bucket(request, bot=who.bot_account), action, "address", limit))
        await self._take(takes)

    def of_bucket(self, bucket: str) -> Limit | None:
        """The limit a bucket is kept by, read off its name (``<action>:addr:…`` or ``<action>:player:…``)."""
        action, by, _ = bucket.split(":", 2)
        return self.limits.get(f"{action}:addr" if by == "addr" else action)

    async def _take(self, takes: list[tuple[str, str, str, Limit]]) -> None:
        if not takes:
            return
        buckets = [(bucket, limit.interval_ms, limit.burst) for bucket, _, _, limit in takes]
        refused, wait = await self.store.rate_take_all(buckets, self.clock())
        if refused >= 0:
            _, action, by, limit = takes[refused]
            raise rate_limited(action, by, limit, wait)


def address_commands_bucket(request: Request, *, bot: bool = False) -> str:
    """The bucket of the commands from the request's address (the bots of a game it creates are charged to it too);
    ``bot``: its bot accounts' bucket."""
    return f"{BOT if bot else ''}commands:addr:{_address_key(request)}"


def _address_key(request: Request) -> str:
    """The client address as a bucket names it: hashed, so no client address is stored."""
    return hashlib.sha256(client_address(request).encode()).hexdigest()[:32]


def _buckets(action: str, request: Request, who: Caller | None) -> list[tuple[str, str]]:
    """The buckets a request is charged to: its address's (hashed: no client address is stored), and a registered
    player's. A guest's token is not a player's: anyone gets one by joining a game, so it would be no limit."""
    out = [(f"{action}:addr:{_address_key(request)}", "address")]
    if who is not None and who.player_id is not None and who.guest_of is None:
        out.append((f"{action}:player:{who.player_id}", "player"))
    return out
