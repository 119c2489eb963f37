"""Moving finished games out of the store into the archive (service/store/archive.py), safely at every step.

A game finished ``after_ms`` ago is archived by the holder of its partition's lease, in this order: its export (the
header with the seed and its final receipt, then every envelope) is written to the archive and fsynced; read back
and checked — as many events as the game has, ending at its head; only then are its events removed from the store,
by one script that checks the game is still finished at that version and its read models applied it. A crash (kill
-9) before the removal leaves the game in the store, and the file (if any) is written again, byte for byte, next
time; after it, the game is read from the archive. At no moment is it in neither (tests/drills/test_archive.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

import msgspec

from service.store.archive import Archive, ArchiveError
from service.store.contract import StoreUnavailable
from service.events.export import dumps
from service.store.keys import partition
from service.store.lease import take_lease
from service.rules.engine import export_header

from .games import Games, now_ms
from .signing import Receipts

log = logging.getLogger("free_parking.archive")
LEASE = "archive"
LEASE_MS = 30_000
RETRY_MS = {"behind": 1_000, "leased": LEASE_MS, "failed": 60_000}
"""When a game that was not archived is looked at again: its read models lag (a projector pass away), another worker
holds its partition's lease, the archive could not be written."""
CRASH_AT = os.environ.get("FREE_PARKING_ARCHIVE_CRASH_AT", "")
"""For the drill only: a step after which the process kills itself (written, checked, removed)."""


class Archiver:
    def __init__(self, games: Games, archive: Archive, after_ms: int, receipts: Receipts | None, owner: str,
                 lease_ms: int = LEASE_MS) -> None:  # fmt: skip
        self.games, self.archive, self.after_ms = games, archive, after_ms
        self.receipts, self.owner, self.lease_ms = receipts, owner, lease_ms
        self.archived = 0
        self.in_hand: set[str] = set()
        """Games this worker archives at this moment: the lease is re-entrant for its owner, so it alone does not keep
        two archives of one game in one worker apart (a runner's pass and a test's, an admin's call beside it)."""

    async def archive_game(self, game_id: str, now: int | None = None) -> str:
        """Archive ``game_id`` if it is due: ``archived``; else why not — ``not_finished``, ``not_yet`` (finished
        less than ``after_ms`` ago), ``leased`` (another worker archives its partition), ``behind`` (its read
        models have not applied its last events: the store keeps it until they have), ``already`` (archived before:
        its file is never written again — on a backend that writes in place a kill then would damage the one copy).
        ``leased`` too while this worker archives the same game at this moment."""
        if game_id in self.in_hand:
            return "leased"
        self.in_hand.add(game_id)
        try:
            if not await take_lease(self.games.store, LEASE, partition(game_id), self.owner, self.lease_ms):
                return "leased"
            renewing = asyncio.ensure_future(self._keep_lease(partition(game_id)))  # done: the lease is lost
            try:
                return await self._archive_held(game_id, now, renewing)
            finally:
                renewing.cancel()
        finally:
            self.in_hand.discard(game_id)

    async def _keep_lease(self, p: int) -> None:
        """Renew the partition's lease every third of its time while a game of it is archived: a write to a slow
        archive (a large game, an object store) may outlast one lease, and another worker taking the partition
        meanwhile would archive the same game again — its file written twice, the second time over an archived
        game's one copy. Ends when the lease is lost (then the archive stops before its next step)."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                if not await take_lease(self.games.store, LEASE, p, self.owner, self.lease_ms):
                    return
            except StoreUnavailable:  # not renewed: it may run out, so it counts as lost
                return

    async def _archive_held(self, game_id: str, now: int | None, renewing: asyncio.Future[None]) -> str:
        store = self.games.store
        if ((await store.meta(game_id)) or {}).get("archived") == "1":  # under the lease: nobody archives it meanwhile
            return "already"
        game = await self.games.fresh(game_id)
        if game.rules.status_of(game.state) != "finished":
            return "not_finished"
        if game.last_at + self.after_ms > (now_ms() if now is None else now):
            return "not_yet"
        envelopes = await store.read(game_id, count=game.version)
        header = export_header(game, with_seed=True)
        last = envelopes[-1]
        receipt = self.receipts.of(game_id, last.seq, last.hash, last.at) if self.receipts else None
        header = msgspec.structs.replace(header, version=last.seq, head=last.hash, receipt=receipt)
        if renewing.done():
            return "leased"
        await asyncio.to_thread(self.archive.write, game_id, dumps(header, envelopes))  # gzip, fsyncs, a PUT: off the loop
        _crash_after("written")
        kept = await asyncio.to_thread(self.archive.read, game_id)  # its events run 1..version to its head, or it raises
        if kept is None or (kept[0].version, kept[0].head) != (game.version, game.head):
            raise ArchiveError(f"the archived copy of {game_id} does not read back as the game (version {game.version})")
        _crash_after("checked")
        if renewing.done():  # another worker may be archiving it now: it removes the events once its own copy checks out
            return "leased"
        if not await store.forget_events(game_id, game.version):
            return "behind"
        _crash_after("removed")
        await self._forget_told(game)
        self.games.cache.pop(game_id, None)  # read from the archive from now on (the same game, to the byte)
        self.archived += 1
        return "archived"

    async def _forget_told(self, game: Any) -> None:
        """The players' record of what they were told of the game goes with its events: its outbox is gone, nothing
        of it is told again. Failing here leaves a few bytes behind, never a wrong stream: logged, not raised."""
        players = [st.player.player_id for st in game.state.seats if st.player is not None and st.player.player_id]
        try:
            await self.games.store.forget_told(game.game_id, players)
        except Exception:  # noqa: BLE001 - the game is archived either way
            log.warning("what the players of %s were told is still recorded", game.game_id, exc_info=True)


def _crash_after(step: str, kill: Callable[[int], None] = os._exit) -> None:
    if CRASH_AT == step:
        log.warning("archive drill: killed after the step %r", step)
        kill(137)
