"""Who sits with whom from the play-now queue (docs/queue.md): a pure function of the waiting players and the time.

Kept pure — no store, no clock — so the tables a matcher makes can be checked from a list of entries alone, and
two workers shown the same queue plan the same tables (the store's claim then lets only one of them seat each).

Players wait in groups that may share a table (same kind, seats and options). Within a group the player who has
waited longest is seated first, with the others closest to their rating, provided each is within the allowed gap:
``BASE_GAP`` rating points, widening by ``WIDEN_PER_S`` for every second the longest-waiting one has waited. Once a
player has waited ``fill_ms``, the table is made with whoever is within the gap then, and bots take the other seats.
"""

from __future__ import annotations

import msgspec

BASE_GAP = 3.0
"""The rating gap (μ − 3σ points) allowed at once: a fresh rating is 0, a strong player's about 20 to 30."""
WIDEN_PER_S = 1.0
"""How much the allowed gap widens per second waited: after the default 20 s fill wait, 23 points."""


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    """One player in the queue, as the matcher sees them."""

    player_id: str
    group: str  # who may share a table: the kind, seats and options, as one string
    seats: int
    rating: float
    since: int  # ms


class Table(msgspec.Struct, frozen=True, kw_only=True):
    """A table to make: its players (longest waiting first, the order they are seated in) and how many bots fill it."""

    group: str
    players: tuple[str, ...]
    bots: int


def gap(waited_ms: int) -> float:
    """The rating gap allowed to a player who has waited ``waited_ms``."""
    return BASE_GAP + WIDEN_PER_S * max(waited_ms, 0) / 1000


def match(waiting: list[Waiting], now: int, fill_ms: int) -> list[Table]:
    """The tables to make now: each player in at most one; a table of people only when enough are close, with bots
    once its longest-waiting player has waited ``fill_ms``. Deterministic: ties go by ``since``, then player id."""
    tables: list[Table] = []
    groups: dict[str, list[Waiting]] = {}
    for w in sorted(waiting, key=lambda w: (w.since, w.player_id)):
        groups.setdefault(w.group, []).append(w)
    for group, entries in groups.items():
        free, i = list(entries), 0
        while i < len(free):
            anchor, others = free[i], free[:i] + free[i + 1 :]  # one skipped for now may still join a later table
            allowed = gap(now - anchor.since)
            near = sorted((w for w in others if abs(w.rating - anchor.rating) <= allowed),
                          key=lambda w: (abs(w.rating - anchor.rating), w.since, w.player_id))[: anchor.seats - 1]
            if len(near) < anchor.seats - 1 and now - anchor.since < fill_ms:
                i += 1  # not yet: the others may still find a table without this one
                continue
            chosen = sorted([anchor, *near], key=lambda w: (w.since, w.player_id))
            players = tuple(w.player_id for w in chosen)
            tables.append(Table(group=group, players=players, bots=anchor.seats - len(chosen)))
            taken = {w.player_id for w in chosen}
            free, i = [w for w in free if w.player_id not in taken], 0
    return tables


def closest_bot(bots: dict[str, float], rating: float, weakest_first: tuple[str, ...] = ()) -> str:
    """The bot kind whose rating is closest to ``rating``; of several as close, the weakest (``weakest_first``: the
    league's order, then the name). Every bot kind is unrated at first, all at one rating: a newcomer then meets the
    gentlest bot, not the strongest one whose name sorts first."""
    rank = {b: i for i, b in enumerate(weakest_first)}
    return min(sorted(bots), key=lambda b: (abs(bots[b] - rating), rank.get(b, len(rank))))
