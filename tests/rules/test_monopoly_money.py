"""Monopoly, money (RULES.md §3): mortgages and lifting them at +10%; trades of property, cash and jail cards;
debts, bankruptcy to a player or to the bank; and the end of the game."""

from __future__ import annotations

from msgspec.structs import replace

from service.events import monopoly as ev
from service.rules.monopoly import legal_commands
from service.rules.monopoly.money import could_raise
from service.rules.monopoly.view import view

from .monopoly_table import deck_with_top, started, table

LIGHT_BLUE = (6, 8, 9)


# --- mortgages ---------------------------------------------------------------------------------------------


def test_a_mortgage_pays_half_the_printed_price():
    t = table(own={0: (39,)}).play(ev.Mortgage(square=39), 0)
    assert t.state.sites[39].mortgaged and t.cash(0) == 1700


def test_lifting_a_mortgage_costs_the_mortgage_plus_10_percent_rounded_up():
    t = table(own={0: (39, 12)}, mortgaged=[39, 12])
    t.play(ev.LiftMortgage(square=39), 0)
    assert t.cash(0) == 1500 - 220 and not t.state.sites[39].mortgaged
    t.play(ev.LiftMortgage(square=12), 0)
    assert t.cash(0) == 1280 - (75 + 8)


def test_mortgage_refusals():
    t = table(own={0: LIGHT_BLUE, 1: (39,)}, levels={6: 1}, mortgaged=[])
    t.refused(ev.Mortgage(square=8), 0, "sell_buildings_first")
    t.refused(ev.Mortgage(square=39), 0, "not_owner")
    t.refused(ev.LiftMortgage(square=8), 0, "not_mortgaged")
    m = table(own={0: (39,)}, mortgaged=[39], cash={0: 100})
    m.refused(ev.Mortgage(square=39), 0, "already_mortgaged")
    m.refused(ev.LiftMortgage(square=39), 0, "cannot_afford")


# --- trades ----------------------------------------------------------------------------------------------


def offered(t, seat: int, to: int, give: ev.Holdings, get: ev.Holdings):
    t.play(ev.OfferTrade(to=to, give=give, get=get), seat)
    return t.of(ev.TradeOffered)[0].trade


def test_a_trade_of_property_cash_and_a_jail_card_accepted():
    t = table(own={0: (1,), 1: (3,)}, jail_cards={0: ("CC05",)})
    trade = offered(t, 0, 1, ev.Holdings(squares=(1,), jail_cards=("CC05",)), ev.Holdings(squares=(3,), cash=100))
    assert t.state.pending.kind == "trade" and t.state.pending.seat == 1 and not t.state.pending.blocking
    t.play(ev.AcceptTrade(trade=trade), 1)
    assert (t.owner(1), t.owner(3)) == (1, 0)
    assert (t.cash(0), t.cash(1)) == (1600, 1400)
    assert t.seat(1).jail_cards == ("CC05",) and t.seat(0).jail_cards == ()
    assert t.state.trades == ()


def test_a_trade_rejected_changes_nothing_but_the_offer():
    t = table(own={0: (1,)})
    trade = offered(t, 0, 1, ev.Holdings(squares=(1,)), ev.Holdings(cash=100))
    t.play(ev.RejectTrade(trade=trade), 1)
    assert t.owner(1) == 0 and t.cash(1) == 1500 and t.of(ev.TradeClosed)[0].why == "rejected"


def test_the_offerer_may_withdraw_and_only_the_other_side_answers():
    t = table(3, own={0: (1,)})
    trade = offered(t, 0, 1, ev.Holdings(squares=(1,)), ev.Holdings(cash=100))
    t.refused(ev.AcceptTrade(trade=trade), 2, "not_your_trade")
    t.refused(ev.AcceptTrade(trade=trade), 0, "not_your_trade")
    t.refused(ev.WithdrawTrade(trade=trade), 1, "not_your_trade")
    t.play(ev.WithdrawTrade(trade=trade), 0)
    assert t.of(ev.TradeClosed)[0].why == "withdrawn"


