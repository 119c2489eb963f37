"""RULES.md §1, "A turn" step 2 — the one main play: feed, errand, Free Parking, Time Expires, swap three, discard;
then step 3: the optional Second Chance draw and the end of the turn."""

from __future__ import annotations

import pytest

from service.events import free_parking as ev
from service.rules import rng

# --- Feed the Meter ------------------------------------------------------------------------------


def test_feeding_the_meter_adds_its_minutes_and_discards_the_card(table):
    t = table(hands={1: ["M20-1", "P10-1"]}, meters={1: 10})
    t.play(ev.FeedMeter(card="M20-1"), 1)
    assert t.events == [ev.MeterFed(seat=1, card="M20-1", minutes=20, meter=30)]
    assert t.seat(1).meter == 30
    assert t.seat(1).hand == ("P10-1",)
    assert t.state.discard[-1] == "M20-1"
    assert t.state.phase == "after_main"


@pytest.mark.parametrize(("meter", "card", "after"), [(50, "M40-1", 60), (30, "M60-1", 60), (0, "M60-1", 60), (60, "M20-1", 60)])
def test_feeding_the_meter_stops_at_60(table, meter, card, after):
    """If you play a card that would boost your Meter's time beyond 60, simply stop at 60."""
    t = table(hands={1: [card]}, meters={1: meter})
    t.play(ev.FeedMeter(card=card), 1)
    assert t.one(ev.MeterFed).meter == after == t.seat(1).meter


def test_only_a_feed_the_meter_card_feeds_the_meter(table):
    t = table(hands={1: ["P20-1", "FP-1"]})
    assert t.refused(ev.FeedMeter(card="P20-1"), 1) == "wrong_card_kind"
    assert t.refused(ev.FeedMeter(card="FP-1"), 1) == "wrong_card_kind"


def test_a_card_must_be_in_the_players_hand(table):
    t = table(hands={1: ["M20-1"], 2: ["M30-1", "P10-1", "FP-1", "TE-1", "OJ-1"]}, points={0: ["P10-2"]})
    assert t.refused(ev.FeedMeter(card="M30-1"), 1) == "card_not_in_hand"
    assert t.refused(ev.RunErrand(card="P10-1"), 1) == "card_not_in_hand"
    assert t.refused(ev.TimeExpires(card="TE-1", target=2), 1) == "card_not_in_hand"
    assert t.refused(ev.Discard(card="M30-1"), 1) == "card_not_in_hand"
    assert t.refused(ev.SwapThree(cards=("M20-1", "M30-1", "P10-1")), 1) == "card_not_in_hand"
    assert t.refused(ev.OfficerJones(card="OJ-1", target=0), 1) == "card_not_in_hand"
    # a Point card already on someone's table is not in a hand either
    assert t.refused(ev.RunErrand(card="P10-2"), 1) == "card_not_in_hand"


def test_only_the_seat_whose_turn_it_is_makes_a_main_play(table):
    t = table(hands={1: ["M20-1"], 2: ["M30-1", "P10-1", "TE-1"]}, meters={2: 60})
    assert t.state.turn_seat == 1
    assert t.refused(ev.FeedMeter(card="M30-1"), 2) == "not_your_turn"
    assert t.refused(ev.RunErrand(card="P10-1"), 2) == "not_your_turn"
    assert t.refused(ev.TimeExpires(card="TE-1", target=1), 2) == "not_your_turn"
    assert t.refused(ev.Discard(card="M30-1"), 2) == "not_your_turn"
    assert t.refused(ev.DrawSecondChance(), 2) == "not_your_turn"
    assert t.refused(ev.EndTurn(), 2) == "not_your_turn"


# --- Point cards (errands) -----------------------------------------------------------------------


def test_running_an_errand_scores_it_and_takes_its_minutes_off_the_meter(table):
    """Example: your Meter shows 50 minutes and you play a 30 minute errand. Move your slider down to 20 minutes."""
    t = table(hands={1: ["P30-1", "M20-1"]}, meters={1: 50}, points={1: ["P10-1"]})
    t.play(ev.RunErrand(card="P30-1"), 1)
    assert t.events == [ev.ErrandRun(seat=1, card="P30-1", value=30, meter=20, points=40)]
    assert t.seat(1).meter == 20
    assert t.seat(1).points == ("P10-1", "P30-1")  # face up in front of the player
    assert t.seat(1).score == 40
    assert t.seat(1).hand == ("M20-1",)
    assert "P30-1" not in t.state.discard
    assert t.state.phase == "after_main"


def test_an_errand_may_spend_every_minute_on_the_meter(table):
    t = table(hands={1: ["P60-1"]}, meters={1: 60})
    t.play(ev.RunErrand(card="P60-1"), 1)
    assert t.seat(1).meter == 0


