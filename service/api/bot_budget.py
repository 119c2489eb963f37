"""Games of bots alone, paced by the address that made them (docs/limits.md, "Commands per player and per address").

A bot's seat takes no token and the server plays a table of bots alone at once, so without this one address could
append without bound and send no command: ten solitaires, each with a bot, appended ~5,700 events a minute. So a
game a person (not the admin) creates under the limits records, in its store-side metadata, the name of the
command bucket of the address that created it (``commands:addr:<hash>``: the hash, never the address; the event log,
which is exported, holds none of it), and each server bot move in that game, while no person sits at it, takes a token
from that bucket before it is appended. An empty bucket is a wait, never a refusal: the runner looks again when a
token is back. A table with a person is paced by that person, whose commands are charged; the server's timeouts and
closes are no bot's moves; admin-made games, and games made before this, name no bucket and are not charged.

A bot account is no person (docs/bots.md): the server's bots do not wait a person's pace for it, so at its tables they
are charged as at a table of bots alone. A game a bot account creates names its address's bot accounts' bucket
(``bot_commands:addr:<hash>``, kept by that limit), and so does a queue's table of bot accounts only (``Entry``): the
server's bots there play at the bot accounts' budget, not at a person's.
"""

from __future__ import annotations

from collections import OrderedDict

from sanic import Request

from service.store.store import Store

from .auth import Caller
from .limits import ADDRESS_COMMANDS, BOT_ADDRESS_COMMANDS, Limiter, address_commands_bucket

BUCKET_META = "bots_bucket"
"""The field of a game's store metadata naming the bucket its bots are charged to."""
KNOWN = 10_000
"""Games whose bucket a worker remembers (the metadata field is written once, at the game's creation)."""


def bots_meta(limiter: Limiter, request: Request, who: Caller) -> dict[str, str]:
    """The metadata a new game records for its bots' charge: the creating address's bucket (its bot accounts' for a
    bot account), when commands are limited per address and the creator is not the admin; else nothing."""
    limit = BOT_ADDRESS_COMMANDS if who.bot_account else ADDRESS_COMMANDS
    if who.admin or limit not in limiter.limits:
        return {}
    return {BUCKET_META: address_commands_bucket(request, bot=who.bot_account)}


class BotBudget:
    """Takes a token for a bot's move in a game of bots alone from the bucket its metadata names."""

    def __init__(self, limiter: Limiter, store: Store) -> None:
        self.limiter, self.store = limiter, store
        self._buckets: OrderedDict[str, str | None] = OrderedDict()

    async def bucket_of(self, game_id: str) -> str | None:
        if game_id in self._buckets:
            self._buckets.move_to_end(game_id)
            return self._buckets[game_id]
        meta = await self.store.meta(game_id)
        bucket = self._buckets[game_id] = (meta or {}).get(BUCKET_META)
        while len(self._buckets) > KNOWN:
            self._buckets.popitem(last=False)
        return bucket

    async def take(self, game_id: str) -> tuple[str | None, int]:
        """The bucket charged (``None``: none is) and the wait in ms when it had no token (0: taken)."""
        bucket = await self.bucket_of(game_id) if self.limiter.limits else None
        limit = self.limiter.of_bucket(bucket) if bucket is not None else None
        if bucket is None or limit is None:
            return None, 0
        wait = await self.store.rate_take(bucket, self.limiter.clock(), limit.interval_ms, limit.burst)
        return (None, wait) if wait else (bucket, 0)

    async def give_back(self, bucket: str) -> None:
        """A token taken for a move that was not appended (another worker's came first) goes back."""
        limit = self.limiter.of_bucket(bucket)
        if limit is not None:
            await self.store.rate_give_back(bucket, self.limiter.clock(), limit.interval_ms)
