"""Who a line of words names: ``seat 1`` in an audit line (stable, as API.md shows it), a player's name in a move log.

A kind's ``summary(event, who)`` takes one of these; ``Seats`` tracks who sits where as a log is read, so each event
names the players as they sat at that event (a trade of places moves them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from service.events.base import Player
from service.events.common import SeatTaken

Who = Callable[[int], str]


def seat_words(seat: int) -> str:
    """The audit log's words for a seat."""
    return f"seat {seat}"


def seats_words(who: Who, seats: Iterable[int]) -> str:
    """Several seats: ``seats 0, 2`` in an audit line, ``Ann, Gus`` by name."""
    seats = list(seats)
    if who is seat_words:
        return f"seats {', '.join(map(str, seats))}"
    return and_list([who(s) for s in seats])


def and_list(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


class Seats:
    """The players at each seat as of the event last ``see``n: seat_taken seats one, a swap (``trade``) moves two."""

    def __init__(self) -> None:
        self.players: dict[int, Player] = {}

    def name(self, seat: int) -> str:
        p = self.players.get(seat)
        if p is None:
            return f"seat {seat}"
        same = [s for s, q in self.players.items() if q.name.casefold() == p.name.casefold()]
        return p.name if len(same) == 1 else f"{p.name} (seat {seat})"  # two guests called "Guest"

    __call__ = name

    def seat_of(self, player_id: str | None) -> int | None:
        if player_id is None:
            return None
        return next((s for s, p in self.players.items() if p.player_id == player_id), None)

    def see(self, event: msgspec.Struct) -> None:
        if isinstance(event, SeatTaken):
            self.players[event.seat] = event.player

    def trade(self, a: int, b: int) -> None:
        pa, pb = self.players.get(a), self.players.get(b)
        for seat, p in ((a, pb), (b, pa)):
            if p is None:
                self.players.pop(seat, None)
            else:
                self.players[seat] = p