@pytest.mark.parametrize(("meter", "card"), [(0, "P10-1"), (20, "P30-1"), (50, "P60-1")])
def test_an_errand_needs_at_least_its_value_in_minutes(table, meter, card):
    """You may not play a Point card unless you have at least as much time on your Meter as the errand requires."""
    t = table(hands={1: [card]}, meters={1: meter})
    assert t.refused(ev.RunErrand(card=card), 1) == "meter_too_low"


def test_only_a_point_card_is_run_as_an_errand(table):
    t = table(hands={1: ["M20-1", "FP-1"]}, meters={1: 60})
    assert t.refused(ev.RunErrand(card="M20-1"), 1) == "wrong_card_kind"
    assert t.refused(ev.RunErrand(card="FP-1"), 1) == "wrong_card_kind"


# --- Free Parking --------------------------------------------------------------------------------


def test_free_parking_scores_the_errand_without_deducting_time_even_at_violation(table):
    """Free Parking + a Point card — both at once: the errand scores and no time is deducted, whatever the meter."""
    t = table(hands={1: ["FP-1", "P50-1", "M20-1"]}, meters={1: 0})
    t.play(ev.FreeParking(card="FP-1", errand="P50-1"), 1)
    assert t.events == [ev.ErrandRun(seat=1, card="P50-1", value=50, meter=0, points=50, free_parking="FP-1")]
    assert t.seat(1).points == ("P50-1",)
    assert t.seat(1).meter == 0
    assert t.seat(1).hand == ("M20-1",)
    assert t.state.discard[-1] == "FP-1"  # Free Parking is discarded after use
    assert t.state.phase == "after_main"


def test_free_parking_leaves_a_full_meter_full(table):
    t = table(hands={1: ["FP-2", "P60-1"]}, meters={1: 60})
    t.play(ev.FreeParking(card="FP-2", errand="P60-1"), 1)
    assert t.seat(1).meter == 60 and t.seat(1).score == 60


def test_free_parking_needs_a_free_parking_card_and_a_point_card_both_in_hand(table):
    t = table(hands={1: ["FP-1", "P10-1", "M20-1", "TE-1"]}, points={1: ["P20-1"]})
    assert t.refused(ev.FreeParking(card="FP-1", errand="M20-1"), 1) == "wrong_card_kind"
    assert t.refused(ev.FreeParking(card="TE-1", errand="P10-1"), 1) == "wrong_card_kind"
    assert t.refused(ev.FreeParking(card="FP-2", errand="P10-1"), 1) == "card_not_in_hand"
    assert t.refused(ev.FreeParking(card="FP-1", errand="P20-1"), 1) == "card_not_in_hand"


# --- Time Expires --------------------------------------------------------------------------------


def test_time_expires_puts_an_opponents_meter_back_to_0(table):
    t = table(hands={1: ["TE-1", "M20-1"]}, meters={1: 30, 2: 50})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert t.types() == [ev.TimeExpiresPlayed, ev.ResponseAwaited]
    assert t.one(ev.TimeExpiresPlayed) == ev.TimeExpiresPlayed(seat=1, card="TE-1", target=2)
    assert t.state.phase == "after_main"  # it is the turn's main play
    t.play(ev.Accept(), 2)
    assert t.types() == [ev.Accepted, ev.MeterSet, ev.ActionResolved]
    assert t.one(ev.MeterSet) == ev.MeterSet(seat=2, meter=0, cause="TE-1")
    assert t.seat(2).meter == 0 and t.seat(1).meter == 30
    assert t.state.discard[-1] == "TE-1"
    # the turn goes on: the player may still draw a Second Chance card or end the turn
    assert t.state.turn_seat == 1 and t.state.phase == "after_main" and t.action is None
    assert t.refused(ev.FeedMeter(card="M20-1"), 1) == "main_play_done"


def test_time_expires_is_played_against_any_opponent_not_oneself(table):
    t = table(4, hands={1: ["TE-1"]}, meters={0: 20, 3: 20})
    assert t.refused(ev.TimeExpires(card="TE-1", target=1), 1) == "invalid_target"
    assert t.refused(ev.TimeExpires(card="TE-1", target=4), 1) == "invalid_target"
    t.play(ev.TimeExpires(card="TE-1", target=0), 1)  # across the table, behind the player: any opponent
    assert t.pending.seat == 0


def test_time_expires_needs_a_time_expires_card(table):
    t = table(hands={1: ["OJ-1"]}, meters={2: 20})
    assert t.refused(ev.TimeExpires(card="OJ-1", target=2), 1) == "wrong_card_kind"


