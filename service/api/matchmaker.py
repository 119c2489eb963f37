"""The play-now queue's matcher (docs/queue.md): a periodic task in every worker, over the one queue in the store.

Each pass reads the whole queue, plans the tables with the pure ``service.rules.matching.match`` and seats each one:
it first *claims* the table's players in the store (one atomic step: ``Store.queue_claim``), and only the worker whose
claim took creates the game. Two workers planning the same table therefore never seat a player twice; the one that
lost its claim drops the table, and its next pass sees the queue as it is now. A periodic task, not the runner's due
set: the due set holds games, and a queue entry is not one; every worker running a cheap pass keeps the queue moving
when one worker dies, with no lease to hand over.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec

from service.bots import STRENGTH, params_of
from service.bots.sight import SIGHTED
from service.events.base import Account, Player, recorded
from service.projections.ratings import read_kind
from service.rules.matching import Table, Waiting, closest_bot, match
from service.rules.ratings import MODEL, shown
from service.store.outage import Outage

from .auth import new_id
from .bot_budget import BUCKET_META
from .errors import ApiError
from .games import Games, now_ms
from .kinds import KINDS
from .player_events import tell_queue

log = logging.getLogger("free_parking.queue")
DEFAULT_RATING = shown(MODEL.mu, MODEL.sigma)


class Entry(msgspec.Struct, kw_only=True):
    """A player's place in the queue, as stored (``Store.queue_join``)."""

    queue_id: str
    player_id: str
    name: str
    kind: str
    seats: int
    options: dict[str, Any] = {}
    client_seed: str | None = None
    public_key: str | None = None
    since: int
    account: Account = "person"
    bots_bucket: str | None = None
    """A bot account's: the bucket its address's bot accounts are charged to (``bot_budget.bots_meta``), which a table
    of bot accounts only charges its server bots' moves to; ``None`` for a person, or with the limits off."""

    @property
    def group(self) -> str:
        return f"{self.kind}/{self.seats}/{msgspec.json.encode(self.options, order='sorted').decode()}"


