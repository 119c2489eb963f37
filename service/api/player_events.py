"""What a player must act on, across their games: the events of ``GET /players/me/stream`` (docs/player-stream.md).

Each registered player has one store stream of their own (``Keys.player_stream``). ``derive`` (pure) compares a game's
state before and after an append; ``Games._append`` puts what it derived into the append itself (``told``), so the
store keeps it with the game's events, atomically, in the game's outbox, and then relays it (``tell``) into the players'
streams; the projector relays every append that told something before acknowledging it, so a worker that dies in
between delays the event, never loses it (``service/store/told.py``: exactly once per player). A stream entry's id is
the SSE ``id`` a client resumes from.

- ``seated`` ``{game_id, seat, kind}``: the player took a seat (or was seated at creation);
- ``turn`` ``{game_id, seat, version, deadline_at}``: the seat's playing moves (``legal`` less ``resign``) went from
  none to some: a move, or an answer, awaits the player;
- ``game_over`` ``{game_id, seat, version, result, rated, ratings}``: the game finished; ``result`` says how
  (``ended_by``: the ending event, ``winner_seat``, ``won``); the rating change is a read model the projector
  computes after the end, so ``rated`` says whether the game counts and ``ratings`` names
  ``GET /games/{id}/ratings``, whose ``rated`` turns true once the change is known;
- ``queue`` ``{status, …}``: written by ``notify`` (the matchmaking queue's code calls it).

On Redis, every relay also writes a pointer (the player's id) to one log of all players (``Keys.player_log``), which
one reader per worker follows (``PlayerFeed``) to wake the streams it serves: another worker's write reaches an idle
stream at once, and an idle stream holds no store connection. The cost in the hot path: two state checks per
registered seat (``legal_commands``) and, only when something changed for a player, the outbox's entry in the append
and three round trips to relay it (docs/player-stream.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any


from service.rules.ratings.finish import RATED_KINDS, RATED_SEEDING
from service.rules.resign import playing_on
from service.store.store import Store
from service.store.told import encode_told

from .watch import FEED_BLOCK_MS, POLL_SECONDS, _go_on

log = logging.getLogger("free_parking")

ENDINGS = ("game_won", "game_lost", "game_ended", "game_closed")
"""The events that end a game: the card game's and solitaire's ``game_won``, solitaire's ``game_lost``, Monopoly's
``game_ended``, and ``game_closed`` (the idle close) in every kind."""


def _registered(player: Any) -> str | None:
    return player.player_id if player is not None and player.registered else None


def _awaited(rules: Any, state: Any, seat: int) -> bool:
    return rules.status_of(state) == "playing" and bool(playing_on(rules.legal_commands(state, seat)))


def _deadline(state: Any, seat: int) -> int | None:
    pending = getattr(state, "pending", None)
    if pending is not None and getattr(pending, "deadline_at", None) is not None:
        return pending.deadline_at
    return getattr(state, "turn_deadline_at", None) if getattr(state, "turn_seat", None) == seat else None


def _result(rules: Any, envelopes: list[Any], seat: int) -> dict[str, Any]:
    """How the game ended, from the batch that ended it: the ending event's type and its winning seat if it has one."""
    for env in reversed(envelopes):
        if env.type in ENDINGS:
            event = rules.CODEC.join(env.public)
            # solitaire's game_won names no seat: its one seat won
            winner = getattr(event, "winner", getattr(event, "seat", 0)) if env.type in ("game_won", "game_ended") else None
            return {"ended_by": env.type, "winner_seat": winner, "won": winner == seat}
    return {"ended_by": envelopes[-1].type if envelopes else None, "winner_seat": None, "won": False}