def test_time_expires_against_a_meter_already_at_violation_changes_nothing_and_waits_for_no_one(table):
    """actions.py: an action that would change nothing resolves at once, without a wait — yet it was the main play."""
    t = table(hands={1: ["TE-1"]}, meters={2: 0})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert t.none(ev.ResponseAwaited) and t.none(ev.MeterSet)
    assert t.one(ev.ActionResolved).card == "TE-1"
    assert t.pending is None and t.action is None
    assert t.state.phase == "after_main" and t.state.discard[-1] == "TE-1"


# --- Swap three ----------------------------------------------------------------------------------


def test_swap_three_discards_exactly_three_and_draws_three(table):
    hand = ["M20-1", "M20-2", "P10-1", "P10-2", "OJ-1", "TW-1"]
    t = table(hands={1: hand}, deck=["M60-1", "M60-2", "M60-3", "M60-4"])
    t.play(ev.SwapThree(cards=("M20-1", "P10-1", "OJ-1")), 1)
    assert t.types() == [ev.CardsDrawn, ev.ThreeSwapped]  # the draw first, then the three to the discard pile
    drawn = t.one(ev.CardsDrawn)
    assert (drawn.seat, drawn.count, drawn.reason, drawn.secret.cards) == (1, 3, "swap", ("M60-1", "M60-2", "M60-3"))
    assert t.one(ev.ThreeSwapped) == ev.ThreeSwapped(seat=1, cards=("M20-1", "P10-1", "OJ-1"))
    assert t.seat(1).hand == ("M20-2", "P10-2", "TW-1", "M60-1", "M60-2", "M60-3")
    assert t.state.discard[-3:] == ("M20-1", "P10-1", "OJ-1")
    assert t.state.deck == ("M60-4",)


def test_swap_three_never_hands_back_the_swapped_cards(table):
    """The three go to the discard pile only after the draw, so a reshuffle it needs can never hand them back."""
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]}, deck=["M60-1"], discard=["P60-1", "P50-1"], rest_to=0)
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    assert t.types() == [ev.DeckReshuffled, ev.CardsDrawn, ev.ThreeSwapped]
    order = rng.shuffle(t.state.seed, "reshuffle:playing:1", ["P60-1", "P50-1"])  # the discard pile as it was
    assert t.one(ev.DeckReshuffled).secret.order == tuple(order)
    assert t.one(ev.CardsDrawn).secret.cards == ("M60-1", *order)
    assert t.seat(1).hand == ("M60-1", *order)
    assert t.state.discard == ("M20-1", "M20-2", "M20-3") and t.state.deck == ()


def test_swap_three_with_fewer_than_three_cards_to_draw_draws_what_there_is(table):
    t = table(hands={1: ["M20-1", "M20-2", "M20-3", "M30-1"]}, deck=["M60-1"], discard=[], rest_to=0)
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    assert t.types() == [ev.CardsDrawn, ev.ThreeSwapped]
    drawn = ev.CardsDrawn(seat=1, count=1, reason="swap", secret=ev.CardsSecret(cards=("M60-1",)))
    assert t.one(ev.CardsDrawn) == drawn
    assert t.seat(1).hand == ("M30-1", "M60-1")
    assert t.state.phase == "after_main"


def test_swap_three_with_an_empty_deck_draws_from_the_discard_pile_shuffled(table):
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]}, deck=[], discard=["P10-1", "P20-1", "P30-1", "P40-1"], rest_to=0)
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    order = rng.shuffle(t.state.seed, "reshuffle:playing:1", ["P10-1", "P20-1", "P30-1", "P40-1"])
    assert t.one(ev.CardsDrawn).secret.cards == tuple(order[:3])
    assert t.state.deck == (order[3],) and t.state.discard == ("M20-1", "M20-2", "M20-3")


def test_swap_three_is_not_offered_when_no_new_card_can_be_drawn(table):
    """Offered only when at least one new card can be drawn: with the deck and the discard pile both empty it is
    refused (``nothing_to_draw``) and not listed, while the other main plays are."""
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]}, deck=[], discard=[], rest_to=0)
    assert t.refused(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1) == "nothing_to_draw"
    legal = t.legal(1)
    assert not [c for c in legal if isinstance(c, ev.SwapThree)]
    assert ev.FeedMeter(card="M20-1") in legal and ev.Discard(card="M20-1") in legal


def test_version_1_swap_three_discards_first_so_a_reshuffle_can_hand_the_three_back(table):
    """Games recorded under rules version 1 replay as they were decided: the three went to the discard pile first."""
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]}, deck=["M60-1"], discard=["P60-1"], rest_to=0, rules_version=1)
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    assert t.types() == [ev.ThreeSwapped, ev.DeckReshuffled, ev.CardsDrawn]
    order = rng.shuffle(t.state.seed, "reshuffle:playing:1", ["P60-1", "M20-1", "M20-2", "M20-3"])
    assert t.one(ev.DeckReshuffled).secret.order == tuple(order)
    assert t.one(ev.CardsDrawn).secret.cards == ("M60-1", *order[:2])