class Status(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What became of a player's last entry: ``claimed`` (its game is being made), ``seated``, or ``cancelled``."""

    queue_id: str
    state: str
    game_id: str | None = None
    seat: int | None = None
    reason: str | None = None
    at: int | None = None  # when the table was claimed (``claimed``): a claim this old was left by a worker that stopped


SEATING_LOST_MS = 60_000
"""A table is claimed, made and filled in well under a second; a claim older than this was left by a worker that stopped
between its claim and its last seat (``queue.py`` then settles it from the game itself)."""

_entry = msgspec.json.Decoder(Entry)
_status = msgspec.json.Decoder(Status)
encode = msgspec.json.Encoder().encode


def decode_entry(raw: bytes) -> Entry:
    return _entry.decode(raw)


def decode_status(raw: bytes) -> Status:
    return _status.decode(raw)


async def ratings_of(store: Any, kind: str) -> dict[str, float]:
    """Every rated player's (and bot kind's) rating shown in ``kind``."""
    return {rid: r.shown for rid, r in (await read_kind(store, kind)).kinds.get(kind, {}).items()}


class Matchmaker:
    def __init__(self, games: Games, *, fill_ms: int, interval_ms: int = 500) -> None:
        self.games = games
        self.fill_ms = fill_ms
        self.interval_ms = interval_ms
        self.outage = Outage(log, "matcher")

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.pass_once()
                self.outage.ok()
            except Exception as e:  # noqa: BLE001 - a store outage or a bug must not end the worker's matching
                self.outage.failed(e)
            try:
                await asyncio.wait_for(stop.wait(), self.interval_ms / 1000)
            except TimeoutError:
                pass

    async def pass_once(self, now: int | None = None) -> int:
        """Plan and seat the tables the queue allows now; how many this worker seated."""
        store = self.games.store
        raw = await store.queue_waiting()
        if not raw:
            return 0
        entries = {pid: (decode_entry(b), b) for pid, b in raw.items()}
        ratings = {kind: await ratings_of(store, kind) for kind in {e.kind for e, _ in entries.values()}}
        waiting = [Waiting(player_id=pid, group=e.group, seats=e.seats, since=e.since,
                           rating=ratings[e.kind].get(pid, DEFAULT_RATING)) for pid, (e, _) in entries.items()]
        made = 0
        for table in match(waiting, now if now is not None else now_ms(), self.fill_ms):
            made += await self.seat(table, [entries[pid] for pid in table.players], ratings)
        return made

    async def seat(self, table: Table, chosen: list[tuple[Entry, bytes]], ratings: dict[str, dict[str, float]]) -> int:
        """Claim the table's players, then make and fill its game; 0 when another worker claimed one of them first."""
        first = chosen[0][0]
        game_id = new_id("g")
        at = now_ms()
        claimed = {e.player_id: encode(Status(queue_id=e.queue_id, state="claimed", game_id=game_id, at=at))
                   for e, _ in chosen}
        if not await self.games.store.queue_claim([(e.player_id, raw, claimed[e.player_id]) for e, raw in chosen]):
            return 0
        seats: dict[str, int] = {}
        try:
            meta = _bots_meta(chosen)  # a table of bot accounts only: its server bots are charged (bot_budget.py)
            await self.games.create(first.kind, first.seats, first.options, None, game_id=game_id, meta=meta)
            for e, _ in chosen:
                player = Player(name=e.name, player_id=e.player_id, public_key=e.public_key, account=recorded(e.account))
                _, seats[e.player_id] = await self.games.seat(game_id, player, client_seed=e.client_seed,
                                                              queue_claim=e.queue_id)
            await self._bots(game_id, first.kind, table.bots, [ratings[first.kind].get(e.player_id, DEFAULT_RATING)
                                                                for e, _ in chosen], ratings[first.kind])
        except Exception as e:  # noqa: BLE001 - each player must hear of it, whatever stopped the table
            _log_unmade(game_id, e)
            reason = f"the table could not be made ({type(e).__name__}); queue again"
            await self._settle(chosen, claimed, game_id, seats, reason)
            return 0
        await self._settle(chosen, claimed, game_id, seats)
        return 1

    async def _settle(self, chosen: list[tuple[Entry, bytes]], claimed: dict[str, bytes], game_id: str,
                      seats: dict[str, int], reason: str = "") -> None:
        """Settle each player's claim as what the table did for them: ``seated`` (with the seat) if they sat down —
        at a table left part-filled too, as ``GET /queue`` settles a lost claim from the game — else ``cancelled``
        with ``reason``: told "queue again" while seated, a player would be seated twice for one queueing. Said on
        their stream only if the claim was still theirs (a ``GET /queue`` that settled a claim this worker took too
        long over said it)."""
        for entry, _ in chosen:
            seat = seats.get(entry.player_id)
            if seat is not None:
                done, told = Status(queue_id=entry.queue_id, state="seated", game_id=game_id, seat=seat), {"seat": seat}
            else:
                done = Status(queue_id=entry.queue_id, state="cancelled", game_id=game_id, reason=reason)
                told = {"reason": "the table could not be made; queue again"}
            if await self.games.store.queue_settle(entry.player_id, claimed[entry.player_id], encode(done)):
                await tell_queue(self.games.store, entry.player_id, done.state, game_id=game_id, **told)

    async def _bots(self, game_id: str, kind: str, count: int, people: list[float], rated: dict[str, float]) -> None:
        """Fill ``count`` seats with the bot kind rated closest to the table's players (their mean rating)."""
        if not count:
            return
        target = sum(people) / len(people)
        bot = closest_bot({b: rated.get(f"bot:{b}", DEFAULT_RATING) for b in KINDS[kind].bots}, target, STRENGTH[kind])
        for _ in range(count):
            player = Player(name=f"{bot} bot", player_id=new_id("b"), bot=bot, bot_version=SIGHTED,
                            bot_params=params_of(kind, bot))
            await self.games.seat(game_id, player)


def _log_unmade(game_id: str, e: Exception) -> None:
    """A seat refused because its claim was settled as lost (``claim_lost``: this worker stalled past
    ``SEATING_LOST_MS``) is the fence at work, an outcome foreseen and handled: a warning. Anything else stopped the
    table unforeseen: an error, with its traceback."""
    if isinstance(e, ApiError) and e.code == "claim_lost":
        log.warning("the queue's table %s was left unmade: a claim of it was settled as lost while this worker made it",
                    game_id)
    else:
        log.error("the queue's table %s could not be made", game_id, exc_info=e)


def _bots_meta(chosen: list[tuple[Entry, bytes]]) -> dict[str, str]:
    """A table of bot accounts only charges its server bots' moves to the first one's address (``bot_budget.py``); a
    table with a person is paced by that person, and charges nothing."""
    if any(e.account == "person" for e, _ in chosen):
        return {}
    bucket = next((e.bots_bucket for e, _ in chosen if e.bots_bucket), None)
    return {BUCKET_META: bucket} if bucket else {}
