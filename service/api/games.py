"""Games as the service holds them: a per-worker cache of deciders over the store's streams.

A command is decided on the cached state, sealed, and appended with that state's version as the
expected one; the cache adopts the result only after the store accepted it. A worker whose cache is
behind learns it from a conflict (or a refused command) and folds the stream's tail — the state is
never refolded from scratch per command.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

from service.bots.names import bot_name
from service.events.base import Player
from service.events.common import Create, Seeding, TakeSeat
from service.events.entries import encode_entry
from service.events.envelope import Envelope, canonical, redacted
from service.store.store import AppendRequest, NotReplicated, Store, command_digest
from service.rules.engine import Game
from service.rules.errors import RuleViolation

from . import metrics, player_events, resend
from .signed import check_signed
from .errors import ApiError, not_found
from .game_terms import At, Claimed, Conflict, Executed, Peek, Repeat, SeatOf, Unseated, now_ms, reused
from .kinds import config_for
from .schedule import archive_due, due_at, idle_due
from .watch import Watches

RETRIES = 4

class Games:
    def __init__(
        self,
        store: Store,
        *,
        cache_size: int = 20_000,
        bot_delay_ms: int = 0,
        human_pace_ms: int = 0,
        chance_ms: int = 0,
        idle_ms: int = 0,
        key_id: str | None = None,
        archive_after_ms: int = 0,
    ) -> None:
        self.store = store
        self.archive_after_ms = archive_after_ms  # a finished game is due for the archive this long after (0: never)
        self.key_id = key_id  # the key that signs receipts, recorded in each new game's ``game_created``
        self.idle_ms = idle_ms  # a game nobody moved on for this long is closed (0: never; see schedule.idle_due)
        self.cache: OrderedDict[str, Game] = OrderedDict()
        self.cache_size = cache_size
        self.bot_delay_ms = bot_delay_ms
        self.human_pace_ms = human_pace_ms  # a bot's least wait at a table where a person sits (schedule.pace)
        self.chance_ms = chance_ms  # …and after an event that opened a chance for a person (chances.py)
        self._loading: dict[str, asyncio.Lock] = {}
        self._tails: list[tuple[str, int, asyncio.Future[list[Envelope]]]] = []  # reads waiting to go out together
        self._reader: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference to a task
        self.on_due: Callable[[str, int, int], None] | None = None  # the runner's schedule (game, time, version), if any
        self.watches = Watches(self)  # the event streams' one reader per game (watch.py), woken by this worker's appends
        self.players = player_events.PlayerFeed(store)  # the players' streams' one reader (player_events.py)

    # --- loading ------------------------------------------------------------------------------

    async def load(self, game_id: str) -> Game:
        """The game from the cache, else folded once from its stream."""
        game = self.cache.get(game_id)
        if game is not None:
            self.cache.move_to_end(game_id)
            return game
        lock = self._loading.setdefault(game_id, asyncio.Lock())
        try:
            async with lock:
                game = self.cache.get(game_id)
                if game is None:
                    game = await self._fold(game_id)
                    self._remember(game)
        finally:  # a 404 (or a store error) too: an id nobody has must not stay behind
            if self._loading.get(game_id) is lock and not lock.locked():
                del self._loading[game_id]
        return game

    async def _fold(self, game_id: str) -> Game:
        meta = await self.store.meta(game_id)
        if meta is None or "kind" not in meta:
            raise not_found("game", game_id)
        game = Game.recorded(meta["kind"], game_id, meta["config"], meta["seed"])
        game.fold(await self.store.read(game_id))
        return game

    def _remember(self, game: Game) -> None:
        self.cache[game.game_id] = game
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    async def fresh(self, game_id: str) -> Game:
        """The game at the store's latest version: the cache plus the stream's tail."""
        game = await self.load(game_id)
        tail = await self._tail(game_id, game.version)
        if tail:
            # not the next event, or not chained to the cached head: the cache holds events the store no longer has
            # (Redis restarted without them, see docs/durability.md) and the game went on without them: fold it again
            if tail[0].seq != game.version + 1 or tail[0].prev_hash != game.head:
                self.cache.pop(game_id, None)
                return await self.load(game_id)
            game.fold(tail)
        return game

    async def _tail(self, game_id: str, after: int) -> list[Envelope]:
        """The events after ``after``. Concurrent calls of this worker go out together, in one round trip
        (``Store.read_many``), as concurrent appends do (group commit): a burst of views costs one client call."""
        if self.store.name == "embedded":  # no round trip to share: the store answers a read past the end itself
            return await self.store.read(game_id, after=after)
        future: asyncio.Future[list[Envelope]] = asyncio.get_running_loop().create_future()
        self._tails.append((game_id, after, future))
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read_tails())
        return await future

    async def _read_tails(self) -> None:
        try:
            while self._tails:
                batch, self._tails = self._tails, []
                try:
                    reads: list[Any] = await self.store.read_many([(game_id, after, None) for game_id, after, _ in batch])
                except NotReplicated as e:  # one game's events on no replica yet: read each alone, so that games
                    if len(batch) == 1:  # known replicated are shown at once, not refused with it
                        reads = [e]
                    else:
                        reads = await asyncio.gather(*(self.store.read_many([(g, after, None)]) for g, after, _ in batch),
                                                     return_exceptions=True)  # fmt: skip
                        reads = [r if isinstance(r, BaseException) else r[0] for r in reads]
                except Exception as e:  # noqa: BLE001 - every waiting read must hear of it
                    reads = [e] * len(batch)
                for (*_, future), read in zip(batch, reads, strict=True):
                    if future.done():
                        continue
                    if isinstance(read, BaseException):
                        future.set_exception(read)
                    else:
                        future.set_result(read)
        finally:
            self._reader = None

    # --- creating and seating -----------------------------------------------------------------

    async def create(
        self,
        kind: str,
        seats: int,
        options: dict[str, Any],
        seed: bytes | None,
        *,
        game_id: str | None = None,
        meta: dict[str, str] | None = None,
        seeding: Seeding | None = None,
    ) -> Game:
        """Create a game; a tournament names its table's id (in its partition) and adds its own ``meta``.

        A ``seed`` given here was chosen (by the admin, or by a solitaire player): kinds that keep statistics mark it, and
        the game is ``fixed`` — dealt from that seed as is. Any other game is ``combined``: its seed is derived, when the
        last seat is taken, from the seed drawn here (committed now) and every seat's client seed (docs/rng.md). A
        tournament over rounds gives its table's ``seed`` with its own ``seeding`` (``duplicate``, ``tournament``):
        derived from the tournament's seed, which nobody chose (``service/rules/rounds``)."""
        config = config_for(kind, seats, options, seed_chosen=seed is not None and seeding is None)
        game_id = game_id or "g_" + secrets.token_hex(8)
        seeding = seeding or ("fixed" if seed is not None else "combined")
        seed = seed if seed is not None else secrets.token_bytes(32)
        game = Game.new(kind, game_id, config, seed)
        created_at = now_ms()
        meta = {
            **(meta or {}),
            "kind": kind,
            "config": canonical(config).decode(),
            "seed": seed.hex(),
            "created_at": str(created_at),
            "seats": str(seats),
            "seeding": seeding,  # for GET /games, which reads metadata only
        }
        try:
            await self._append(game, Create(seeding=seeding, key_id=self.key_id), None, None, "", meta=meta, now=created_at)
        except Conflict:  # only a game id named by its caller can be taken: a round's table, made by another worker
            raise ApiError(409, "version_conflict", "A game of this id exists already: another worker made it a moment "
                           "ago", game_id=game_id) from None
        self._remember(game)
        return game

    async def seat(
        self,
        game_id: str,
        player: Player,
        reserved: frozenset[str] = frozenset(),
        *,
        tournament: str | None = None,
        client_seed: str | None = None,
        queue_claim: str | None = None,
    ) -> tuple[Game, int]:
        """Seat ``player`` in the next free seat; the game deals when the last is taken. Seats ``reserved`` for
        registered players (a tournament's) are kept for them: others may take only the seats left over. At a table
        of a ``tournament`` a registered player takes one seat in the whole tournament: the append claims it, and
        refuses a player who holds one at another table (reserved there, or already seated). ``client_seed`` is the one the
        player sent (64 lowercase hex, checked at the edge); ``seat_taken`` records it, or one derived for a seat that sent
        none. ``queue_claim``: the play-now queueing (its queue id) this seat is taken for, by the matcher: the append
        takes it in the game's slot, and refuses it once the claim was settled as lost (``Store.queue_fence``)."""
        claim = {}
        if tournament is not None and player.player_id and not (player.guest or player.bot):
            claim = {"claims": self.store.keys.tournament_seats(tournament), "claim": player.player_id}
        if queue_claim is not None:
            claim = {"claims": self.store.keys.queue_seats(game_id), "claim": queue_claim}
        for _ in range(RETRIES):
            game = await self.fresh(game_id)
            self.check_seat(game, player, reserved)
            if player.bot:  # a name of its own at this table, chosen on the state it is seated on
                player = msgspec.structs.replace(player, name=bot_name(player.bot, (st.player.name for st in game.state.seats if st.player)))
            try:
                taken = sum(st.player is not None for st in game.state.seats) + 1  # for GET /games
                executed = await self._append(game, TakeSeat(player=player, client_seed=client_seed), None, None, "", meta={"taken": str(taken)}, **claim)
            except Conflict:
                continue
            except Claimed as c:
                if queue_claim is not None:
                    raise ApiError(409, "claim_lost", "This queueing's table took too long to make and was settled without "
                                   "this seat: queue again", game_id=game_id) from None
                raise ApiError(409, "already_seated", "This player already has a seat in this tournament, at another "
                               "table: one seat per player per tournament", game_id=c.holder) from None
            seat = next(i for i, st in enumerate(executed.game.state.seats) if st.player == player)
            return executed.game, seat
        raise ApiError(409, "version_conflict", "The game changed while you joined; try again")

    @staticmethod
    def check_seat(game: Game, player: Player, reserved: frozenset[str] = frozenset()) -> None:
        """409 unless ``player`` may take a seat of ``game`` now (see ``seat``)."""
        seated = {st.player.player_id for st in game.state.seats if st.player}
        if player.player_id in seated:
            raise ApiError(409, "already_seated", "This player already has a seat at this game")
        keys = {st.player.public_key for st in game.state.seats if st.player and st.player.public_key}
        if player.public_key is not None and player.public_key in keys:  # the signed bytes name no seat: the key does
            raise ApiError(409, "already_seated", "A seat of this game is already keyed with this `public_key`: a key "
                           "keys one seat per game (docs/signed-commands.md)", public_key=player.public_key)
        if game.rules.status_of(game.state) != "waiting":
            raise ApiError(409, "game_full", "Every seat of this game is taken", game_id=game.game_id)
        free = sum(st.player is None for st in game.state.seats)
        if player.player_id not in reserved and free <= len(reserved - seated):
            raise ApiError(409, "seat_reserved", "Every free seat of this table is reserved for a registered player: "
                           "join with that player's token", game_id=game.game_id)

    # --- commands -----------------------------------------------------------------------------

    async def execute(
        self,
        game_id: str,
        command: msgspec.Struct,
        seat_of: SeatOf,
        *,
        actor_key: str,
        command_id: str | None,
        expected_version: int | None,
    ) -> Executed:
        """Decide and append ``command`` as the seat ``seat_of`` finds for the caller in the very state it is decided
        on and appended after (its version is the append's expected one): a cache that predates a trade of places can
        never lend a player the seat they left. A lost race is re-decided on the fresh state unless the client pinned
        ``expected_version`` (then it is theirs to see: 409). ``actor_key`` scopes the command id: the caller's token,
        not their seat, so a resend after the seat changed still finds its first answer."""
        key = f"{actor_key}:{command_id}" if command_id else ""
        # the body's digest tells a repeated command id's first command from another one: only needed with an id
        digest = command_digest(canonical(msgspec.structs.replace(command, command_id=None))) if key else ""
        asked = resend.Asked(key, digest, command, actor_key, command_id)
        game = await self.load(game_id)
        for _ in range(RETRIES):
            if expected_version is not None and expected_version != game.version:
                game = await self.fresh(game_id)
                if expected_version != game.version:
                    repeat = await self._repeat(game_id, asked)  # a retry of a command that went through
                    if repeat is not None:
                        return repeat
                    raise ApiError(409, "version_conflict", f"The game is at version {game.version}, not {expected_version}", version=game.version)
            try:
                seat = seat_of(game)
                check_signed(game, seat, command, command_id)  # on the state, and version, it is decided on
                return await self._append(game, command, seat, command_id, key, digest=digest)
            except (RuleViolation, Unseated):
                repeat = await self._repeat(game_id, asked)
                if repeat is not None:
                    return repeat
                before = game.version
                game = await self.fresh(game_id)
                if game.version == before:  # refused on the latest state: the refusal stands
                    raise
            except Conflict:
                if expected_version is not None:
                    repeat = await self._repeat(game_id, asked)
                    if repeat is not None:
                        return repeat
                    game = await self.fresh(game_id)
                    raise ApiError(409, "version_conflict", "Another command was applied first", version=game.version) from None
                game = await self.fresh(game_id)
            except Repeat as r:
                return await self._first_answer(game_id, r.first, r.last)
        raise ApiError(409, "version_conflict", "The game is too busy right now; try again")

    async def _repeat(self, game_id: str, asked: resend.Asked) -> Executed | None:
        """The first answer when this command id was seen before with this body; 409 with another body."""
        if not asked.key:
            return None
        record = await self.store.command_record(game_id, asked.key)
        if record is None:  # an archived game's records went with its events: its log has them
            record = await resend.archived_record(self.store, game_id, asked)
        if record is None:
            return None
        if record.digest != asked.digest:
            replication = self.store.replication  # the first use told of only once a failover cannot take it back
            if replication is not None:
                await replication.cover(self.store, [(game_id, record.last)])
            raise reused()
        return await self._first_answer(game_id, record.first, record.last)

    async def _first_answer(self, game_id: str, first: int, last: int) -> Executed:
        envelopes = await self.store.read(game_id, after=first - 1, count=last - first + 1)
        return Executed(envelopes, await self.fresh(game_id), duplicate=True)

    async def _append(
        self,
        game: Game,
        command: msgspec.Struct,
        seat: int | None,
        command_id: str | None,
        key: str,
        *,
        digest: str = "",
        meta: dict[str, str] | None = None,
        now: int | None = None,
        claims: str = "",
        claim: str = "",
    ) -> Executed:
        now = now if now is not None else now_ms()
        envelopes, state = game.decide(command, seat, now, command_id)
        status = game.rules.status_of(state)
        peek = Peek(game, state, envelopes)
        # counted from the events' own time (never before the last one's), and told the state before them: a wait for a
        # chance the events opened is measured from them (chances.py)
        owed = due_at(peek, peek.last_at, self.bot_delay_ms, self.human_pace_ms, chance_ms=self.chance_ms,
                      before=game.state)
        idle = idle_due(peek, self.idle_ms)
        cold = archive_due(peek, self.archive_after_ms) if self.store.archive is not None else None
        due = min((t for t in (owed, idle, cold) if t is not None), default=None)
        told = player_events.told(game, state, envelopes)  # what the append does for its players, kept with it
        result = await self.store.append(
            AppendRequest(
                game_id=game.game_id,
                kind=game.rules.KIND,
                expected_version=game.version,
                entries=[encode_entry(e) for e in envelopes],
                head=envelopes[-1].hash,
                status=status,
                created_at=game.created_at or now,
                due_at=due,
                command_key=key,
                command_digest=digest,
                meta=meta or {},
                claims=claims,
                claim=claim,
                told=told,
            )
        )
        metrics.labelled(metrics.APPENDS, result.outcome).inc()
        if result.outcome == "ok":
            if game.version == envelopes[0].seq - 1:
                game.commit(envelopes, state)
            else:
                self.cache.pop(game.game_id, None)
            if owed is not None and self.on_due is not None:  # an idle close is far off: the runner's scans find it
                self.on_due(game.game_id, owed, peek.version)
            self.watches.wake(game.game_id)
            if told:
                await player_events.tell(self.store, game.game_id)  # the players' own streams, from the game's outbox
            return Executed(envelopes, game)
        if result.outcome == "conflict":
            if result.version < game.version:  # the store is behind the cache: it lost events the cache holds
                self.cache.pop(game.game_id, None)  # (Redis restarted without them): the retry folds the store again
            raise Conflict()
        if result.outcome == "duplicate":
            raise Repeat(result.first, result.last)
        if result.outcome == "claimed":
            raise Claimed(result.holder)
        raise reused()

    # --- reads --------------------------------------------------------------------------------

    async def events(self, game_id: str, after: int, limit: int, reveal: Callable[[Game], bool]) -> tuple[At, list[Envelope]]:
        """The events after ``after`` (at most ``limit``), up to the version the game is at now, with that version, its
        head and time: one state answers it all, and ``reveal`` (may the caller see every secret?) is asked of it too."""
        game = await self.fresh(game_id)
        at, shown = At(game.version, game.head, game.last_at), reveal(game)
        count = min(limit, at.version - after)
        envelopes = await self.store.read(game_id, after=after, count=count) if count > 0 else []
        return at, envelopes if shown else [redacted(e) for e in envelopes]
