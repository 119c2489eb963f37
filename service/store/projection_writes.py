"""The read models' writes, mixed into ``Store``: each goes through ``_write`` (so the embedded store journals it), and
a real Redis runs each as its script (``redis_store.py``). The read models themselves are service/projections."""

from __future__ import annotations

from typing import Any

from .contract import SOLITAIRE_SETS, Projected, ProjectionCorrupt


class ProjectionWrites:
    """Writes of the projections (service/projections): read models written beside the events."""

    r: Any
    keys: Any

    async def project_game(
        self, game_id: str, expected: int, applied: int, model: bytes, lines: list[str]
    ) -> Projected:
        """Store a game's read model (``proj:scores``: fields ``applied``, ``model``) and append its audit lines
        (``proj:audit``), moving its checkpoint from ``expected`` to ``applied``; refused unless it is at ``expected``.
        """
        return await self._write("project_game", game_id, expected, applied, model, lines)

    async def project_games(self, items: list[tuple[str, int, int, bytes, list[str]]]) -> list[Projected | Exception]:
        """``project_game(*item)`` of each item (different games); a real Redis runs them in one round trip. Each answer
        in its place: the ``Projected``, or the ``ProjectionCorrupt`` that refused that game."""
        out: list[Projected | Exception] = []
        for item in items:
            try:
                out.append(await self.project_game(*item))
            except ProjectionCorrupt as e:
                out.append(e)
        return out

    async def project_result(
        self, player_id: str, game_id: str, version: int, entry: bytes, counters: dict[str, int]
    ) -> Projected:
        """Upsert one game's result into a player's results (``proj:results:<player_id>``), idempotently:
        a game already stored at ``version`` or later is left alone; an older one is replaced, counters and all."""
        return await self._write("project_result", player_id, game_id, version, entry, counters)

    async def project_standing(self, tournament_id: str, game_id: str, version: int, entry: bytes) -> Projected:
        """Upsert one table's standing into its tournament's standings (``proj:standings:{pN}:<tournament_id>``,
        field ``g:<game_id>``), idempotently as ``project_result``: a table stored at ``version`` or later stays."""
        return await self._write("project_standing", tournament_id, game_id, version, entry)

    async def project_rated_game(self, kind: str, game_id: str, version: int, entry: bytes) -> Projected:
        """Upsert one rated game into its kind's rated games (``proj:ratings:{rt}:<kind>``, field ``g:<game_id>``),
        idempotently as ``project_result``: a game stored at ``version`` or later stays."""
        return await self._write("project_rated_game", kind, game_id, version, entry)

    async def project_leaderboard(self, player_id: str, seq: int, scores: dict[str, float]) -> Projected:
        """Set a player's score on each named leaderboard (``proj:leaderboard:{lb}:<board>``) from the snapshot ``seq``
        of their results; refused when a snapshot as new is already there. Absolute values: a repeat changes nothing."""
        return await self._write("project_leaderboard", player_id, seq, scores)

    async def project_solitaire_game(
        self, player_id: str, game_id: str, version: int, buckets: list[str], bucket: str, started_at: int,
        finished_at: int | None, time_ms: int | None, won: bool,
    ) -> Projected:  # fmt: skip
        """Upsert one solitaire, as of its ``version``, into its player's statistics (``proj:solitaire:{<player_id>}:*``):
        taken out of every bucket of ``buckets``, then written into ``bucket``'s ``started`` (score ``started_at``) and,
        once it ended, ``finished`` (``finished_at``), ``times`` (``time_ms``, when it had a move) and, won, ``wins``;
        ``latest`` holds its end or its deal, ``versions`` the version written. A game stored at ``version`` or later
        is left alone, so a repeat or an older snapshot changes nothing (``solitaire_stats.lua``)."""
        return await self._write(
            "project_solitaire_game", player_id, game_id, version, buckets, bucket, started_at, finished_at, time_ms, won
        )

    def _solitaire_keys(self, player_id: str, buckets: list[str]) -> list[str]:
        """The statistics' keys of a player, in the order of ``solitaire_stats.lua``'s KEYS (one slot: the player)."""
        key = self.keys.player_projection
        sets = [f"{what}:{b}" for b in buckets for what in SOLITAIRE_SETS]
        return [key("solitaire", player_id, part) for part in ("versions", "latest", *sets)]

    async def _op_project_solitaire(
        self, player_id: str, game_id: str, bucket: str, time_ms: int, won: bool, finished_at: int
    ) -> Projected:
        """The statistics' write before they counted started games: kept only so that an embedded journal that recorded
        it replays. Nothing reads its keys (``played:<bucket>``, ``won:<bucket>``, ``games``) any more; ``rebuild``
        drops them and counts those games again in the sets above."""
        key = self.keys.player_projection
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(key("solitaire", player_id, f"played:{bucket}"), {game_id: time_ms})
        if won:
            pipe.zadd(key("solitaire", player_id, f"won:{bucket}"), {game_id: time_ms})
        pipe.zadd(key("solitaire", player_id, "games"), {game_id: finished_at})
        added = await pipe.execute()
        return Projected(any(int(n) for n in added), finished_at)

    async def drop_projections(self) -> int:
        """Delete every read model (every ``proj:`` key of the namespace); answers how many keys went."""
        return await self._write("drop_projections")

    async def _op_drop_projections(self) -> int:
        prefix = f"{self.keys.ns}:proj:"
        scores, audit = f"{prefix}scores:", f"{prefix}audit:"
        dropped = 0
        # cross-slot read models (players' results) first: a projector still running re-adds a finished game's result
        # only while that game's own read model is still there, and then the replay of the game upserts it again
        for name in await self._proj_keys(prefix):
            if not name.startswith((scores, audit)):
                dropped += await self.r.delete(name)
        # then the games' read models, listed only now, after those deletes: a listing made before them misses a game
        # that a projector brings from nothing to its end in between — its result upserted into a key deleted above,
        # its own read model kept with the checkpoint at the end, so nothing would write that result again. A game's
        # read model first written after this listing began was written after the deletes, and its projector upserts
        # the result once more after that write: it may stay.
        games = {n[len(p) :] for n in await self._proj_keys(prefix) for p in (scores, audit) if n.startswith(p)}
        for game in games:  # a game's read model and its audit list in one DEL (one slot): never one without the other
            dropped += await self.r.delete(scores + game, audit + game)
        return dropped

    async def _proj_keys(self, prefix: str) -> list[str]:
        return [k.decode() async for k in self.r.scan_iter(match=f"{prefix}*", count=1000)]
