"""Monopoly's table as immutable data: what ``evolve`` folds events into.

Besides the board (``sites``: owner, buildings, mortgage for every square) and the players, the state holds
the game's open waits: a purchase or tax choice of the player who moved, an auction, a shortage window, debts
in the order they arose, and the trade offers awaiting an answer. The turn goes on only when no wait blocks it
(trades never do).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.base import Player
from service.events.monopoly import Holdings, Lot, MonopolyConfig

from .. import setup
from ..close import Closed
from .board import HOTELS, HOUSES, SQUARES

Phase = Literal["new", "waiting", "playing", "over"]


class SeatState(msgspec.Struct, frozen=True):
    player: Player | None = None
    cash: int = 0
    position: int = 0
    in_jail: bool = False
    jail_tries: int = 0
    jail_cards: tuple[str, ...] = ()
    bankrupt: bool = False
    missed: int = 0
    """Turns in a row the turn clock ran out on; reset when the player rolls (or leaves jail) themselves."""
    forfeited: bool = False
    """Out after ``forfeit_after`` missed turns (``seat_forfeited``): bankrupt to the bank as well."""
    resigned: bool = False
    """Out because the player resigned (``seat_resigned``): bankrupt to the bank as well, exactly as a forfeit."""


class Site(msgspec.Struct, frozen=True):
    owner: int | None = None
    level: int = 0
    """0–4 houses; 5 a hotel."""
    mortgaged: bool = False


class Offer(msgspec.Struct, frozen=True):
    """The mover's own decision after landing: buy ``square`` or not, or which income tax to pay."""

    kind: Literal["buy", "tax"]
    seat: int
    deadline_at: int
    square: int = 0


class Auction(msgspec.Struct, frozen=True):
    lot: Lot
    bidders: tuple[int, ...]
    deadline_at: int
    passed: tuple[int, ...] = ()
    high_bid: int = 0
    high_seat: int | None = None

    @property
    def awaited(self) -> tuple[int, ...]:
        """Who may still outbid: every bidder who has not passed, less the one holding the high bid."""
        return tuple(s for s in self.bidders if s not in self.passed and s != self.high_seat)


class Claim(msgspec.Struct, frozen=True):
    seat: int
    sites: tuple[int, ...]


class Shortage(msgspec.Struct, frozen=True):
    """A build that asks for more ``kind`` than the bank holds, and the claims of the other owners."""

    kind: Literal["house", "hotel"]
    claims: tuple[Claim, ...]
    """The builder's first, then each claimant's, in the order they answered."""
    claimants: tuple[int, ...]
    answered: tuple[int, ...]
    deadline_at: int

    @property
    def awaited(self) -> tuple[int, ...]:
        return tuple(s for s in self.claimants if s not in self.answered)


class Debt(msgspec.Struct, frozen=True):
    seat: int
    creditor: int | None
    amount: int
    reason: str
    deadline_at: int


class Trade(msgspec.Struct, frozen=True):
    id: int
    seat: int
    to: int
    give: Holdings
    get: Holdings
    deadline_at: int


class Pending(msgspec.Struct, frozen=True):
    """The wait the game is on now, as the service's schedulers read it: ``seats`` may answer (``seat`` first),
    and at ``deadline_at`` the server times it out."""

    seat: int
    kind: Literal["buy", "tax", "auction", "shortage", "debt", "trade"]
    deadline_at: int
    seats: tuple[int, ...] = ()
    blocking: bool = True
    """Whether the turn waits on it: a trade answer does not hold up anyone else's play."""


