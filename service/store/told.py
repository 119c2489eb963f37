"""Telling players what their games' appends did for them: the outbox of each game, relayed to each player's stream.

An append that changes something for a registered player (``service/api/player_events.py`` says what) carries those
events in the append itself: the script writes them, atomically with the game's events, to the game's outbox
(``Keys.outbox``: one entry with the batch's last version, ``v``) and marks the partition log's pointer ``told``.
``tell_players`` then moves a game's outbox, oldest first, into the players' own streams and empties it. Whoever
calls it — the appending worker at once, and the projector for every ``told`` pointer it reads, before it acknowledges
it — the result is the same, so a worker that dies between its append and its tell loses nobody an event: the pointer
stays pending in the projectors' group until another projector takes it over.

Exactly once per player: each player's write is one step (a script on Redis, under the write lock on the embedded
store) that checks and moves ``Keys.player_told`` — the last version of that game already in the player's stream — with
the events. A game's outbox is relayed in version order by everyone, and an entry leaves it only once every player of
it is told, so a relay that finds a player already told at a later version finds them told of this one too.

The embedded store journals each relay as a write like any other, with the time it was made: replaying the journal
gives every event the stream id it had, so a client's ``Last-Event-ID`` still holds after a restart.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec

from .contract import Projected, raise_first, text

log = logging.getLogger("free_parking.store")

KEPT = 1000
"""Events kept per player (``XADD MAXLEN``; approximately on Redis): a stream resumed from further back starts there."""
LOG_KEPT = 10_000
"""Pointers kept in the players' log."""

# one player's events of one batch of a game, once. KEYS: the player's stream, their told hash (one slot: the player's
# id tags both); ARGV: game id, version, kept, then (type, event JSON) per event. 1 if written, 0 if told before.
TELL_LUA = """
local told = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if told >= tonumber(ARGV[2]) then
  return 0
end
for i = 4, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 't', ARGV[i], 'e', ARGV[i + 1])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""


class _Typed(msgspec.Struct):
    """An event as far as the relay reads it: its ``type`` (the SSE ``event``); the rest is passed on as it is."""

    type: str


_decode_told = msgspec.json.Decoder(list[tuple[str, msgspec.Raw]])
_decode_typed = msgspec.json.Decoder(_Typed)
_json = msgspec.json.Encoder()


class Told(msgspec.Struct, frozen=True):
    """What a relay did: the players it wrote for (their streams to wake), and whether it changed anything at all
    (it may only have emptied an outbox whose players were all told already)."""

    players: list[str]
    changed: bool


def encode_told(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """``AppendRequest.told`` for ``(player_id, event)`` pairs, each event a dict with its ``type``."""
    return _json.encode([[player_id, event] for player_id, event in events]) if events else b""


ByPlayer = dict[str, list[tuple[bytes, bytes]]]
"""An outbox entry's events by player: ``(type, event JSON)`` each, in the order they came."""


def by_player(told: bytes) -> ByPlayer:
    """An outbox entry's events, grouped by player in the order they came: ``(type, event JSON)`` each."""
    out: ByPlayer = {}
    for player_id, event in _decode_told.decode(told):
        out.setdefault(player_id, []).append((_decode_typed.decode(event).type.encode(), bytes(event)))
    return out


def entries(game_id: str, rows: list[tuple[bytes, dict[bytes, bytes]]], reached: int) -> list[tuple[int, ByPlayer]]:
    """A game's outbox read (``XRANGE``), as ``(version, by_player)`` oldest first; ``reached``: the game's version.
    An entry that is not what an append writes (damaged, or edited by hand) can never be told: it is logged and left
    out — it leaves the outbox with the others — rather than stop every later event of the game, its projector pointer
    and its archiving for good, or (naming a version the game never reached) mark its players told of every later one.
    An entry written before entries carried their version (``v``) has it in its id, ``<version>-0``."""
    out = []
    for entry, fields in rows:
        try:
            version = int(fields.get(b"v") or text(entry).partition("-")[0])
            if not 0 < version <= reached:
                raise ValueError(f"version {version}, where the game is at {reached}")
            out.append((version, by_player(fields[b"e"])))
        except (msgspec.MsgspecError, KeyError, ValueError) as e:
            log.error("the outbox of game %s holds a damaged entry %s, dropped: %s", game_id, text(entry), e)
    return out