def test_version_1_swap_three_is_offered_with_nothing_to_draw_and_hands_the_three_back(table):
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]}, deck=[], discard=[], rest_to=0, rules_version=1)
    assert ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")) in t.legal(1)
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    assert t.types() == [ev.ThreeSwapped, ev.DeckReshuffled, ev.CardsDrawn]
    assert sorted(t.seat(1).hand) == ["M20-1", "M20-2", "M20-3"]


def test_swap_three_replaces_the_main_play_but_leaves_the_second_chance_draw(table):
    """The only other move you can make on this turn is to draw a Second Chance card if you wish."""
    t = table(hands={1: ["M20-1", "M20-2", "M20-3", "M30-1"]}, second_chance=["SC-add_20-1"])
    t.play(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1)
    assert t.state.phase == "after_main"
    assert t.refused(ev.FeedMeter(card="M30-1"), 1) == "main_play_done"
    t.play(ev.DrawSecondChance(), 1)
    assert t.one(ev.SecondChanceDrawn).card == "SC-add_20-1"


def test_swap_three_only_before_any_main_play_this_turn(table):
    t = table(hands={1: ["M20-1", "M20-2", "M20-3", "M30-1"]})
    t.play(ev.FeedMeter(card="M30-1"), 1)
    assert t.refused(ev.SwapThree(cards=("M20-1", "M20-2", "M20-3")), 1) == "main_play_done"


def test_swap_three_names_three_different_cards(table):
    t = table(hands={1: ["M20-1", "M20-2", "M20-3"]})
    assert t.refused(ev.SwapThree(cards=("M20-1", "M20-1", "M20-2")), 1) == "duplicate_cards"


# --- Discard -------------------------------------------------------------------------------------


@pytest.mark.parametrize("card", ["P60-1", "TW-1", "M20-1"])
def test_discarding_one_card_is_a_main_play(table, card):
    """When the player cannot or will not play (our ruling: the text has no pass) — any card may go."""
    t = table(hands={1: ["P60-1", "TW-1", "M20-1"]}, meters={1: 0})
    t.play(ev.Discard(card=card), 1)
    assert t.events == [ev.CardDiscarded(seat=1, card=card)]
    assert card not in t.seat(1).hand and t.state.discard[-1] == card
    assert t.state.phase == "after_main"


# --- one main play, then the Second Chance draw or the end of the turn -----------------------------


@pytest.mark.parametrize(
    "first",
    [ev.FeedMeter(card="M20-1"), ev.RunErrand(card="P10-1"), ev.FreeParking(card="FP-1", errand="P10-1"), ev.Discard(card="OJ-1")],
)
def test_a_turn_has_exactly_one_main_play(table, first):
    t = table(hands={1: ["M20-1", "M20-2", "P10-1", "P10-2", "FP-1", "OJ-1", "TE-1"]}, meters={1: 40, 2: 40})
    t.play(first, 1)
    assert t.refused(ev.FeedMeter(card="M20-2"), 1) == "main_play_done"
    assert t.refused(ev.RunErrand(card="P10-2"), 1) == "main_play_done"
    assert t.refused(ev.Discard(card="M20-2"), 1) == "main_play_done"
    assert t.refused(ev.TimeExpires(card="TE-1", target=2), 1) == "main_play_done"


def test_the_second_chance_draw_and_the_end_of_the_turn_come_after_the_main_play(table):
    t = table(hands={1: ["M20-1"]})
    assert t.refused(ev.DrawSecondChance(), 1) == "main_play_required"
    assert t.refused(ev.EndTurn(), 1) == "main_play_required"


def test_ending_the_turn_without_a_second_chance_card_passes_play_on(table):
    t = table(hands={1: ["M20-1"]}, second_chance=["SC-add_20-1"])
    t.play(ev.FeedMeter(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.types()[:2] == [ev.TurnEnded, ev.TurnBegan]
    assert t.one(ev.TurnEnded).seat == 1 and t.one(ev.TurnBegan).seat == 2
    assert t.state.second_chance == ("SC-add_20-1",)  # nothing was drawn from it
    assert t.state.phase == "main"


def test_a_player_with_nothing_in_hand_may_end_the_turn_without_a_main_play(table):
    t = table(hands={1: []}, second_chance=["SC-add_20-1"])
    assert t.seat(1).hand == ()
    t.play(ev.DrawSecondChance(), 1)
    assert t.one(ev.SecondChanceDrawn).card == "SC-add_20-1"
