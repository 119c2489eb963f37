"""Monopoly, houses and hotels (RULES.md §3): only on a complete group, evenly, at most four and then a hotel; sold
back evenly at half price; the bank's 32 houses and 12 hotels; waiting when it is empty; and the auction of
scarce buildings when two or more owners want more than the bank holds."""

from __future__ import annotations

import pytest

from service.events import monopoly as ev
from service.rules.monopoly import board
from service.rules.monopoly.legal import legal_commands
from service.rules.monopoly.view import view

from .monopoly_table import table

LIGHT_BLUE = (6, 8, 9)
ORANGE = (16, 18, 19)


def test_a_house_on_a_complete_group_costs_the_deed_price():
    t = table(own={0: LIGHT_BLUE}).play(ev.Build(sites=(6,)), 0)
    assert t.level(6) == 1 and t.cash(0) == 1450 and t.state.houses == 31


def test_no_house_without_the_whole_group():
    table(own={0: (6, 8), 1: (9,)}).refused(ev.Build(sites=(6,)), 0, "group_incomplete")


def test_no_house_on_a_railroad_or_utility():
    table(own={0: (5, 15, 25, 35)}).refused(ev.Build(sites=(5,)), 0, "not_a_street")


def test_no_house_on_someone_elses_site():
    table(own={1: LIGHT_BLUE}).refused(ev.Build(sites=(6,)), 0, "not_owner")


def test_build_evenly():
    t = table(own={0: LIGHT_BLUE}, levels={6: 1})
    t.refused(ev.Build(sites=(6,)), 0, "uneven_building")
    t.play(ev.Build(sites=(8, 9, 6)), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [2, 1, 1]


def test_an_uneven_order_is_refused_whole():
    t = table(own={0: LIGHT_BLUE})
    t.refused(ev.Build(sites=(6, 6)), 0, "uneven_building")
    assert t.state.houses == 32


def test_no_building_on_a_group_with_a_mortgaged_site():
    table(own={0: LIGHT_BLUE}, mortgaged=[9]).refused(ev.Build(sites=(6,)), 0, "group_mortgaged")


def test_building_you_cannot_afford_is_refused():
    table(own={0: LIGHT_BLUE}, cash={0: 120}).refused(ev.Build(sites=(6, 8, 9)), 0, "cannot_afford")


def test_a_hotel_needs_four_houses_on_every_site_and_returns_its_four_houses():
    t = table(own={0: LIGHT_BLUE}, levels={6: 4, 8: 4, 9: 3})
    t.refused(ev.Build(sites=(6,)), 0, "uneven_building")
    t.play(ev.Build(sites=(9, 6)), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [5, 4, 4]
    assert (t.state.houses, t.state.hotels) == (32 - 8, 11)
    t.refused(ev.Build(sites=(6,)), 0, "fully_built")


def test_selling_evenly_at_half_price():
    t = table(own={0: LIGHT_BLUE}, levels={6: 2, 8: 2, 9: 1})
    t.refused(ev.SellBuilding(square=9), 0, "uneven_selling")
    t.play(ev.SellBuilding(square=6), 0)
    assert t.level(6) == 1 and t.cash(0) == 1525 and t.state.houses == 32 - 4
    t.refused(ev.SellBuilding(square=1), 0, "not_owner")


def test_selling_a_hotel_puts_four_houses_back_on_the_site():
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 5, 9: 5})
    t.play(ev.SellBuilding(square=8), 0)
    assert t.level(8) == 4 and t.cash(0) == 1525 and (t.state.houses, t.state.hotels) == (28, 10)


