"""The Monopoly bots' play, each ruling on an exact table: what the strategic bot does with a purchase, the income
tax, an auction, a debt, its own turn (jail, building, mortgages, offers) and a trade offered to it; and that the
random bot answers every wait and seldom acts out of turn. Every command they send is one ``legal_commands``
listed (an offer: one the decider takes)."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.bots import BOTS
from service.bots.monopoly import RandomBot, StrategicBot
from service.events import monopoly as ev
from service.rules.monopoly import decide, legal_commands
from service.rules.monopoly.legal import legal_forms
from service.rules.monopoly.state import Auction, Debt

from .monopoly_table import AT, Table, table

replace = msgspec.structs.replace
LIGHT_BLUE = (6, 8, 9)
BROWN = (1, 3)


class Always(random.Random):
    """A draw that always comes out ``value``: the bots' chance decisions taken one way."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


def within_legal(s, seat: int, command: msgspec.Struct, legal: list[msgspec.Struct]) -> bool:
    """Listed; or a bid within the bounds ``legal_forms`` gives; or an offer the decider takes."""
    if isinstance(command, ev.Bid):
        form = legal_forms(s, seat).bid
        return form is not None and form.min <= command.amount <= form.max
    if isinstance(command, ev.OfferTrade):
        decide(s, command, seat, AT)
        return True
    return command in legal


def choice(t: Table, seat: int, bot=None, rnd: random.Random | None = None) -> msgspec.Struct | None:
    """What ``bot`` (strategic by default) sends for ``seat`` now; checked to be legal."""
    bot = bot or StrategicBot()
    legal = legal_commands(t.state, seat)
    command = bot.choose(t.state, seat, legal, rnd or random.Random(0))
    assert command is None or within_legal(t.state, seat, command, legal)
    return command


def landed_on_baltic(**layout) -> Table:
    return table(**layout).dice(1, 2).play(ev.Roll(), 0)


def test_both_bots_are_registered_for_monopoly():
    assert BOTS["monopoly"] == {"random": RandomBot, "strategic": StrategicBot}


# --- purchases, tax, auctions --------------------------------------------------------------------------------


def test_it_buys_what_leaves_its_cash_reserve():
    assert choice(landed_on_baltic(cash=160), 0) == ev.Buy()


def test_it_declines_what_would_eat_into_its_reserve():
    assert choice(landed_on_baltic(cash=150), 0) == ev.Decline()


def test_it_buys_the_site_that_completes_a_group_down_to_50_dollars():
    assert choice(landed_on_baltic(cash=120, own={0: (1,)}), 0) == ev.Buy()


def test_it_pays_10_percent_of_its_worth_when_that_is_under_200():
    t = table(cash=1500).dice(1, 3).play(ev.Roll(), 0)
    assert t.state.offer.kind == "tax"
    assert choice(t, 0) == ev.ChooseTax(choice="percent")


def test_it_pays_the_flat_200_when_its_worth_with_property_and_buildings_is_over_2000():
    """Cash 1,000 alone would choose 10%; printed prices (1,070) and houses at cost (150) make the worth 2,220."""
    layout = {"own": {0: (*LIGHT_BLUE, 37, 39)}, "levels": {6: 1, 8: 1, 9: 1}}
    t = table(cash=1000, **layout).dice(1, 3).play(ev.Roll(), 0)
    assert choice(t, 0) == ev.ChooseTax(choice="flat")


def auction_of(lot: int, high_bid: int, high_seat: int | None, **layout) -> Table:
    t = table(**layout)
    a = Auction(lot=lot, bidders=(0, 1), deadline_at=AT + 30_000, high_bid=high_bid, high_seat=high_seat)
    t.state = replace(t.state, auction=a)
    return t


def test_it_opens_an_auction_at_half_what_the_lot_is_worth_to_it():
    assert choice(auction_of(39, 0, None), 1) == ev.Bid(amount=200)


def test_it_raises_by_10_dollars_up_to_the_printed_price_then_passes():
    assert choice(auction_of(39, 300, 0), 1) == ev.Bid(amount=310)
    assert choice(auction_of(39, 395, 0), 1) == ev.Bid(amount=400)
    assert choice(auction_of(39, 400, 0), 1) == ev.PassBid()


def test_it_bids_half_again_the_price_for_the_site_that_completes_its_group():
    assert choice(auction_of(39, 590, 0, own={1: (37,)}), 1) == ev.Bid(amount=600)
    assert choice(auction_of(39, 600, 0, own={1: (37,)}), 1) == ev.PassBid()


