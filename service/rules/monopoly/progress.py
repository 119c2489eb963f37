"""What moves Monopoly on, for the idle close (rules version 3, ``docs/rules-monopoly.md``).

A game nobody moved on for the idle time is closed. Up to version 2 any event counted, so the player on turn could
hold a table for ever without rolling: offer a trade and withdraw it before each close. From version 3 only what a
seat cannot repeat without the game advancing counts: the dice (a move, a try for doubles, a utility's throw), a turn
beginning, leaving jail, a property sold at auction (a bankrupt's lots are sold one by one, each with its own
deadline: together they may outlast the idle time), a player going bankrupt, and the seating, start and end. Trades
(offered, answered, withdrawn, accepted — two players can swap a property back and forth), mortgages and their
lifting, buildings built, sold, claimed or auctioned (a build can be sold back), bids, debts and the waits do not.
"""

from __future__ import annotations

import msgspec

from service.events import monopoly as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from ..close import PROGRESS_CLOSES

MOVES_ON: tuple[type, ...] = (
    ev.GameCreated,
    SeatTaken,
    ev.GameStarted,
    ev.TurnBegan,
    ev.DiceRolled,
    ev.LeftJail,
    ev.WentBankrupt,
    ev.GameEnded,
    GameClosed,
    SeedRevealed,
)


def moves_on(rules_version: int, e: msgspec.Struct) -> bool:
    """Whether ``e`` moves a game of ``rules_version`` on: every event before version 3."""
    if rules_version < PROGRESS_CLOSES or isinstance(e, MOVES_ON):
        return True
    return isinstance(e, ev.AuctionClosed) and isinstance(e.lot, int) and e.winner is not None
