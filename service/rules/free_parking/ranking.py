"""A tournament's overall ranking, from its tables' standings: the one order the API, the bundle, its CSVs and
``python -m replays audit`` all print, so a tie is ranked the same way wherever it is read.

Table winners come first, then the most points. Players level on both share a rank and the next rank skips
(competition ranking: 1, 2, 2, 4); inside a tie they are listed by table, then name, so every reader lists them in
the same order.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .standings import PlayerStanding, TableStanding


class Ranked(msgspec.Struct, kw_only=True):
    """A player's place across the tournament: table winners first, then total points; level players share it."""

    rank: int
    player_id: str | None
    name: str
    table: int
    total: int
    rounds: int
    rounds_won: int  # rounds whose bonus this player took (they reached 150 first); 0 in a standard game
    winner: bool


def rounds_won(player: PlayerStanding) -> int:
    """The rounds whose bonus the player took: they ended the round by reaching 150."""
    return sum(r.bonus > 0 for r in player.rounds)


def ranking(tables: Iterable[tuple[int, TableStanding]]) -> list[Ranked]:
    """Every seated player of ``tables`` (each given with its table number), ranked."""
    players = [(table, p) for table, standing in tables for p in standing.players]
    players.sort(key=lambda tp: (not tp[1].winner, -tp[1].total, tp[0], tp[1].name, tp[1].player_id or ""))
    out: list[Ranked] = []
    for i, (table, p) in enumerate(players):
        tied = bool(out) and (out[-1].winner, out[-1].total) == (p.winner, p.total)
        out.append(Ranked(rank=out[-1].rank if tied else i + 1, player_id=p.player_id, name=p.name, table=table,
                          total=p.total, rounds=len(p.rounds), rounds_won=rounds_won(p), winner=p.winner))
    return out
