"""The bank's auctions: a property its lander declined (or a bankrupt's, to the bank), or a scarce building.

Every bidder bids in whole dollars from $1, each bid above the last and within the bidder's cash; a pass is final
for that lot. The lot closes when every other bidder has passed, or when ``response_seconds`` pass with no higher
bid; with no bid, a property stays with the bank.
"""

from __future__ import annotations

from service.events import monopoly as ev

from ..errors import RuleViolation
from .batch import Batch
from .state import Auction, State


def min_bid(a: Auction) -> int:
    return a.high_bid + 1


def open_auction(b: Batch, lot: ev.Lot, bidders: tuple[int, ...]) -> None:
    b.emit(ev.AuctionOpened(lot=lot, bidders=bidders, deadline_at=b.deadline))


def property_bidders(s: State) -> tuple[int, ...]:
    """Every player still in, from the one whose turn it is round the table (the decliner too)."""
    return (
        (s.turn_seat, *s.opponents(s.turn_seat))
        if not s.seats[s.turn_seat].bankrupt
        else tuple(s.opponents(s.turn_seat))
    )


def _bidder(s: State, seat: int) -> Auction:
    a = s.auction
    if a is None:
        raise RuleViolation("no_auction", "No auction is open")
    if seat not in a.bidders:
        raise RuleViolation("not_a_bidder", "You are not a bidder in this auction")
    if seat in a.passed:
        raise RuleViolation("already_passed", "You passed on this lot")
    return a


def bid(b: Batch, seat: int, amount: int) -> None:
    s = b.state
    a = _bidder(s, seat)
    if amount < min_bid(a):
        raise RuleViolation("bid_too_low", f"A bid must be at least ${min_bid(a)}", min_bid=min_bid(a))
    if amount > s.seats[seat].cash:
        raise RuleViolation("cannot_afford", f"You have ${s.seats[seat].cash}", cash=s.seats[seat].cash)
    b.emit(ev.BidPlaced(seat=seat, amount=amount, deadline_at=b.deadline))


def pass_bid(b: Batch, seat: int) -> None:
    a = _bidder(b.state, seat)
    if a.high_seat == seat:
        raise RuleViolation("high_bidder", "You hold the high bid: the others must pass or outbid you")
    b.emit(ev.BidPassed(seat=seat))


def closable(a: Auction) -> bool:
    return not a.awaited


def close_auction(b: Batch, square: int | None = None) -> None:
    """To the high bidder (a building onto ``square``), or unsold."""
    a = b.state.auction
    assert a is not None
    b.emit(
        ev.AuctionClosed(
            lot=a.lot,
            winner=a.high_seat,
            amount=a.high_bid,
            square=square if a.high_seat is not None else None,
        )
    )