class State(setup.Seeded, frozen=True):
    config: MonopolyConfig
    seed: bytes
    rules_version: int = 1  # which rules decide this game (its GameCreated says; RULES_VERSIONS)
    version: int = 0
    phase: Phase = "new"
    seats: tuple[SeatState, ...] = ()
    sites: tuple[Site, ...] = tuple(Site() for _ in SQUARES)
    houses: int = HOUSES
    hotels: int = HOTELS
    chance: tuple[str, ...] = ()
    chest: tuple[str, ...] = ()
    turn_seat: int = 0
    round: int = 0
    rolls: int = 0
    """Dice rolls so far: roll ``n`` uses stream ``dice:<n>``."""
    doubles: int = 0
    """Doubles in a row this turn."""
    turn_deadline_at: int | None = None
    """When the turn clock runs out on the roll in hand (``TurnBegan``, ``RollAgain``); none without a clock."""
    timed_out: bool = False
    """The server rolled this roll for the player (``TurnTimedOut``)."""
    turn_left_ms: int | None = None
    """While the roll's clock is stopped (``TurnClockStopped``, rules version 3): the time it had left."""
    progress: int = 0
    """The version of the game's last event that moved it on (``progress.moves_on``): the idle close counts from it."""
    step: Literal["roll", "moving"] = "roll"
    """``roll``: the player whose turn it is rolls next; ``moving``: a move is being settled."""
    again: bool = False
    """The move in hand came from doubles: the same player rolls again once it is settled."""
    last_dice: tuple[int, int] = (0, 0)
    dice_by: int | None = None
    """Who threw ``last_dice``: the dice on the board say whose roll they are."""
    dice_jailed: Literal["square", "card", "doubles"] | None = None
    """Why ``last_dice``'s roll sent its roller to jail (Go To Jail, a card drawn on the move, the third doubles)."""
    offer: Offer | None = None
    auction: Auction | None = None
    lots: tuple[Lot, ...] = ()
    """Auctions still to open after this one: a bankrupt's properties to the bank, or scarce buildings."""
    lot_claims: tuple[Claim, ...] = ()
    """Scarce-building auctions: who bids, and the sites each still wants."""
    shortage: Shortage | None = None
    debts: tuple[Debt, ...] = ()
    trades: tuple[Trade, ...] = ()
    interest_paid: tuple[int, ...] = ()
    """Mortgaged squares just received whose 10% was paid: lifted now for the bare mortgage (until the turn ends)."""
    winner: int | None = None
    end_reason: str | None = None
    worth: tuple[int, ...] = ()
    closed: Closed | None = None
    """Set when the server closed the game for nobody moving (``game_closed``): over, with no winner."""

    @property
    def n(self) -> int:
        return len(self.seats)

    @property
    def over(self) -> bool:
        return self.phase == "over"

    @property
    def live(self) -> tuple[int, ...]:
        """Seats still in the game."""
        return tuple(i for i, p in enumerate(self.seats) if not p.bankrupt)

    @property
    def blocked(self) -> bool:
        """Whether a wait holds up the turn (a trade never does)."""
        return bool(self.offer or self.auction or self.lots or self.shortage or self.debts)

    @property
    def pending(self) -> Pending | None:
        """The wait the game is on: a debt first, then the mover's offer, a shortage window, an auction, and
        last the oldest trade offer."""
        if self.debts:
            d = self.debts[0]
            return Pending(seat=d.seat, kind="debt", deadline_at=d.deadline_at, seats=(d.seat,))
        if self.offer:
            o = self.offer
            return Pending(seat=o.seat, kind=o.kind, deadline_at=o.deadline_at, seats=(o.seat,))
        if self.shortage and self.shortage.awaited:
            w = self.shortage
            return Pending(
                seat=w.awaited[0],
                kind="shortage",
                deadline_at=w.deadline_at,
                seats=w.awaited,
            )
        if self.auction:
            a = self.auction
            waiting = a.awaited or a.bidders
            return Pending(
                seat=waiting[0],
                kind="auction",
                deadline_at=a.deadline_at,
                seats=waiting,
            )
        if self.trades:
            t = min(self.trades, key=lambda t: (t.deadline_at, t.id))
            return Pending(
                seat=t.to,
                kind="trade",
                deadline_at=t.deadline_at,
                seats=(t.to,),
                blocking=False,
            )
        return None

    def opponents(self, seat: int) -> list[int]:
        """The other seats still in, in turn order after ``seat``."""
        return [(seat + k) % self.n for k in range(1, self.n) if not self.seats[(seat + k) % self.n].bankrupt]

    def owned_by(self, seat: int) -> tuple[int, ...]:
        return tuple(i for i, site in enumerate(self.sites) if site.owner == seat)


RULES_VERSION = 3
"""The version new games are played under; a change of behaviour that would replay a recorded game differently
bumps it, and the older versions stay playable (``RULES_VERSIONS``), branching where they differ. Version 2: a
hotel sold short of houses breaks the group down only as far as needed (``building.break_downs``), bankruptcy
is declared only when insolvent (``money.check_bankruptcy``), and a bankrupt keeps no jail tries (``evolve``).
Version 3 (issue 31): the roll's clock stops while a wait holds up the turn (``clock.hold``), and the idle close
counts from the last event that moved the game on — a roll, a turn — not from a trade, a mortgage or a build
(``progress``)."""
RULES_VERSIONS = (1, 2, 3)


def initial(config: MonopolyConfig, seed: bytes, rules_version: int = RULES_VERSION) -> State:
    if rules_version not in RULES_VERSIONS:
        raise ValueError(f"rules version {rules_version} is not one these rules play: {RULES_VERSIONS}")
    return State(config=config, seed=seed, rules_version=rules_version)
