"""Monopoly, the squares (RULES.md §3): buying, rent by the board, the taxes, Free Parking, and every card of both
decks — top drawn, returned to the bottom, Get Out of Jail Free kept."""

from __future__ import annotations

import pytest

from service.events import monopoly as ev
from service.rules.monopoly.cards import CHANCE, CHEST

from .monopoly_table import deck_with_top, started, table

# --- buying --------------------------------------------------------------------------------------------


def test_an_unowned_property_is_offered_at_its_price():
    t = table().dice(1, 2)
    t.play(ev.Roll(), 0)
    offer = t.of(ev.PurchaseOffered)[0]
    assert (offer.square, offer.price) == (3, 60)
    assert t.state.pending.kind == "buy" and t.state.pending.seat == 0


def test_buying_pays_the_price_and_takes_the_deed():
    t = table().dice(1, 2)
    t.play(ev.Roll(), 0).play(ev.Buy(), 0)
    assert t.owner(3) == 0 and t.cash(0) == 1440 and t.state.turn_seat == 1


def test_buying_what_you_cannot_afford_is_refused():
    t = table(cash={0: 50}).dice(1, 2)
    t.play(ev.Roll(), 0)
    t.refused(ev.Buy(), 0, "cannot_afford")


def test_only_the_lander_decides_the_purchase():
    t = table().dice(1, 2)
    t.play(ev.Roll(), 0)
    t.refused(ev.Buy(), 1, "not_your_turn")
    t.refused(ev.Roll(), 0, "not_now")


def test_the_purchase_times_out_as_a_decline():
    t = table().dice(1, 2)
    t.play(ev.Roll(), 0).timeout()
    assert t.state.auction is not None and t.state.auction.lot == 3


# --- rent ------------------------------------------------------------------------------------------------


def rent_paid(t) -> int:
    return sum(e.amount for e in t.of(ev.Paid) if e.reason == "rent")