def test_it_never_bids_into_its_reserve():
    """Cash 300 and a reserve of 100: the limit is 300 less half the reserve."""
    assert choice(auction_of(39, 240, 0, cash={1: 300}), 1) == ev.Bid(amount=250)
    assert choice(auction_of(39, 250, 0, cash={1: 300}), 1) == ev.PassBid()


# --- debts -------------------------------------------------------------------------------------------


def in_debt(amount: int, **layout) -> Table:
    t = table(**layout)
    t.state = replace(t.state, debts=(Debt(seat=0, creditor=1, amount=amount, reason="rent", deadline_at=AT + 30_000),))
    return t


def test_a_debt_is_raised_from_idle_property_first_then_buildings_then_the_rest_and_bankruptcy_last():
    t = in_debt(2000, cash={0: 0}, own={0: (*LIGHT_BLUE, 39)}, levels={6: 1, 8: 1, 9: 1})
    assert choice(t, 0) == ev.Mortgage(square=39)
    t.play(ev.Mortgage(square=39), 0)
    sold = []
    while isinstance(command := choice(t, 0), ev.SellBuilding):
        sold.append(command.square)
        t.play(command, 0)
    assert sorted(sold) == sorted(LIGHT_BLUE)
    mortgaged = []
    while isinstance(command, ev.Mortgage):
        mortgaged.append(command.square)
        t.play(command, 0)
        command = choice(t, 0)
    assert sorted(mortgaged) == sorted(LIGHT_BLUE)
    assert command == ev.DeclareBankruptcy()


def test_a_debt_raised_in_full_is_paid_without_selling_more():
    t = in_debt(150, cash={0: 0}, own={0: (39, 37)})
    t.play(choice(t, 0), 0)
    assert t.state.debts == () and t.cash(1) == 1650
    assert sum(site.mortgaged for site in t.state.sites) == 1


# --- its own turn --------------------------------------------------------------------------------------------


def test_it_builds_evenly_with_spare_cash_then_rolls():
    t = table(cash=260, own={0: LIGHT_BLUE})
    while isinstance(command := choice(t, 0), ev.Build):
        t.play(command, 0)
    assert command == ev.Roll()
    assert sorted(t.level(q) for q in LIGHT_BLUE) == [1, 1, 1] and t.cash(0) == 110


def test_it_lifts_a_mortgage_when_the_cost_leaves_300_over_its_reserve():
    assert choice(table(cash=620, own={0: (39,)}, mortgaged=[39]), 0) == ev.LiftMortgage(square=39)
    assert choice(table(cash=610, own={0: (39,)}, mortgaged=[39]), 0) == ev.Roll()


@pytest.mark.parametrize(
    "jail, card, expected",
    [
        ("leave", True, ev.UseJailCard()),
        ("leave", False, ev.PayFine()),
        ("stay", True, ev.Roll()),
        ("auto", False, ev.PayFine()),
    ],
)
def test_the_jail_policy(jail, card, expected):
    t = table(at={0: 10}, jailed=[0], jail_cards={0: ("CC05",)} if card else {})
    assert choice(t, 0, StrategicBot(jail)) == expected
    if jail != "auto":
        assert choice(t, 0, RandomBot(jail)) == expected


def test_by_default_it_stays_in_jail_once_most_property_is_owned():
    t = table(at={0: 10}, jailed=[0], own={1: (1, 3, 5, 6, 8, 9, 11, 12, 13, 14, 15, 16, 18, 19, 21)})
    assert choice(t, 0) == ev.Roll()


def test_it_offers_the_least_the_owner_would_take_for_the_site_that_completes_its_group():
    """Baltic ($60) completes seat 0's browns: the owner wants its price, half of seat 0's gain from the group
    ($300 - $60) as the price of a rival's monopoly, and a tenth of its stake: $186, offered as $190."""
    t = table(own={0: (1,), 1: (3,)})
    offer = choice(t, 0, rnd=Always(0.0))
    assert offer == ev.OfferTrade(to=1, give=ev.Holdings(cash=190), get=ev.Holdings(squares=(3,)))
    assert isinstance(choice(t.play(offer, 0), 1), ev.AcceptTrade)


ORANGE, RED = (16, 18, 19), (21, 23, 24)


