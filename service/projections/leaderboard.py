"""The leaderboard: registered players ranked across every finished game, per kind and over all kinds.

A player's results (``results.py``) live under their own key, so no script can move them and a leaderboard at once.
Instead each board holds absolute values copied from a snapshot of those results: ``HMGET`` reads the counters and
their ``seq`` (the upsert script adds one to it on every write that takes) together, and the board's script
(``Store.project_leaderboard``) keeps a player's snapshot only if it is newer than the one stored. A repeat changes
nothing and two projectors racing leave the newest snapshot, so the boards need no checkpoint of their own. It is
written after the results' upsert whether that took or not: a crash between the two is mended by the retry.

Keys (one slot, tag ``{lb}``): ``ns:proj:leaderboard:{lb}:<kind>`` and ``…:all`` (sorted sets: a player's score is
``won * 2**32 + points``, so wins rank first and points break ties) and ``…:seq`` (each player's snapshot number).
"""

from __future__ import annotations

import msgspec

from service.store.store import Store
from service.rules.engine import GAMES

from .results import KindTotals, results_of
from .scores import Scores

ALL = "all"
SHIFT = 2**32
"""Points below this never reach the wins' part of a score (exact in a double while wins < 2**21)."""


class Leader(msgspec.Struct, kw_only=True):
    rank: int  # players with the same wins and points share a rank
    player_id: str
    name: str
    played: int
    won: int
    points: int
    kinds: dict[str, KindTotals]


def _fields() -> list[str]:
    return ["seq", *(f"{what}:{kind}" for kind in sorted(GAMES) for what in ("played", "won", "points"))]


async def _totals(store: Store, player_id: str) -> tuple[int, dict[str, KindTotals]]:
    """A consistent snapshot of a player's counters (one ``HMGET``) and its number."""
    fields = _fields()
    values = await store._read(store.r.hmget(store.keys.projection("results", player_id), fields))
    got = {f: int(v) for f, v in zip(fields, values, strict=True) if v is not None}
    kinds = {}
    for kind in sorted(GAMES):
        totals = KindTotals(played=got.get(f"played:{kind}", 0), won=got.get(f"won:{kind}", 0), points=got.get(f"points:{kind}", 0))
        if totals.played:
            kinds[kind] = totals
    return got.get("seq", 0), kinds


async def record_game(store: Store, scores: Scores) -> int:
    """Bring every registered player of a finished game up to date on the boards; answers how many moved."""
    moved = 0
    for player_id, _ in results_of(scores):
        seq, kinds = await _totals(store, player_id)
        if not seq:
            continue
        boards = {kind: _score(t) for kind, t in kinds.items()}
        boards[ALL] = _score(KindTotals(won=sum(t.won for t in kinds.values()), points=sum(t.points for t in kinds.values())))
        moved += (await store.project_leaderboard(player_id, seq, boards)).applied
    return moved


def _score(totals: KindTotals) -> float:
    return float(totals.won * SHIFT + totals.points)


async def read_leaderboard(store: Store, kind: str | None, limit: int) -> list[Leader]:
    """The top ``limit`` players of one kind's board (``None``: all kinds), best first."""
    board = store.keys.leaderboard(kind or ALL)
    rows = await store._read(store.r.zrevrange(board, 0, limit - 1, withscores=True))
    out: list[Leader] = []
    for i, (member, score) in enumerate(rows):
        player_id = member.decode()
        _, kinds = await _totals(store, player_id)
        shown = [kinds[kind]] if kind is not None and kind in kinds else list(kinds.values())
        info = await store.player(player_id) or {}
        tied = out and rows[i - 1][1] == score
        out.append(Leader(rank=out[-1].rank if tied else i + 1, player_id=player_id, name=info.get("name", ""),
                          played=sum(t.played for t in shown), won=sum(t.won for t in shown),
                          points=sum(t.points for t in shown), kinds=kinds))
    return out