def test_an_unanswered_trade_expires_at_its_deadline():
    t = table(own={0: (1,)})
    offered(t, 0, 1, ev.Holdings(squares=(1,)), ev.Holdings(cash=100))
    t.timeout()
    assert t.of(ev.TradeClosed)[0].why == "expired" and t.state.trades == ()


def test_a_trade_of_something_you_do_not_own_is_refused():
    t = table(own={1: (3,)})
    t.refused(ev.OfferTrade(to=1, give=ev.Holdings(squares=(3,))), 0, "not_owner")
    t.refused(ev.OfferTrade(to=1, get=ev.Holdings(squares=(1,))), 0, "not_owner")
    t.refused(ev.OfferTrade(to=1, give=ev.Holdings(jail_cards=("CH08",))), 0, "not_holder")
    t.refused(ev.OfferTrade(to=1, give=ev.Holdings(cash=2000)), 0, "cannot_afford")
    t.refused(ev.OfferTrade(to=0, give=ev.Holdings(cash=1)), 0, "bad_trade_partner")
    t.refused(ev.OfferTrade(to=1), 0, "empty_trade")


def test_cash_in_a_trade_is_never_negative_whoever_sends_it():
    """The API's decoding refuses negative cash; the rules refuse it too, for a command made in the process (a bot)."""
    t = table(own={1: (3,)})
    t.refused(ev.OfferTrade(to=1, give=ev.Holdings(cash=-100), get=ev.Holdings(squares=(3,))), 0, "bad_trade")
    t.refused(ev.OfferTrade(to=1, get=ev.Holdings(cash=-1, squares=(3,))), 0, "bad_trade")


def test_a_site_with_buildings_on_its_group_cannot_be_traded():
    t = table(own={0: LIGHT_BLUE}, levels={6: 1})
    t.refused(ev.OfferTrade(to=1, give=ev.Holdings(squares=(9,))), 0, "sell_buildings_first")


def test_a_trade_is_checked_again_when_accepted():
    t = table(own={0: (1,)})
    trade = offered(t, 0, 1, ev.Holdings(squares=(1,)), ev.Holdings(cash=100))
    t.state = with_cash(t.state, 1, 50)  # seat 1 spent its money meanwhile
    t.refused(ev.AcceptTrade(trade=trade), 1, "cannot_afford")


def with_cash(s, seat, cash):
    seats = list(s.seats)
    seats[seat] = replace(seats[seat], cash=cash)
    return replace(s, seats=tuple(seats))


def test_receiving_a_mortgaged_property_pays_its_10_percent_at_once_and_may_lift_it_then_for_the_bare_mortgage():
    t = table(own={0: (39,)}, mortgaged=[39])
    trade = offered(t, 0, 1, ev.Holdings(squares=(39,)), ev.Holdings(cash=10))
    assert view(t.state, 1).interest_paid == []
    t.play(ev.AcceptTrade(trade=trade), 1)
    interest = [e for e in t.of(ev.Paid) if e.reason == "interest"]
    assert [(e.payer, e.amount) for e in interest] == [(1, 20)] and t.cash(1) == 1500 - 10 - 20
    assert view(t.state, 1).interest_paid == [39]  # what a player reads to know the lift costs the bare mortgage
    t.play(ev.LiftMortgage(square=39), 1)
    assert t.cash(1) == 1470 - 200


# --- debts and bankruptcy --------------------------------------------------------------------------------


def owing(own=None, levels=None, **layout):
    """Seat 0 lands on Park Place (37) with a hotel, owned by seat 1: $1500 rent."""
    own = {1: (37, 39), **(own or {})}
    levels = {37: 5, 39: 5, **(levels or {})}
    t = table(own=own, levels=levels, at={0: 35}, **layout).dice(1, 1)
    return t.play(ev.Roll(), 0)


