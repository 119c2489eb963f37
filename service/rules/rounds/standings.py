"""A tournament's standings over rounds (RULES.md §4), from its draws and its tables' logs alone.

Each table's result is its order of finish (``ratings.finish``: the winner first, then by total; Monopoly by the order
players went out, or worth) and each seat's score (the card game's total — cumulative in tournament mode — or
Monopoly's worth). A table gives its places as points: of four, 3, 2, 1 and 0, tied places sharing theirs (two
level second: 1.5 each). In a duplicate round every table was dealt the same cards, so a player is compared with every
player dealt the same seat at the other tables: one matchpoint for each they beat on score, half for each tie — trade
places moves cards, not the comparison. Standings rank by those points (place points, or matchpoints in a duplicate
tournament), then by total score; players level on both share a rank (1, 2, 2, 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.events.base import Player
from service.events.envelope import Envelope

from ..ratings.finish import finished
from .draw import DrawnTable

EVERY_SEEDING = ("legacy", "combined", "fixed", "duplicate", "tournament")


class SeatResult(msgspec.Struct, frozen=True, kw_only=True):
    """One dealt seat of a finished table: who was dealt it (``None``: a bot), their place and score."""

    seat: int
    player_id: str | None
    rank: int
    score: int
    points: float  # the place's points (``place_points``)


class TableResult(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    table: int
    game_id: str
    seats: tuple[SeatResult, ...]


class RoundLine(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One entrant's round: their table and dealt seat, place, score, the place's points, (duplicate) matchpoints, and
    how many of the table's seats bots filled (a short table: RULES.md §4 marks it in the standings)."""

    round: int
    table: int
    game_id: str
    seat: int
    rank: int
    score: int
    points: float
    matchpoints: float | None = None
    bots: int = 0


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    player_id: str
    name: str
    points: float  # place points, or matchpoints in a duplicate tournament
    score: int
    rounds: list[RoundLine]


def place_points(ranks: Sequence[int]) -> list[float]:
    """Each seat's points from its rank among ``len(ranks)`` seats: place *p* (0 first) is worth n − 1 − p, and seats
    tied for a rank share the places they hold."""
    n = len(ranks)
    out = []
    for rank in ranks:
        tied = sum(r == rank for r in ranks)
        held = range(rank - 1, rank - 1 + tied)
        out.append(sum(n - 1 - p for p in held) / tied)
    return out


def table_result(round_no: int, drawn: DrawnTable, game_id: str, envelopes: Sequence[Envelope]) -> TableResult | None:
    """The finished table's result by dealt seat; ``None`` while it is not over. A table closed idle ties every seat."""
    ended = finished(envelopes, EVERY_SEEDING, closed=True)
    if ended is None:
        return None
    dealt_to = dealt(envelopes)
    now_at = {st.player: seat for seat, st in enumerate(ended.state.seats)}
    ranks = [ended.places[now_at[dealt_to[seat]]].rank for seat in range(len(drawn.seats))]
    points = place_points(ranks)
    seats = tuple(SeatResult(seat=seat, player_id=player_id, rank=ranks[seat], points=points[seat],
                             score=_score(ended, now_at[dealt_to[seat]]))
                  for seat, player_id in enumerate(drawn.seats))
    return TableResult(round=round_no, table=drawn.table, game_id=game_id, seats=seats)


def dealt(envelopes: Sequence[Envelope]) -> dict[int, Any]:
    """The player each seat was taken by (and dealt), whatever trades of places moved them since."""
    out = {}
    for env in envelopes:
        if env.type == "seat_taken":
            event = msgspec.json.decode(env.public, type=_SeatTaken)
            out[event.seat] = event.player
    return out


class _SeatTaken(msgspec.Struct):
    seat: int
    player: Player


def _score(ended: Any, seat: int) -> int:
    st = ended.state.seats[seat]
    if ended.kind == "monopoly":
        worth = getattr(ended.ended, "worth", None)
        return int(worth[seat]) if worth is not None else 0
    return int(st.total if ended.state.config.mode == "tournament" else st.score)


def matchpoints(results: Sequence[TableResult]) -> dict[tuple[int, int], float]:
    """A duplicate round's matchpoints by (table, dealt seat): one for each player dealt the same seat at another table
    whose score it beat, half for each it tied."""
    out = {}
    for r in results:
        for s in r.seats:
            others = [o.seats[s.seat].score for o in results if o.table != r.table]
            out[(r.table, s.seat)] = sum(1.0 if s.score > o else 0.5 if s.score == o else 0.0 for o in others)
    return out


def standings(names: Mapping[str, str], rounds: Sequence[Sequence[TableResult]], *, duplicate: bool) -> list[Standing]:
    """Every entrant's standing after the rounds whose results are given (each round: its finished tables)."""
    lines: dict[str, list[RoundLine]] = {p: [] for p in names}
    for results in rounds:
        mp = matchpoints(results) if duplicate else {}
        for r in results:
            for s in r.seats:
                if s.player_id is not None and s.player_id in lines:
                    lines[s.player_id].append(RoundLine(round=r.round, table=r.table, game_id=r.game_id, seat=s.seat,
                                                        rank=s.rank, score=s.score, points=s.points,
                                                        matchpoints=mp.get((r.table, s.seat)),
                                                        bots=sum(o.player_id is None for o in r.seats)))
    rows = []
    for player_id, mine in lines.items():
        points = sum((line.matchpoints or 0.0) if duplicate else line.points for line in mine)
        rows.append((-points, -sum(line.score for line in mine), names[player_id], player_id, points, mine))
    rows.sort(key=lambda row: row[:4])
    out: list[Standing] = []
    for n, (neg_points, neg_score, name, player_id, points, mine) in enumerate(rows):
        tied = out and (-out[-1].points, -out[-1].score) == (neg_points, neg_score)
        out.append(Standing(rank=out[-1].rank if tied else n + 1, player_id=player_id, name=name, points=points,
                            score=-neg_score, rounds=mine))
    return out


def ranks_of(table: Sequence[Standing]) -> dict[str, int]:
    """Each entrant's rank: what the next round's draw seats by."""
    return {s.player_id: s.rank for s in table}


def met_of(draws: Sequence[Any]) -> dict[str, frozenset[str]]:
    """Whom each entrant has sat with in ``draws``: the next draw avoids a repeat where the numbers allow."""
    met: dict[str, set[str]] = {}
    for draw in draws:
        for table in draw.tables:
            for p in table.players:
                met.setdefault(p, set()).update(q for q in table.players if q != p)
    return {p: frozenset(q) for p, q in met.items()}