def next_id(last: bytes | str | None, now_ms: int) -> str:
    """The stream id after ``last`` at ``now_ms``: the clock's millisecond, or one past ``last`` if that is later."""
    if last is None:
        return f"{now_ms}-0"
    ms, _, seq = text(last).partition("-")
    return f"{now_ms}-0" if now_ms > int(ms) else f"{ms}-{int(seq) + 1}"


class ToldOps:
    """The relay's writes and the players' reads, mixed into ``Store``. These ``_op_`` forms are the embedded store's,
    run under its write lock and journalled; ``RedisToldOps`` runs one script per player and batch instead."""

    r: Any
    keys: Any
    _now: Any
    """The embedded store's client of its server without asyncio: a relay reads and writes through it with no await
    from its first read to its journal record (``EmbeddedStore._write_whole``), so no stream reads an event before the
    journal holds it — one a kill in between would take back, and the restart tell again under another id."""

    on_told: Callable[[list[str]], None] | None = None
    """Called with the players a relay wrote for: this worker's streams of theirs wake at once (``PlayerFeed``)."""

    async def tell_players(self, game_id: str) -> Told:
        """Move ``game_id``'s outbox into its players' streams (see the module's docstring)."""
        told = await self._write("tell_players", int(time.time() * 1000), game_id)  # type: ignore[attr-defined]
        self._woken(told)
        return told

    async def tell_player(self, player_id: str, event: dict[str, Any]) -> None:
        """One event for one player outside any game's append (the matchmaking queue's): written as it comes."""
        self._woken(await self._write("tell_player", int(time.time() * 1000), player_id, _json.encode(event)))  # type: ignore[attr-defined]

    async def forget_told(self, game_id: str, player_ids: list[str]) -> None:
        """Drop ``game_id`` from each player's record of what they were told (``Keys.player_told``), once the game is
        archived: its outbox went with its events, so nothing of it is relayed again — and the record stays one field
        per game a player has live, not per game they ever played."""
        if player_ids:
            await self._write("forget_told", game_id, player_ids)  # type: ignore[attr-defined]

    async def _op_forget_told(self, game_id: str, player_ids: list[str]) -> Projected:
        gone = 0
        for player_id in player_ids:
            gone += await self.r.hdel(self.keys.player_told(player_id), game_id)
        return Projected(gone > 0, 0)

    def _woken(self, told: Told) -> None:
        if told.players and self.on_told is not None:
            self.on_told(told.players)

    async def player_events(self, player_id: str, after: str, count: int) -> list[tuple[str, bytes, bytes]]:
        """The player's events after the entry id ``after`` (``0-0``: from the oldest kept): ``(id, type, JSON)``."""
        key = self.keys.player_stream(player_id)  # type: ignore[attr-defined]
        rows = await self._read(self.r.xrange(key, f"({after}", "+", count=count))  # type: ignore[attr-defined]
        if rows and getattr(self, "replication", None) is not None:  # --durability replicated: shown once replicated
            await self.replication.barrier(self, [key])  # type: ignore[attr-defined]
        return [(text(entry), fields[b"t"], fields[b"e"]) for entry, fields in rows]

    async def _op_tell_players(self, now_ms: int, game_id: str) -> Told:
        """``TELL_LUA`` per entry and player, step for step, with ids from ``now_ms`` (so that a replay of the journal
        gives the same ones): every check first, then every write in one pipeline (``_execute``: a write refused
        part-way leaves memory ahead of the journal, and the store refuses writes until a restart)."""
        outbox = self.keys.outbox(game_id)
        rows = self._now.xrange(outbox)
        if not rows:
            return Told([], False)
        todo = entries(game_id, rows, int(self._now.hget(self.keys.meta(game_id), "version") or 0))
        players = list(dict.fromkeys(p for _, by in todo for p in by))
        told_at = {p: int(self._now.hget(self.keys.player_told(p), game_id) or 0) for p in players}
        last = {p: self._last_id(self.keys.player_stream(p)) for p in players}
        pipe = self._now.pipeline(transaction=False)
        told: list[str] = []
        for version, by in todo:
            for player_id, events in by.items():
                if told_at[player_id] >= version:
                    continue
                last[player_id] = _add(pipe, self.keys.player_stream(player_id), events, last[player_id], now_ms)
                pipe.hset(self.keys.player_told(player_id), game_id, version)
                told_at[player_id] = version
                told.append(player_id)
        pipe.xdel(outbox, *(entry for entry, _ in rows))
        self._execute(pipe)  # type: ignore[attr-defined]
        return Told(list(dict.fromkeys(told)), True)

    async def _op_tell_player(self, now_ms: int, player_id: str, event: bytes) -> Told:
        kind = _decode_typed.decode(event).type
        stream = self.keys.player_stream(player_id)
        pipe = self._now.pipeline(transaction=False)
        _add(pipe, stream, [(kind.encode(), bytes(event))], self._last_id(stream), now_ms)
        self._execute(pipe)  # type: ignore[attr-defined]
        return Told([player_id], True)

    def _last_id(self, stream: str) -> bytes | None:
        last = self._now.xrevrange(stream, count=1)
        return last[0][0] if last else None