def derive(game: Any, before: Any, after: Any, envelopes: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(player_id, event)`` for every registered player the append changed something for. ``before`` is ``None``
    for a game's creation. Pure: the same append derives the same events on any worker."""
    rules, version = game.rules, envelopes[-1].seq
    out: list[tuple[str, dict[str, Any]]] = []
    was_over = before is not None and rules.status_of(before) == "finished"
    over = rules.status_of(after) == "finished" and not was_over
    for seat, st in enumerate(after.seats):
        player_id = _registered(st.player)
        if player_id is None:
            continue
        base = {"game_id": game.game_id, "seat": seat}
        was = before.seats[seat].player if before is not None else None
        if _registered(was) != player_id:
            out.append((player_id, {"type": "seated", **base, "kind": rules.KIND}))
        stayed = before is not None and _registered(was) == player_id  # the same player in the seat before the append
        if _awaited(rules, after, seat) and not (stayed and _awaited(rules, before, seat)):
            out.append((player_id, {"type": "turn", **base, "version": version, "deadline_at": _deadline(after, seat)}))
        if over:
            result = _result(rules, envelopes, seat)
            rated = (rules.KIND in RATED_KINDS and getattr(after, "seeding", None) in RATED_SEEDING and len(after.seats) > 1
                     and result["ended_by"] != "game_closed")  # the rule of ratings/finish.py: a closed game has no order
            out.append((player_id, {"type": "game_over", **base, "version": version, "result": result,
                                    "rated": rated, "ratings": f"/games/{game.game_id}/ratings"}))
    return out


def told(game: Any, after: Any, envelopes: list[Any]) -> bytes:
    """``derive`` for ``Games._append``, on the game's state the append is decided on, encoded for the append
    (``AppendRequest.told``): the store keeps it with the game's events and tells the players (``tell``). A failure
    costs the players an event, never the move (logged: the game's own log is the truth a client can always read)."""
    try:
        return encode_told(derive(game, game.state if game.version else None, after, envelopes))
    except Exception:  # noqa: BLE001
        log.warning("player events of %s not derived", game.game_id, exc_info=True)
        return b""


async def tell(store: Store, game_id: str) -> None:
    """Relay the game's outbox to its players' streams at once, after the append that filled it. A store error only
    delays the events: the projector relays every append that told something before it acknowledges it."""
    try:
        await store.tell_players(game_id)
    except Exception:  # noqa: BLE001
        log.warning("player events of %s not relayed yet (the projector will)", game_id, exc_info=True)


async def notify(store: Store, player_id: str, event: dict[str, Any]) -> None:
    """Tell ``player_id``'s stream of ``event`` (a dict with ``type``, e.g. ``{"type": "queue", "status": "matched",
    "game_id": ...}``): for code outside a game's append, such as the matchmaking queue. Any worker may call it."""
    if not isinstance(event.get("type"), str):
        raise ValueError("a player event needs a 'type'")
    await store.tell_player(player_id, event)


async def tell_queue(store: Store, player_id: str, status: str, **fields: Any) -> None:
    """The player's ``queue`` event (``waiting``, ``left``, ``seated`` with ``game_id`` and ``seat``, ``cancelled``
    with a ``reason``). Like every player event it costs the player a notice if the store refuses it, never the
    queue's own change, which ``GET /queue`` always answers: logged, not raised."""
    try:
        await notify(store, player_id, {"type": "queue", "status": status, **fields})
    except Exception:  # noqa: BLE001
        log.warning("queue event %s of %s not recorded", status, player_id, exc_info=True)


async def read(store: Store, player_id: str, after: str, count: int) -> list[tuple[str, bytes, bytes]]:
    """The player's events after the entry id ``after`` (``0-0``: from the oldest kept): ``(id, type, JSON)``."""
    return await store.player_events(player_id, after, count)


class PlayerWatch:
    """The streams of one player on this worker: one future they all wait on, resolved when the player is named."""

    def __init__(self) -> None:
        self.streams = 0
        self._changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake(self) -> None:
        changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
        changed.set_result(None)

    async def changed(self, timeout: float) -> None:
        await asyncio.wait([self._changed], timeout=timeout)


class PlayerFeed:
    """One reader per worker of the players' log (a real Redis; the embedded store's one worker wakes its streams as it
    writes), started by the first player stream and stopped with the last, like the games' ``ChangeFeed``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_player: dict[str, PlayerWatch] = {}
        self._task: asyncio.Task[None] | None = None
        self.reading = store.name == "embedded"  # whether wakes can be trusted (else streams look every POLL_SECONDS)
        self.closed = False  # the worker is stopping: no stream starts the reader again
        store.on_told = self.wake_all

    def wake_all(self, player_ids: list[str]) -> None:
        """This worker's streams of players the store just wrote for (``Store.on_told``): woken without the log."""
        for player_id in player_ids:
            self.wake(player_id)

    def wake(self, player_id: str) -> None:
        watch = self._by_player.get(player_id)
        if watch is not None:
            watch.wake()

    @contextlib.asynccontextmanager
    async def follow(self, player_id: str) -> AsyncIterator[PlayerWatch]:
        watch = self._by_player.setdefault(player_id, PlayerWatch())
        watch.streams += 1
        if self.store.name != "embedded" and not self.closed and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._run())
        try:
            yield watch
        finally:
            watch.streams -= 1
            if not watch.streams and self._by_player.get(player_id) is watch:
                del self._by_player[player_id]
            if not self._by_player:
                self.stop()

    def close(self) -> asyncio.Task[None] | None:
        """The worker stops: the reader's task, cancelled, to be awaited before the store's connections close."""
        self.closed = True
        return self.stop()

    def stop(self) -> asyncio.Task[None] | None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        if self.store.name != "embedded":
            self.reading = False
        return task

    async def _run(self) -> None:
        head: bytes | None = None
        while True:
            _go_on()
            try:
                if head is None:
                    rows = await self.store._read(self.store.r.xrevrange(self.store.keys.player_log(), "+", "-", count=1))
                    head = rows[0][0] if rows else b"0-0"
                    self.reading = True
                    for watch in list(self._by_player.values()):  # what came before the feed read: looked at once
                        watch.wake()
                    continue
                if self.store.cluster:
                    rows = await self.store._read(self.store.r.xrange(self.store.keys.player_log(), b"(" + head, "+", count=1000))
                    replies = [(self.store.keys.player_log(), rows)] if rows else []
                else:
                    client = self.store._feed_client(FEED_BLOCK_MS)
                    reading = client.xread({self.store.keys.player_log(): head}, count=1000, block=FEED_BLOCK_MS)
                    replies = await self.store._read(reading) or []
                self.reading = True
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - the streams poll meanwhile
                if self.reading:
                    log.warning("players' feed paused (player streams poll meanwhile): %s", e)
                self.reading = False
                await asyncio.sleep(POLL_SECONDS * 5)
                continue
            for _, rows in replies:
                for entry, fields in rows:
                    head = entry
                    self.wake(fields[b"p"].decode())
            if self.store.cluster and not replies:
                await asyncio.sleep(POLL_SECONDS)