def test_rent_on_a_bare_site_is_the_printed_rent():
    t = table(own={1: [3]}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == 4 and t.cash(1) == 1504


def test_rent_is_doubled_on_a_bare_site_of_a_complete_group():
    t = table(own={1: [1, 3]}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == 8


@pytest.mark.parametrize(("level", "rent"), [(1, 20), (2, 60), (3, 180), (4, 320), (5, 450)])
def test_rent_with_houses_and_hotel_follows_the_deed(level, rent):
    t = table(own={1: [1, 3]}, levels={1: min(level, 4), 3: level}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == rent


def test_no_rent_on_a_mortgaged_site():
    t = table(own={1: [1, 3]}, mortgaged=[3]).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == 0 and t.cash(0) == 1500


def test_no_rent_on_your_own_property():
    t = table(own={0: [3]}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == 0 and not t.of(ev.PurchaseOffered)


@pytest.mark.parametrize(("held", "rent"), [(1, 25), (2, 50), (3, 100), (4, 200)])
def test_railroad_rent_by_the_number_owned(held, rent):
    t = table(own={1: [5, 15, 25, 35][:held]}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == rent


@pytest.mark.parametrize(("held", "times"), [(1, 4), (2, 10)])
def test_utility_rent_is_4_or_10_times_the_dice(held, times):
    t = table(own={1: [12, 28][:held]}, at={0: 7}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert rent_paid(t) == times * 5


# --- taxes, Free Parking ------------------------------------------------------------------------------


def test_income_tax_flat_is_200_and_needs_no_worth():
    t = table().dice(1, 3)
    t.play(ev.Roll(), 0).play(ev.ChooseTax(choice="flat"), 0)
    chosen = t.of(ev.IncomeTaxChosen)[0]
    assert (chosen.worth, chosen.amount) == (None, 200) and t.cash(0) == 1300


def test_income_tax_percent_is_10_percent_of_worth_counting_printed_prices_and_buildings_at_cost():
    t = table(cash={0: 1000}, own={0: [1, 3, 39]}, levels={1: 2, 3: 2}, mortgaged=[39]).dice(1, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.TaxChoiceAwaited)
    t.play(ev.ChooseTax(choice="percent"), 0)
    chosen = t.of(ev.IncomeTaxChosen)[0]
    assert chosen.worth == 1000 + 60 + 60 + 400 + 4 * 50  # mortgaged Boardwalk at its printed price
    assert chosen.amount == chosen.worth // 10 and t.cash(0) == 1000 - chosen.amount


def test_income_tax_choice_comes_before_the_worth_is_computed():
    """The event order is the ruling: the choice is recorded, then the worth it is computed on."""
    t = table().dice(1, 3)
    t.play(ev.Roll(), 0)
    assert t.state.offer.kind == "tax" and t.state.pending.kind == "tax"
    t.play(ev.ChooseTax(choice="percent"), 0)
    assert t.tags()[:2] == ["income_tax_chosen", "paid"]


def test_income_tax_times_out_as_the_flat_200():
    t = table().dice(1, 3)
    t.play(ev.Roll(), 0).timeout()
    assert t.of(ev.IncomeTaxChosen)[0].choice == "flat" and t.cash(0) == 1300


def test_luxury_tax_is_75():
    t = table(at={0: 33}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert [(e.amount, e.reason) for e in t.of(ev.Paid)] == [(75, "tax")] and t.cash(0) == 1425


def test_free_parking_does_nothing():
    t = table(at={0: 15}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.seat(0).position == 20 and t.cash(0) == 1500
    assert t.tags() == ["dice_rolled", "moved", "turn_ended", "turn_began"]


# --- the cards -----------------------------------------------------------------------------------------


def landed_on_card(card: str, start: int | None = None, **layout):
    """Seat 0 rolls 2+1 onto the card's deck square (Chance 7 or Community Chest 17) with ``card`` on top."""
    deck = "chance" if card.startswith("CH") else "chest"
    square = 7 if deck == "chance" else 17
    s = started()
    t = table(
        at={0: square - 3 if start is None else start},
        **{deck: deck_with_top(getattr(s, deck), card)},
        **layout,
    )
    return t.dice(2, 1).play(ev.Roll(), 0)


def test_every_card_is_drawn_from_the_top_and_goes_to_the_bottom():
    for card in [c.id for c in CHANCE + CHEST if c.id not in ("CH08", "CC05")]:
        t = landed_on_card(card)
        deck = t.state.chance if card.startswith("CH") else t.state.chest
        assert t.of(ev.CardDrawn)[0].card == card
        assert deck[-1] == card and len(deck) == 16, card


@pytest.mark.parametrize("card", ["CH08", "CC05"])
def test_get_out_of_jail_free_is_kept_not_returned(card):
    t = landed_on_card(card)
    deck = t.state.chance if card.startswith("CH") else t.state.chest
    assert t.seat(0).jail_cards == (card,) and card not in deck and len(deck) == 15


@pytest.mark.parametrize(
    ("card", "to", "salary"),
    [
        ("CH01", 0, 200),
        ("CC01", 0, 200),
        ("CH02", 24, 0),
        ("CH03", 11, 0),
        ("CH13", 5, 200),
        ("CH14", 39, 0),
    ],
)
def test_advance_cards_move_on_with_the_salary_when_passing_go(card, to, salary):
    t = landed_on_card(card)
    moved = t.of(ev.Moved)[-1]
    assert (moved.to, moved.salary) == (to, salary)


def test_advance_to_st_charles_from_chance_22_passes_go():
    t = landed_on_card("CH03", start=19)
    assert t.of(ev.Moved)[-1].salary == 200 and t.seat(0).position == 11


def test_nearest_railroad_pays_twice_the_rent_when_owned():
    t = landed_on_card("CH05", own={1: [15, 25]})
    assert t.seat(0).position == 15
    assert [e.amount for e in t.of(ev.Paid) if e.reason == "rent"] == [100]


def test_nearest_railroad_unowned_may_be_bought():
    t = landed_on_card("CH06")
    assert t.of(ev.PurchaseOffered)[0].square == 15


def test_nearest_utility_pays_ten_times_a_fresh_throw_when_owned():
    t = landed_on_card("CH04", own={1: [12]})
    fresh = next(e for e in t.of(ev.DiceRolled) if e.purpose == "utility")
    assert [e.amount for e in t.of(ev.Paid) if e.reason == "rent"] == [10 * sum(fresh.dice)]


def test_nearest_from_chance_36_passes_go():
    t = landed_on_card("CH05", start=33)
    assert t.seat(0).position == 5 and t.of(ev.Moved)[-1].salary == 200
    t = landed_on_card("CH04", start=33)
    assert t.seat(0).position == 12 and t.of(ev.Moved)[-1].salary == 200


def test_back_three_from_chance_7_lands_on_income_tax():
    t = landed_on_card("CH09")
    assert t.seat(0).position == 4 and t.of(ev.TaxChoiceAwaited)


def test_back_three_from_chance_36_lands_on_community_chest_and_draws_there():
    t = landed_on_card("CH09", start=33)
    assert t.seat(0).position == 33 and [e.deck for e in t.of(ev.CardDrawn)] == [
        "chance",
        "chest",
    ]


@pytest.mark.parametrize("card", ["CH10", "CC06"])
def test_go_to_jail_cards(card):
    t = landed_on_card(card)
    assert t.seat(0).in_jail and t.state.turn_seat == 1


@pytest.mark.parametrize(
    ("card", "amount"),
    [
        ("CH07", 50),
        ("CH16", 150),
        ("CC02", 200),
        ("CC04", 45),
        ("CC08", 100),
        ("CC09", 20),
        ("CC10", 100),
        ("CC13", 25),
        ("CC15", 10),
        ("CC16", 100),
    ],
)
def test_the_bank_pays(card, amount):
    t = landed_on_card(card)
    assert t.cash(0) == 1500 + amount


@pytest.mark.parametrize(("card", "amount"), [("CH12", 15), ("CC03", 50), ("CC11", 100), ("CC12", 150)])
def test_pay_the_bank(card, amount):
    t = landed_on_card(card)
    assert t.cash(0) == 1500 - amount


@pytest.mark.parametrize(("card", "house", "hotel"), [("CH11", 25, 100), ("CC14", 40, 115)])
def test_repairs_are_per_house_and_per_hotel(card, house, hotel):
    t = landed_on_card(card, own={0: [1, 3, 37, 39]}, levels={1: 2, 3: 3, 37: 5, 39: 5})
    assert t.cash(0) == 1500 - 5 * house - 2 * hotel


def test_chairman_pays_each_player_50():
    t = landed_on_card("CH15", seats=3)
    assert [t.cash(i) for i in range(3)] == [1400, 1550, 1550]


def test_opera_night_every_other_player_pays_50():
    t = landed_on_card("CC07", seats=3)
    assert [t.cash(i) for i in range(3)] == [1600, 1450, 1450]


def test_a_player_short_of_the_card_payment_owes_it_as_a_debt():
    t = landed_on_card("CC07", seats=3, cash={1: 20})
    assert t.state.debts[0].seat == 1 and t.state.debts[0].creditor == 0 and t.cash(0) == 1550