def test_selling_a_hotel_short_of_houses_breaks_down_only_as_far_as_needed():
    """RULES.md's example: hotel,4,4 with 2 houses in the bank becomes 3,4,3 (the server's default), never 3,3,3."""
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2)
    t.play(ev.SellBuilding(square=6), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [3, 4, 3]
    assert t.tags() == ["buildings_sold_off"] and t.cash(0) == 1500 + 3 * 25  # the hotel, a house on 6, one on 9
    assert (t.state.houses, t.state.hotels) == (0, 12)


BROWN = (1, 3)


@pytest.mark.parametrize(
    "group, before, bank, after",
    [
        (LIGHT_BLUE, (5, 4, 4), 3, (3, 4, 4)),
        (LIGHT_BLUE, (5, 4, 4), 2, (3, 4, 3)),
        (LIGHT_BLUE, (5, 4, 4), 1, (3, 3, 3)),
        (LIGHT_BLUE, (5, 4, 4), 0, (2, 3, 3)),
        (LIGHT_BLUE, (5, 5, 5), 3, (1, 1, 1)),
        (LIGHT_BLUE, (5, 5, 5), 2, (0, 1, 1)),
        (LIGHT_BLUE, (5, 5, 4), 3, (2, 3, 2)),
        (LIGHT_BLUE, (5, 5, 4), 2, (2, 2, 2)),
        (BROWN, (5, 5), 3, (1, 2)),
        (BROWN, (5, 5), 2, (1, 1)),
        (BROWN, (5, 5), 0, (0, 0)),
        (BROWN, (5, 4), 3, (3, 4)),
        (BROWN, (5, 4), 2, (3, 3)),
    ],
)
def test_a_hotel_sold_short_of_houses_sells_the_fewest_buildings_evenness_and_the_bank_allow(group, before, bank, after):
    """Selling the hotel on the group's first site: as many buildings kept as an even group within the bank's
    houses allows; among equal arrangements the default brings the site sold from down first, then the last."""
    t = table(own={0: group}, levels=dict(zip(group, before)), houses=bank)
    t.play(ev.SellBuilding(square=group[0]), 0)
    assert tuple(t.level(q) for q in group) == after
    sold = sum(before) - sum(after)
    assert t.cash(0) == 1500 + sold * board.SQUARES[group[0]].house_cost // 2
    assert t.state.houses == bank - (sum(v for v in after if v < 5) - sum(v for v in before if v < 5))


def test_the_owner_chooses_among_equal_break_downs():
    for levels in ((3, 3, 4), (4, 3, 3), (3, 4, 3)):
        t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2)
        t.play(ev.SellBuilding(square=6, levels=levels), 0)
        assert tuple(t.level(q) for q in LIGHT_BLUE) == levels and t.cash(0) == 1575
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2)
    refused = t.refused(ev.SellBuilding(square=6, levels=(3, 3, 3)), 0, "not_a_break_down")
    assert refused.detail["allowed"] == [[3, 4, 3], [3, 3, 4], [4, 3, 3]]
    t.refused(ev.SellBuilding(square=6, levels=(3, 4)), 0, "not_a_break_down")


def test_legal_lists_every_break_down_the_owner_may_choose_and_each_is_accepted():
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2)
    sales = [c for c in legal_commands(t.state, 0) if isinstance(c, ev.SellBuilding) and c.square == 6]
    assert [c.levels for c in sales] == [(), (3, 3, 4), (4, 3, 3)]  # the plain sale leaves the default, 3,4,3
    for sale in sales:
        table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2).play(sale, 0)
    plenty = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4})  # houses enough: one way to sell, no levels
    assert [c.levels for c in legal_commands(plenty.state, 0) if isinstance(c, ev.SellBuilding)] == [()]


