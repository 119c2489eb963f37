"""What moves the card game on, for the idle close (rules version 3, ``docs/rules-free-parking.md``).

A game nobody moved on for the idle time is closed. Up to version 2 any event counted; from version 3 only the turns'
own course does: the deal, a turn beginning, its main play, its Second Chance, its end (or the server's playing it),
a round's end, and the seating and end of the game. An interrupt (Officer Jones, played by anyone at any time no
answer is awaited) and everything an action then asks and does (answers, choices, cards moved) do not: they can be
made while the seat on turn does nothing, so seats other than the one on turn could otherwise put off the close with
the cards in their hands — a turn nobody plays closes the game an idle time after it began, whatever else happened.
"""

from __future__ import annotations

import msgspec

from service.events import free_parking as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from ..close import PROGRESS_CLOSES

MOVES_ON: tuple[type, ...] = (
    ev.GameCreated,
    SeatTaken,
    ev.RoundDealt,
    ev.TurnBegan,
    ev.MeterFed,
    ev.ErrandRun,
    ev.ThreeSwapped,
    ev.CardDiscarded,
    ev.TimeExpiresPlayed,
    ev.SecondChanceDrawn,
    ev.TurnEnded,
    ev.TurnTimedOut,
    ev.SeatForfeited,
    ev.RoundEnded,
    ev.GameWon,
    GameClosed,
    SeedRevealed,
)


def moves_on(rules_version: int, e: msgspec.Struct) -> bool:
    """Whether ``e`` moves a game of ``rules_version`` on: every event before version 3."""
    return rules_version < PROGRESS_CLOSES or isinstance(e, MOVES_ON)