def test_it_offers_a_swap_that_completes_a_group_for_both_sides_and_both_take_it():
    t = table(own={0: (16, 18, 21), 1: (19, 23, 24)})
    offer = choice(t, 0, rnd=Always(0.0))
    assert offer == ev.OfferTrade(to=1, give=ev.Holdings(squares=(21,)), get=ev.Holdings(cash=200, squares=(19,)))
    t.play(offer, 0)
    t.play(choice(t, 1), 1)
    assert [t.owner(q) for q in ORANGE] == [0, 0, 0] and [t.owner(q) for q in RED] == [1, 1, 1]
    assert (t.cash(0), t.cash(1)) == (1700, 1300)  # seat 1 completes the dearer group: it pays the difference


def test_when_every_group_is_split_it_buys_a_site_from_a_holder_of_no_more_of_it():
    """Orange split three ways: one site bought for cash gathers the group, to be completed by the next trade."""
    t = table(3, own={0: (16,), 1: (18,), 2: (19,)})
    offer = choice(t, 0, rnd=Always(0.0))
    assert isinstance(offer, ev.OfferTrade) and offer.give.squares == () and len(offer.get.squares) == 1
    assert 180 < offer.give.cash <= 240
    t.play(offer, 0)
    t.play(choice(t, offer.to), offer.to)
    assert t.of(ev.TradeAccepted) and sum(t.owner(q) == 0 for q in ORANGE) == 2


def test_out_of_turn_it_waits():
    assert choice(table(own={1: LIGHT_BLUE}), 1) is None


# --- trades offered to it ------------------------------------------------------------------------------------


def offered(t: Table, give: ev.Holdings, get: ev.Holdings) -> Table:
    return t.play(ev.OfferTrade(to=1, give=give, get=get), 0)


def test_it_accepts_an_offer_worth_a_tenth_more_than_it_costs():
    t = offered(table(own={1: (39,)}), ev.Holdings(cash=440), ev.Holdings(squares=(39,)))
    assert isinstance(choice(t, 1), ev.AcceptTrade)


def test_it_rejects_an_offer_worth_less():
    t = offered(table(own={1: (39,)}), ev.Holdings(cash=430), ev.Holdings(squares=(39,)))
    assert isinstance(choice(t, 1), ev.RejectTrade)


def test_it_hands_over_the_site_that_completes_the_other_sides_group_only_for_its_fair_value():
    """Boardwalk completes seat 0's dark blues, a gain to it of $1,525 by the valuation: seat 1 wants Boardwalk's
    $400, half that gain and a tenth of its stake, $1,202.50."""
    layout = {"own": {0: (37,), 1: (39,)}}
    assert isinstance(choice(offered(table(**layout), ev.Holdings(cash=1200), ev.Holdings(squares=(39,))), 1), ev.RejectTrade)
    assert isinstance(choice(offered(table(**layout), ev.Holdings(cash=1210), ev.Holdings(squares=(39,))), 1), ev.AcceptTrade)


def test_it_never_breaks_up_its_own_group():
    t = offered(table(own={1: BROWN}), ev.Holdings(cash=1000), ev.Holdings(squares=(1,)))
    assert isinstance(choice(t, 1), ev.RejectTrade)


# --- scarce buildings ----------------------------------------------------------------------------------------


def test_it_bids_for_a_scarce_house_from_its_deed_price_up_to_twice_that():
    """Two houses in the bank, three asked for by seat 0, two claimed by seat 1: auctioned one at a time."""
    t = table(3, own={0: LIGHT_BLUE, 1: ORANGE}, houses=2)
    t.play(ev.Build(sites=LIGHT_BLUE), 0).play(ev.ClaimBuildings(sites=(16, 18)), 1)
    assert t.state.auction.lot == "house"
    assert choice(t, 0) == ev.Bid(amount=50)
    t.play(ev.Bid(amount=95), 1)
    assert choice(t, 0) == ev.Bid(amount=100)
    t.play(ev.Bid(amount=100), 0).play(ev.Bid(amount=110), 1)
    assert choice(t, 0) == ev.PassBid()


# --- the random bot ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("i", range(20))
def test_the_random_bot_answers_every_wait_it_is_asked(i):
    waits = [
        landed_on_baltic(),
        table().dice(1, 3).play(ev.Roll(), 0),
        auction_of(39, 10, 0),
        in_debt(500, cash={0: 0}, own={0: (39,)}),
    ]
    for t in waits:
        p = t.state.pending
        assert choice(t, p.seat, RandomBot(), random.Random(i)) is not None


def test_the_random_bot_acts_out_of_turn_only_when_its_draw_says_so():
    t = table(own={1: LIGHT_BLUE})
    assert choice(t, 1, RandomBot(), Always(0.5)) is None
    chore = choice(t, 1, RandomBot(), Always(0.0))
    assert isinstance(chore, (ev.Build, ev.Mortgage))