def test_a_debt_larger_than_the_cash_waits_with_a_deadline():
    t = owing(cash={0: 1000})
    debt = t.state.debts[0]
    assert (debt.seat, debt.creditor, debt.amount) == (0, 1, 1500)
    assert t.state.pending.kind == "debt" and t.state.pending.deadline_at == t.now + 30_000
    assert t.cash(0) == 1000


def test_raising_the_cash_pays_the_debt_at_once_and_the_turn_goes_on():
    t = owing(cash={0: 1200}, own={0: (21, 23, 24)})
    t.play(ev.Mortgage(square=21), 0).play(ev.Mortgage(square=23), 0)
    assert t.state.debts
    t.play(ev.Mortgage(square=24), 0)
    assert not t.state.debts and t.cash(0) == 1200 + 110 + 110 + 120 - 1500 and t.cash(1) == 3000
    assert "roll_again" in t.tags()


def test_bankruptcy_to_a_player_hands_over_everything():
    t = owing(cash={0: 100}, own={0: (1, 3, 5)}, levels={1: 1, 3: 1}, mortgaged=[5], jail_cards={0: ("CH08",)})
    t.play(ev.DeclareBankruptcy(), 0)
    assert t.seat(0).bankrupt and t.cash(0) == 0
    assert all(t.owner(q) == 1 for q in (1, 3, 5)) and t.level(1) == t.level(3) == 0
    assert t.seat(1).jail_cards == ("CH08",)
    assert t.cash(1) == 1500 + 100 + 50 - 10  # cash + houses sold at half - 10% on the mortgaged railroad
    assert t.state.sites[5].mortgaged


def test_bankruptcy_to_the_bank_auctions_the_properties_and_returns_the_jail_cards():
    t = table(3, own={0: (1, 3)}, at={0: 35}, cash={0: 10}, jail_cards={0: ("CC05",)}).dice(1, 2)
    t.play(ev.Roll(), 0)  # Luxury Tax: $75
    assert t.state.debts[0].creditor is None
    t.play(ev.DeclareBankruptcy(), 0)
    assert t.state.chest[-1] == "CC05"
    assert t.state.auction.lot == 1 and t.state.lots == (3,) and t.state.auction.bidders == (1, 2)
    t.play(ev.Bid(amount=5), 1).play(ev.PassBid(), 2)
    assert t.owner(1) == 1 and t.state.auction.lot == 3
    t.play(ev.PassBid(), 1).play(ev.PassBid(), 2)
    assert t.owner(3) is None and t.state.turn_seat == 1


def test_a_debt_not_raised_by_its_deadline_is_bankruptcy():
    t = owing(cash={0: 100}, seats=3)
    t.timeout()
    assert t.seat(0).bankrupt and t.state.turn_seat == 1


def test_declaring_bankruptcy_without_a_debt_is_refused():
    table().refused(ev.DeclareBankruptcy(), 0, "no_debt")


def luxury_tax_owed(cash: int, rules_version: int = 2, **layout):
    """Seat 0 lands on Luxury Tax ($75) with ``cash``."""
    return table(at={0: 35}, cash={0: cash}, rules_version=rules_version, **layout).dice(1, 2).play(ev.Roll(), 0)


def test_bankruptcy_is_refused_while_the_debt_could_be_raised():
    """Owing $75 with Boardwalk unmortgaged: mortgaging it raises $200, so there is no bankruptcy to declare."""
    t = luxury_tax_owed(30, own={0: (39,)})
    assert t.state.debts[0].amount == 75
    refused = t.refused(ev.DeclareBankruptcy(), 0, "not_insolvent")
    assert refused.detail == {"could_raise": 230, "owed": 75}
    assert ev.DeclareBankruptcy() not in legal_commands(t.state, 0)
    t.play(ev.Mortgage(square=39), 0)
    assert not t.state.debts and t.cash(0) == 30 + 200 - 75


