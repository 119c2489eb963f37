"""Resigning in Monopoly (RULES.md §3 "Resigning", docs/rules-monopoly.md): at any moment while still in, it is
bankruptcy to the bank exactly as a forfeit — buildings sold back at half price, cash to the bank, jail cards back,
properties auctioned; during an auction, a trade or a debt, what the player was part of closes first."""

from __future__ import annotations

from service.events import monopoly as ev
from service.rules.monopoly import Log, legal_commands, view

from .monopoly_table import table


def test_every_seat_still_in_may_resign_on_turn_or_not_and_it_is_listed_last():
    t = table(3)
    assert all(legal_commands(t.state, seat)[-1] == ev.Resign() for seat in range(3))


def test_resigning_is_bankruptcy_to_the_bank_as_a_forfeit():
    t = table(3, own={2: (1, 3)}, levels={1: 1, 3: 1}, cash={2: 200}, jail_cards={2: ("CC05",)})
    t.play(ev.Resign(), 2)  # off turn: seat 0 is on turn
    assert t.tags()[0] == "seat_resigned" and t.of(ev.SeatResigned)[0].seat == 2
    assert t.of(ev.JailCardReturned)[0].card == "CC05" and t.state.chest[-1] == "CC05"  # jail cards back
    assert t.level(1) == t.level(3) == 0  # buildings sold back...
    assert t.of(ev.Paid)[-1] == ev.Paid(payer=2, payee=None, amount=200 + 25 + 25, reason="bankruptcy")  # ...at half
    assert t.of(ev.WentBankrupt)[0] == ev.WentBankrupt(seat=2, creditor=None)
    assert t.seat(2).bankrupt and t.seat(2).resigned and t.cash(2) == 0 and t.seat(2).jail_cards == ()
    assert t.state.auction.lot == 1 and t.state.lots == (3,) and t.state.auction.bidders == (0, 1)  # auctioned
    seen = view(t.state, 0).seats[2]
    assert seen.resigned and seen.bankrupt and not seen.forfeited
    assert legal_commands(t.state, 2) == []
    t.refused(ev.Resign(), 2, "bankrupt")  # never undone


def test_resigning_on_turn_passes_the_turn():
    t = table(3)
    t.play(ev.Resign(), 0)
    assert t.state.turn_seat == 1 and t.of(ev.TurnBegan)[0].seat == 1


def test_with_one_player_left_the_game_is_over():
    t = table(2)
    t.play(ev.Resign(), 1)
    ended = t.of(ev.GameEnded)[0]
    assert ended.winner == 0 and ended.reason == "last_player" and t.state.over
    assert legal_commands(t.state, 0) == legal_commands(t.state, 1) == []  # a finished game lists nothing


def test_during_an_auction_the_resigning_players_bids_lapse():
    t = table(3).dice(1, 2)
    t.play(ev.Roll(), 0).play(ev.Decline(), 0)  # Baltic Avenue under the hammer
    t.play(ev.Bid(amount=10), 1)
    assert t.state.auction.high_seat == 1
    t.play(ev.Resign(), 1)
    a = t.state.auction
    assert a.lot == 3 and a.bidders == (0, 2) and a.high_seat is None and a.high_bid == 0
    t.play(ev.Bid(amount=5), 2).play(ev.PassBid(), 0)
    assert t.owner(3) == 2


def test_during_a_trade_the_resigning_players_offers_lapse_made_or_received():
    t = table(3, own={0: (1,), 1: (3,)})
    t.play(ev.OfferTrade(to=1, give=ev.Holdings(cash=10)), 0)
    t.play(ev.OfferTrade(to=0, give=ev.Holdings(cash=20)), 2)
    t.play(ev.OfferTrade(to=2, give=ev.Holdings(cash=30)), 1)
    mine = [tr.id for tr in t.state.trades if 0 in (tr.seat, tr.to)]
    t.play(ev.Resign(), 0)
    assert [e.trade for e in t.of(ev.TradeClosed)] == mine and all(e.why == "void" for e in t.of(ev.TradeClosed))
    assert t.tags()[: 1 + len(mine)] == ["seat_resigned", *["trade_closed"] * len(mine)]  # closed first
    assert [(tr.seat, tr.to) for tr in t.state.trades] == [(1, 2)]  # the others' trade stands


def test_during_their_debt_it_is_still_bankruptcy_to_the_bank():
    t = table(3, own={1: (37, 39), 0: (1,)}, levels={37: 5, 39: 5}, at={0: 35}, cash={0: 100}).dice(1, 1)
    t.play(ev.Roll(), 0)  # Park Place with a hotel: $1500 owed to seat 1, more than the cash
    assert t.state.debts and t.state.debts[0].creditor == 1
    t.play(ev.Resign(), 0)
    assert t.of(ev.WentBankrupt)[0] == ev.WentBankrupt(seat=0, creditor=None)  # the bank, not the creditor
    assert t.state.debts == () and t.cash(1) == 1500 and t.state.auction.lot == 1


def test_the_move_log_says_it_in_words():
    t = table(3)
    t.play(ev.Resign(), 2)
    log = Log()
    assert log.line(t.events[0], t.events[1:]) == "seat 2 resigns: bankrupt to the bank"
