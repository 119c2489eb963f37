"""A tournament over rounds' state in the store (docs/tournaments.md, "Tournaments over rounds"): one hash per
tournament (``Keys.tournament_state``) whose fields are each written once, so every worker may write what it derived —
a draw, the start — and the first write stands (the same bytes: each is derived from the logs and the seed alone).

Entering is the one write that depends on another field: it takes only while entry is open (no ``closed``), in one
step (a script on Redis; under the write lock, and journalled, on the embedded store), so an entrant who enters while
the organiser starts is either in the draw or told entry is closed — never entered and left out.
"""

from __future__ import annotations

from typing import Any

from .contract import Projected, raise_first

CLOSED = "closed"
MOST_ENTRANTS = 256
"""The most entrants a tournament takes (as many as the organiser may name): open entry is anyone's, and every read of
a tournament, anyone's to repeat, walks its every table."""

# KEYS: the tournament's state; ARGV: field, record, most. 'entered', 'already' (the field is there), 'closed' or
# 'full' (until the start the state holds its entrants alone)
ENTER_LUA = """
if redis.call('HEXISTS', KEYS[1], 'closed') == 1 then
  return 'closed'
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 'already'
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 'full'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'entered'
"""


class RoundsOps:
    """The writes and reads, mixed into ``Store``; the ``_op_`` forms are the embedded store's (``RedisRoundsOps``)."""

    r: Any
    keys: Any

    async def tournament_enter(self, tournament_id: str, player_id: str, record: bytes, most: int | None = None) -> str:
        """Enter ``player_id`` with ``record``: ``entered``, ``already`` (entered before: the first record stands),
        ``closed`` (the tournament has started) or ``full`` (``most`` entrants, by default ``MOST_ENTRANTS``)."""
        most = MOST_ENTRANTS if most is None else most
        return (await self._write("tournament_enter", tournament_id, player_id, record, most)).outcome  # type: ignore[attr-defined]

    async def tournament_close(self, tournament_id: str) -> None:
        """Close entry: from now on ``tournament_enter`` answers ``closed``."""
        await self._write("tournament_note", tournament_id, CLOSED, b"1")  # type: ignore[attr-defined]

    async def tournament_note(self, tournament_id: str, field: str, value: bytes) -> bytes:
        """Write ``field`` once; the value that stands (``value``, or the one written first)."""
        noted = await self._write("tournament_note", tournament_id, field, value)  # type: ignore[attr-defined]
        return noted.value

    async def tournament_playing(self, tournament_id: str, playing: bool) -> None:
        """Mark a tournament over rounds as one whose rounds are still to draw or play (the advancer looks at those),
        or no longer."""
        await self._write("tournament_playing", tournament_id, playing)  # type: ignore[attr-defined]

    async def tournaments_playing(self) -> list[str]:
        raw = await self._read(self.r.smembers(self.keys.tournaments_playing()))  # type: ignore[attr-defined]
        return sorted(k.decode() if isinstance(k, bytes) else k for k in raw)

    async def _op_tournament_playing(self, tournament_id: str, playing: bool) -> Projected:
        key = self.keys.tournaments_playing()
        changed = await (self.r.sadd(key, tournament_id) if playing else self.r.srem(key, tournament_id))
        return Projected(bool(changed), 0)

    async def tournament_state(self, tournament_id: str) -> dict[str, bytes]:
        raw = await self._read(self.r.hgetall(self.keys.tournament_state(tournament_id)))  # type: ignore[attr-defined]
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in raw.items()}

    async def _op_tournament_enter(self, tournament_id: str, player_id: str, record: bytes,
                                   most: int = MOST_ENTRANTS) -> Entered:
        key = self.keys.tournament_state(tournament_id)
        if await self.r.hexists(key, CLOSED):
            return _entered("closed")
        if await self.r.hexists(key, f"e:{player_id}"):
            return _entered("already")
        if await self.r.hlen(key) >= most:
            return _entered("full")
        await self.r.hset(key, f"e:{player_id}", record)
        return _entered("entered")

    async def _op_tournament_note(self, tournament_id: str, field: str, value: bytes) -> Noted:
        key = self.keys.tournament_state(tournament_id)
        if await self.r.hsetnx(key, field, value):
            return Noted(True, 0, bytes(value))
        return Noted(False, 0, await self.r.hget(key, field))


class Entered(Projected, frozen=True):
    """``tournament_enter``'s outcome; journalled (``applied``) only when the entrant was written."""

    outcome: str = ""


class Noted(Projected, frozen=True):
    """``tournament_note``'s: journalled only when the field was written; ``value`` is what stands."""

    value: bytes = b""


def _entered(outcome: str) -> Entered:
    return Entered(outcome == "entered", 0, outcome)


class RedisRoundsOps(RoundsOps):
    """The same on a real Redis or Cluster: each write one command or script, acknowledged as durably as an event."""

    async def _op_tournament_enter(self, tournament_id: str, player_id: str, record: bytes,
                                   most: int = MOST_ENTRANTS) -> Entered:
        key = self.keys.tournament_state(tournament_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.execute_command("EVAL", ENTER_LUA, 1, key, f"e:{player_id}", record, most)
        results = await self._execute(pipe, [key])  # type: ignore[attr-defined]
        raise_first(results)
        outcome = results[0]
        return _entered(outcome.decode() if isinstance(outcome, bytes) else outcome)

    async def _op_tournament_playing(self, tournament_id: str, playing: bool) -> Projected:
        """Waited for as an event is: a tournament answered 201 whose "playing" mark a failover took back would never be
        advanced again (the advancer finds tournaments by this set only)."""
        key = self.keys.tournaments_playing()
        pipe = self.r.pipeline(transaction=False)
        if playing:
            pipe.sadd(key, tournament_id)
        else:
            pipe.srem(key, tournament_id)
        results = await self._execute(pipe, [key])  # type: ignore[attr-defined]
        raise_first(results)
        return Projected(bool(results[0]), 0)

    async def _op_tournament_note(self, tournament_id: str, field: str, value: bytes) -> Noted:
        key = self.keys.tournament_state(tournament_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hsetnx(key, field, value)
        pipe.hget(key, field)
        results = await self._execute(pipe, [key])  # type: ignore[attr-defined]
        raise_first(results)
        return Noted(bool(results[0]), 0, results[1])
