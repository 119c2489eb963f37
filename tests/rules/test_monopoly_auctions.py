"""Monopoly, the bank's auction of a declined property (RULES.md §3): every player may bid, the decliner too; bids
in whole dollars from $1, each above the last; it closes when every other bidder has passed, or when
``response_seconds`` pass with no higher bid; with no bid the property stays with the bank."""

from __future__ import annotations

from service.events import monopoly as ev
from service.events.common import Timeout

from .monopoly_table import table


def declined(seats: int = 3, **layout):
    """Seat 0 lands on Baltic Avenue (3) and declines it."""
    t = table(seats, **layout).dice(1, 2)
    return t.play(ev.Roll(), 0).play(ev.Decline(), 0)


def test_declining_opens_an_auction_to_every_player_the_decliner_too():
    t = declined()
    opened = t.of(ev.AuctionOpened)[0]
    assert opened.lot == 3 and opened.bidders == (0, 1, 2)
    assert t.state.pending.kind == "auction" and set(t.state.pending.seats) == {0, 1, 2}


def test_the_highest_bid_wins_once_every_other_bidder_has_passed():
    t = declined()
    t.play(ev.Bid(amount=10), 1).play(ev.Bid(amount=11), 2).play(ev.Bid(amount=30), 1)
    t.play(ev.PassBid(), 0).play(ev.PassBid(), 2)
    closed = t.of(ev.AuctionClosed)[0]
    assert (closed.winner, closed.amount) == (1, 30)
    assert t.owner(3) == 1 and t.cash(1) == 1470 and t.state.turn_seat == 1


def test_the_decliner_may_win_it_cheaper_than_the_price():
    t = declined()
    t.play(ev.Bid(amount=1), 0).play(ev.PassBid(), 1).play(ev.PassBid(), 2)
    assert t.owner(3) == 0 and t.cash(0) == 1499


def test_a_bid_must_be_above_the_last():
    t = declined()
    t.play(ev.Bid(amount=10), 1)
    t.refused(ev.Bid(amount=10), 2, "bid_too_low")
    t.refused(ev.Bid(amount=9), 0, "bid_too_low")


def test_a_bid_above_your_cash_is_refused():
    t = declined(cash={2: 40})
    t.refused(ev.Bid(amount=41), 2, "cannot_afford")


def test_a_pass_is_final_and_the_high_bidder_cannot_pass():
    t = declined()
    t.play(ev.PassBid(), 2)
    t.refused(ev.Bid(amount=5), 2, "already_passed")
    t.play(ev.Bid(amount=5), 1)
    t.refused(ev.PassBid(), 1, "high_bidder")


def test_with_no_bid_the_property_stays_with_the_bank():
    t = declined()
    for seat in (0, 1, 2):
        t.play(ev.PassBid(), seat)
    closed = t.of(ev.AuctionClosed)[0]
    assert closed.winner is None and t.owner(3) is None and t.state.turn_seat == 1


def test_the_deadline_closes_it_at_the_high_bid():
    t = declined()
    t.play(ev.Bid(amount=25), 2)
    assert t.state.pending.deadline_at == t.now + 30_000
    t.refused(Timeout(), None, "deadline_not_reached")
    t.timeout()
    assert t.owner(3) == 2 and t.cash(2) == 1475


def test_each_bid_moves_the_deadline_on():
    t = declined()
    t.play(ev.Bid(amount=5), 1, at=t.now + 20_000)
    assert t.state.auction.deadline_at == t.now + 50_000


def test_only_bidders_bid_and_only_while_an_auction_is_open():
    table().refused(ev.Bid(amount=5), 0, "no_auction")
    table().refused(ev.PassBid(), 1, "no_auction")


def test_no_one_rolls_while_the_auction_is_open():
    t = declined()
    t.refused(ev.Roll(), 0, "not_now")