def _add(pipe: Any, stream: str, events: list[tuple[bytes, bytes]], last: bytes | str | None, now: int) -> str | None:
    """The embedded store's ``XADD``s of ``events`` after the stream's entry ``last``; answers the last id added."""
    for kind, event in events:
        last = next_id(last, now)
        pipe.xadd(stream, {"t": kind, "e": event}, id=last, maxlen=KEPT, approximate=False)
    return last


class RedisToldOps(ToldOps):
    """The same on a real Redis or Cluster: one pipeline of a script per player and batch; once every one of them
    took, a second round trip deletes the outbox's entries and adds a pointer per player told to the players' log
    (which wakes the other workers' streams). Not one pipeline: Redis carries on past a command that fails (a script
    refused at ``maxmemory``, a cluster node away) and a cluster runs each node's part at once, so the delete could
    take while a player's write did not — the event lost — or before it ran, and another relay, finding the next
    entry alone, tell a player of a later version first. Stream ids are the server's own (``*``): Redis keeps them."""

    async def _op_tell_players(self, now_ms: int, game_id: str) -> Told:
        outbox = self.keys.outbox(game_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.xrange(outbox)
        pipe.hget(self.keys.meta(game_id), "version")  # the game's slot: one round trip on a cluster's one node
        rows, reached = await self._read(pipe.execute())  # type: ignore[attr-defined]
        if not rows:
            return Told([], False)
        todo = entries(game_id, rows, int(reached or 0))
        replication = getattr(self, "replication", None)
        if replication is not None and todo:  # relayed only once the game's own primary replicated them: on a cluster
            await replication.cover(self, [(game_id, max(v for v, _ in todo))])  # the players' streams live elsewhere
        pipe = self.r.pipeline(transaction=False)
        players: list[str] = []
        for version, by in todo:
            for player_id, events in by.items():
                keys = [self.keys.player_stream(player_id), self.keys.player_told(player_id)]
                pipe.execute_command("EVAL", TELL_LUA, 2, *keys, game_id, version, KEPT, *(x for ev in events for x in ev))
                players.append(player_id)
        written = [self.keys.player_stream(p) for p in dict.fromkeys(players)]
        results = await self._execute(pipe, written)  # type: ignore[attr-defined]
        raise_first(results)  # a player not told: the entries stay for the next relay (the projector's)
        told = list(dict.fromkeys(p for p, done in zip(players, results, strict=True) if done == 1))
        pipe = self.r.pipeline(transaction=False)
        pipe.xdel(outbox, *(entry for entry, _ in rows))
        for player_id in told:
            pipe.xadd(self.keys.player_log(), {"p": player_id}, maxlen=LOG_KEPT, approximate=True)
        raise_first(await self._execute(pipe, [outbox]))  # type: ignore[attr-defined]
        return Told(told, True)

    async def _op_tell_player(self, now_ms: int, player_id: str, event: bytes) -> Told:
        kind = _decode_typed.decode(event).type
        pipe = self.r.pipeline(transaction=False)
        pipe.xadd(self.keys.player_stream(player_id), {"t": kind, "e": event}, maxlen=KEPT, approximate=True)
        pipe.xadd(self.keys.player_log(), {"p": player_id}, maxlen=LOG_KEPT, approximate=True)
        raise_first(await self._execute(pipe, [self.keys.player_stream(player_id)]))  # type: ignore[attr-defined]
        return Told([player_id], True)

