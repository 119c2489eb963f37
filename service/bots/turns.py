"""Whose move it is among bots: the seats a wait is on, and who acts next."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from service.rules.resign import bot_legal


def awaited(pending: Any) -> tuple[int, ...]:
    """The seats a wait is on: a Monopoly auction or building shortage awaits several at once (its ``seats``, the
    first being ``seat``); a kind whose waits have no ``seats`` awaits ``seat`` alone."""
    return getattr(pending, "seats", ()) or (pending.seat,)


def holds_up(s: Any) -> bool:
    """Whether the game's wait holds up play: a kind's waits do unless its state says otherwise (``blocked``: a
    Monopoly trade offer awaits its answer while the turn goes on)."""
    return s.pending is not None and getattr(s, "blocked", True)


def order(s: Any) -> list[int]:
    """The seats in the order they are asked: an awaited seat; else any seat that interrupts; else the seat whose turn
    it is. A wait that holds up nothing (``holds_up``) lets the others play on after the awaited seats."""
    seats = list(awaited(s.pending)) if s.pending is not None else []
    if not seats or not holds_up(s):
        seats += [seat for seat in (*s.opponents(s.turn_seat), s.turn_seat) if seat not in seats]
    return seats


def next_move(
    rules: Any, s: Any, bots: list[Any], rnd: random.Random, seats: set[int] | None = None
) -> tuple[int, msgspec.Struct] | None:
    """Who acts next and with what: an awaited seat; else any seat that interrupts; else the seat whose turn
    it is. A wait that holds up nothing (``holds_up``) lets the others play on after the awaited seats. Only
    ``seats`` (default: all) are played; ``None`` when none of them acts now."""
    for seat in order(s):
        if seats is not None and seat not in seats:
            continue
        legal = bot_legal(rules, s, seat)
        command = bots[seat].choose(s, seat, legal, rnd) if legal else None
        if command is not None:
            return seat, command
    return None


def seated(bots: dict[Any, Any], s: Any) -> list[Any]:
    """Each seat's bot now, from ``bots`` by player: a trade of places moves players, and each bot plays its own
    player wherever that player sits (as the service's bots do)."""
    return [bots[st.player] for st in s.seats]