def test_what_could_be_raised_counts_every_building_at_half_its_cost_and_every_unmortgaged_property():
    """$5 + 3 houses on light blue at $25 + their mortgages ($50, $50, $60) + Boardwalk's already mortgaged: $240."""
    layout = {"own": {0: (*LIGHT_BLUE, 39)}, "levels": {6: 1, 8: 1, 9: 1}, "mortgaged": [39]}
    assert could_raise(luxury_tax_owed(5, **layout).state, 0) == 5 + 75 + 160
    t = owing(cash={0: 5}, **layout)  # $1,500 of rent
    t.play(ev.DeclareBankruptcy(), 0)
    assert t.seat(0).bankrupt


def test_an_insolvent_debtor_may_declare_bankruptcy_and_it_is_listed():
    t = luxury_tax_owed(30, own={0: (1,)})  # $30 + Mediterranean's $30 mortgage: short of $75
    assert ev.DeclareBankruptcy() in legal_commands(t.state, 0)
    t.play(ev.DeclareBankruptcy(), 0)
    assert t.seat(0).bankrupt


def test_a_debt_not_raised_by_its_deadline_is_bankruptcy_even_when_it_could_have_been():
    """The rule limits what a player may declare; the deadline still ends a debt nobody raised the cash for."""
    t = luxury_tax_owed(30, own={0: (39,)}, seats=3)
    t.timeout()
    assert t.seat(0).bankrupt and t.state.auction.lot == 39


def test_version_1_still_lets_a_debtor_declare_bankruptcy_while_it_could_raise_the_debt():
    t = luxury_tax_owed(30, rules_version=1, own={0: (39,)})
    assert ev.DeclareBankruptcy() in legal_commands(t.state, 0)
    t.play(ev.DeclareBankruptcy(), 0)
    assert t.seat(0).bankrupt


# --- jail state after bankruptcy -------------------------------------------------------------------------


def jailed_debtor(rules_version: int = 2):
    """Seat 1 sits in jail after two failed tries with $20 when seat 0 draws Opera night: it owes seat 0 $50."""
    chest = deck_with_top(started().chest, "CC07")
    t = table(jailed=[1], at={1: 10}, jail_tries={1: 2}, cash={1: 20}, chest=chest, rules_version=rules_version)
    t.dice(1, 1).play(ev.Roll(), 0)
    assert t.state.debts[0].seat == 1 and t.state.debts[0].amount == 50
    return t


def test_a_bankrupt_player_keeps_no_jail_state():
    t = jailed_debtor().play(ev.DeclareBankruptcy(), 1)
    gone = t.seat(1)
    assert gone.bankrupt and not gone.in_jail and gone.jail_tries == 0 and gone.jail_cards == ()


def test_a_bankrupt_player_keeps_no_jail_state_when_the_deadline_bankrupts_it():
    t = jailed_debtor().timeout()
    assert t.seat(1).bankrupt and (t.seat(1).in_jail, t.seat(1).jail_tries) == (False, 0)


def test_version_1_still_folds_a_bankrupts_failed_tries_as_it_did():
    t = jailed_debtor(rules_version=1).play(ev.DeclareBankruptcy(), 1)
    assert t.seat(1).bankrupt and not t.seat(1).in_jail and t.seat(1).jail_tries == 2


# --- the end ---------------------------------------------------------------------------------------------


def test_the_last_player_left_wins():
    t = owing(cash={0: 100})
    t.play(ev.DeclareBankruptcy(), 0)
    ended = t.of(ev.GameEnded)[0]
    assert (ended.winner, ended.reason) == (1, "last_player") and t.state.over
    assert t.tags()[-1] == "seed_revealed"


def test_after_max_rounds_the_largest_worth_wins():
    t = table(max_rounds=1, own={1: (39,)}, mortgaged=[39], cash={0: 1600, 1: 1500}, turn=1).dice(1, 2)
    t.play(ev.Roll(), 1)  # seat 1 is last in round 1: Baltic, declined, nobody bids, the round ends
    t.play(ev.Decline(), 1).play(ev.PassBid(), 0).play(ev.PassBid(), 1)
    ended = t.of(ev.GameEnded)[0]
    assert ended.reason == "max_rounds" and ended.worth == (1600, 1700) and ended.winner == 1