def test_levels_on_a_plain_sale_must_be_the_one_it_leaves():
    t = table(own={0: LIGHT_BLUE}, levels={6: 2, 8: 2, 9: 2})
    t.refused(ev.SellBuilding(square=6, levels=(0, 2, 2)), 0, "not_a_break_down")
    t.play(ev.SellBuilding(square=6, levels=(1, 2, 2)), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [1, 2, 2]


def test_version_1_still_brings_a_group_short_of_houses_down_to_one_level():
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 4, 9: 4}, houses=2, rules_version=1)
    t.play(ev.SellBuilding(square=6), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [3, 3, 3] and t.state.houses == 1
    t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 5, 9: 5}, houses=2, rules_version=1)
    t.refused(ev.SellBuilding(square=8, levels=(1, 0, 1)), 0, "not_in_rules_version")  # no choice to make there
    t.play(ev.SellBuilding(square=8), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [0, 0, 0]  # 3 sites at 1 house would need 3
    assert t.cash(0) == 1500 + 3 * 5 * 25 and (t.state.houses, t.state.hotels) == (2, 12)


def test_selling_a_hotel_short_of_houses_keeps_as_many_as_the_bank_supplies():
    for version in (1, 2):
        t = table(own={0: LIGHT_BLUE}, levels={6: 5, 8: 5, 9: 5}, houses=3, rules_version=version)
        t.play(ev.SellBuilding(square=8), 0)
        assert [t.level(q) for q in LIGHT_BLUE] == [1, 1, 1] and t.state.houses == 0 and t.state.hotels == 12
        assert t.cash(0) == 1500 + 3 * 4 * 25


def test_the_bank_has_32_houses_and_12_hotels():
    t = table(own={0: LIGHT_BLUE})
    assert (t.state.houses, t.state.hotels) == (32, 12)


def test_with_no_houses_left_builders_wait():
    t = table(own={0: LIGHT_BLUE}, houses=0)
    t.refused(ev.Build(sites=(6,)), 0, "bank_empty")


def test_with_no_hotels_left_builders_wait():
    t = table(own={0: LIGHT_BLUE}, levels={6: 4, 8: 4, 9: 4}, hotels=0)
    t.refused(ev.Build(sites=(6,)), 0, "bank_empty")


def test_a_build_beyond_the_bank_goes_ahead_with_what_there_is_when_no_one_else_could_build():
    t = table(own={0: LIGHT_BLUE}, houses=2)
    t.play(ev.Build(sites=(6, 8, 9)), 0)
    assert [t.level(q) for q in LIGHT_BLUE] == [1, 1, 0] and t.state.houses == 0


def scarce(houses: int = 2, seats: int = 3, **layout):
    """Seat 0 asks for three houses with ``houses`` in the bank; seat 1 also owns a complete group."""
    t = table(seats, own={0: LIGHT_BLUE, 1: ORANGE}, houses=houses, **layout)
    return t.play(ev.Build(sites=(6, 8, 9)), 0)


def test_a_build_beyond_the_bank_opens_a_window_for_other_owners_of_complete_groups():
    t = scarce()
    declared = t.of(ev.ShortageDeclared)[0]
    assert (declared.kind, declared.bank, declared.claimants) == ("house", 2, (1,))
    assert t.state.pending.kind == "shortage" and t.state.pending.seats == (1,)
    assert t.state.houses == 2


def test_no_other_build_while_buildings_are_being_shared_out():
    t = scarce()
    t.refused(ev.Build(sites=(16,)), 1, "shortage_open")


def test_when_no_one_else_claims_the_build_goes_ahead_with_what_the_bank_has():
    t = scarce(houses=2).play(ev.ClaimBuildings(sites=()), 1)
    assert not t.of(ev.ShortageResolved)[0].auction
    assert [t.level(q) for q in LIGHT_BLUE] == [1, 1, 0] and t.state.houses == 0


def test_when_two_owners_want_more_than_the_bank_holds_the_houses_are_auctioned_one_at_a_time():
    t = scarce(houses=2).play(ev.ClaimBuildings(sites=(16, 18)), 1)
    assert t.of(ev.ShortageResolved)[0].auction
    opened = t.of(ev.AuctionOpened)[0]
    assert opened.lot == "house" and set(opened.bidders) == {0, 1}
    assert claims_shown(t) == {0: [6, 8, 9], 1: [16, 18]}  # the view shows what each bidder bids for
    t.play(ev.Bid(amount=80), 1).play(ev.PassBid(), 0)
    first = t.of(ev.AuctionClosed)[0]
    assert (first.winner, first.amount, first.square) == (1, 80, 16)
    assert t.level(16) == 1 and t.cash(1) == 1420 and t.state.houses == 1
    opened = t.of(ev.AuctionOpened)[0]  # the next house, straight away
    assert opened.lot == "house" and claims_shown(t) == {0: [6, 8, 9], 1: [18]}
    t.play(ev.Bid(amount=60), 0).play(ev.PassBid(), 1)
    assert t.level(6) == 1 and t.cash(0) == 1440 and t.state.houses == 0
    assert t.state.lots == () and t.state.auction is None


def claims_shown(t) -> dict[int, list[int]]:
    """The sites each bidder still claims, as the view of the auction shows them to seat 0."""
    return {c.seat: c.sites for c in view(t.state, 0).auction.claims}


def test_a_claim_must_be_of_the_scarce_kind_and_built_evenly():
    t = scarce()
    t.refused(ev.ClaimBuildings(sites=(16, 16)), 1, "uneven_building")
    t.refused(ev.ClaimBuildings(sites=(6,)), 1, "not_owner")
    t.refused(ev.ClaimBuildings(sites=(16,)), 0, "not_a_claimant")


def test_the_window_times_out_with_the_claims_it_has():
    t = scarce().timeout()
    assert not t.of(ev.ShortageResolved)[0].auction
    assert [t.level(q) for q in LIGHT_BLUE] == [1, 1, 0]


def test_a_jailed_player_still_builds():
    t = table(own={0: LIGHT_BLUE}, jailed=[0], at={0: 10}).play(ev.Build(sites=(6,)), 0)
    assert t.level(6) == 1
