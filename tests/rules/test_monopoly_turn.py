"""Monopoly, a turn (RULES.md §3): the dice, doubles, GO, and jail — all three ways in and all four ways out."""

from __future__ import annotations

from msgspec.structs import replace

from service.events import monopoly as ev
from service.rules.monopoly import view

from .monopoly_table import SEED, _throw, deck_with_top, started, table


def test_the_game_starts_with_1500_each_both_decks_shuffled_and_seat_0_to_roll():
    s = started(3)
    assert [p.cash for p in s.seats] == [1500] * 3
    assert sorted(s.chance) == [f"CH{i:02}" for i in range(1, 17)]
    assert sorted(s.chest) == [f"CC{i:02}" for i in range(1, 17)]
    assert s.chance != tuple(sorted(s.chance))
    assert (s.turn_seat, s.round, s.step) == (0, 1, "roll")


def test_dice_come_from_the_seeded_stream_as_an_event():
    t = table()
    t.play(ev.Roll(), 0)
    rolled = t.of(ev.DiceRolled)[0]
    assert rolled.n == 1 and rolled.dice == _throw(SEED, 1) and rolled.purpose == "move"


def test_the_roll_moves_the_token_by_the_dice():
    t = table().dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.Moved)[0].to == 5 and t.seat(0).position == 5


def test_passing_go_pays_200():
    t = table(at={0: 38}).dice(2, 3)
    t.play(ev.Roll(), 0)
    moved = t.of(ev.Moved)[0]
    assert (moved.to, moved.salary) == (3, 200)
    assert t.cash(0) == 1500 + 200 - 0  # Baltic is unowned: offered, not paid


def test_landing_on_go_pays_200_too():
    t = table(at={0: 35}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.Moved)[0].salary == 200 and t.cash(0) == 1700


def test_a_move_that_does_not_pass_go_pays_nothing():
    t = table(at={0: 1}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.Moved)[0].salary == 0


def test_doubles_roll_again_once_the_move_is_settled():
    t = table().dice(1, 1)
    t.play(ev.Roll(), 0)  # to Community Chest 2 — a card, then the same player rolls again
    assert "roll_again" in t.tags()
    assert t.state.turn_seat == 0 and t.state.step == "roll"


def test_no_doubles_the_turn_passes():
    t = table().dice(1, 3)  # Income Tax 4: decide first
    t.play(ev.Roll(), 0).play(ev.ChooseTax(choice="flat"), 0)
    assert t.tags()[-2:] == ["turn_ended", "turn_began"]
    assert t.state.turn_seat == 1


def test_three_doubles_in_a_row_go_to_jail_without_moving_the_third_time():
    t = table(at={0: 6}).dice(2, 2)
    t.state = replace(t.state, doubles=2)  # two doubles already this turn
    t.play(ev.Roll(), 0)
    assert t.of(ev.SentToJail)[0].why == "doubles"
    assert not t.of(ev.Moved)
    assert t.seat(0).in_jail and t.seat(0).position == 10
    assert t.state.turn_seat == 1


def test_two_doubles_in_a_row_count_towards_the_third():
    t = table(chest=deck_with_top(started().chest, "CC09")).dice((1, 1), (1, 1))
    t.play(ev.Roll(), 0)  # to Community Chest 2: collect $20, roll again
    t.play(ev.Roll(), 0).play(ev.ChooseTax(choice="flat"), 0)  # to Income Tax 4
    assert t.tags()[-1] == "roll_again" and t.state.doubles == 2 and t.seat(0).position == 4


def test_the_go_to_jail_square_sends_you_to_jail_without_salary_and_ends_the_turn():
    t = table(at={0: 25}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.SentToJail)[0].why == "square"
    assert t.seat(0).in_jail and t.seat(0).position == 10 and t.cash(0) == 1500
    assert t.state.turn_seat == 1


def test_the_go_to_jail_square_ends_the_turn_even_after_doubles():
    t = table(at={0: 26}).dice(2, 2)
    t.play(ev.Roll(), 0)
    assert "roll_again" not in t.tags() and t.state.turn_seat == 1


def test_a_go_to_jail_card_sends_you_to_jail_without_passing_go():
    t = table(
        at={0: 34},
        chance=("CH10",) + tuple(f"CH{i:02}" for i in range(1, 17) if i != 10),
    ).dice(1, 1)
    t.play(ev.Roll(), 0)  # 36: Chance
    assert t.of(ev.SentToJail)[0].why == "card" and t.cash(0) == 1500 and t.seat(0).position == 10
    assert t.state.turn_seat == 1


def test_landing_on_jail_by_a_roll_is_just_visiting():
    t = table(at={0: 7}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert t.seat(0).position == 10 and not t.seat(0).in_jail


def test_out_of_jail_by_doubles_moves_by_that_roll_and_does_not_roll_again():
    t = table(jailed=[0], at={0: 10}).dice(3, 3)
    t.play(ev.Roll(), 0)
    assert t.of(ev.LeftJail)[0].how == "doubles"
    assert t.seat(0).position == 16 and not t.seat(0).in_jail
    t.play(ev.Decline(), 0).play(ev.PassBid(), 0).play(ev.PassBid(), 1)
    assert "roll_again" not in t.tags() and t.state.turn_seat == 1


def test_a_failed_jail_roll_ends_the_turn_and_counts_a_try():
    t = table(jailed=[0], at={0: 10}).dice(1, 2)
    t.play(ev.Roll(), 0)
    assert t.of(ev.JailRollFailed)[0].attempt == 1
    assert t.seat(0).in_jail and t.seat(0).position == 10 and t.state.turn_seat == 1


def test_after_the_third_failed_roll_pay_50_and_move_by_that_roll():
    t = table(jailed=[0], at={0: 10}, jail_tries={0: 2})
    t.dice(1, 2).play(ev.Roll(), 0)
    assert [e.how for e in t.of(ev.LeftJail)] == ["forced_fine"]
    fine = [e for e in t.of(ev.Paid) if e.reason == "fine"]
    assert fine[0].amount == 50 and fine[0].payee is None
    assert t.seat(0).position == 13 and not t.seat(0).in_jail


def test_paying_the_50_fine_before_rolling_then_rolling_as_usual():
    t = table(jailed=[0], at={0: 10}).dice(2, 3)
    t.play(ev.PayFine(), 0)
    assert t.cash(0) == 1450 and not t.seat(0).in_jail and t.state.turn_seat == 0
    t.play(ev.Roll(), 0)
    assert t.seat(0).position == 15


def test_using_a_get_out_of_jail_free_card_returns_it_to_the_bottom_of_its_deck():
    t = table(jailed=[0], at={0: 10}, jail_cards={0: ("CC05",)})
    t.play(ev.UseJailCard(), 0)
    assert not t.seat(0).in_jail and t.seat(0).jail_cards == ()
    assert t.state.chest[-1] == "CC05" and len(t.state.chest) == 16


def test_a_jail_card_bought_from_another_player_gets_you_out():
    t = table(jailed=[0], at={0: 10}, jail_cards={1: ("CH08",)})
    t.play(
        ev.OfferTrade(to=1, give=ev.Holdings(cash=40), get=ev.Holdings(jail_cards=("CH08",))),
        0,
    )
    t.play(ev.AcceptTrade(trade=t.of(ev.TradeOffered)[0].trade), 1)
    assert t.seat(0).jail_cards == ("CH08",) and t.cash(0) == 1460 and t.cash(1) == 1540
    t.play(ev.UseJailCard(), 0)
    assert not t.seat(0).in_jail and t.state.chance[-1] == "CH08"


def test_out_of_jail_commands_only_in_jail_and_before_rolling():
    t = table()
    t.refused(ev.PayFine(), 0, "not_in_jail")
    t.refused(ev.UseJailCard(), 0, "not_in_jail")
    j = table(jailed=[0], at={0: 10})
    j.refused(ev.UseJailCard(), 0, "no_jail_card")
    j.refused(ev.PayFine(), 1, "not_your_turn")


def test_a_roll_out_of_turn_is_refused():
    table().refused(ev.Roll(), 1, "not_your_turn")


def test_a_jailed_player_still_collects_rent():
    t = table(jailed=[1], at={1: 10, 0: 1}, own={1: [6]}).dice(2, 3)
    t.play(ev.Roll(), 0)
    assert t.cash(1) == 1506 and t.cash(0) == 1494


# --- the dice on the board: whose roll, and whether it sent them to jail ------------------------------------------


def test_the_view_says_who_rolled_the_dice_it_shows():
    assert view(table().state, 0).dice is None and view(table().state, 0).dice_by is None  # no roll yet
    t = table().dice(1, 2)
    t.play(ev.Roll(), 0).play(ev.Decline(), 0).play(ev.PassBid(), 0).play(ev.PassBid(), 1)
    v = view(t.state, None)
    assert (v.dice, v.dice_by, v.dice_jailed) == ([1, 2], 0, None)
    t.dice(2, 3).play(ev.Roll(), 1)
    assert (view(t.state, 0).dice, view(t.state, 0).dice_by) == ([2, 3], 1)


def test_the_view_says_when_the_roll_it_shows_sent_its_roller_to_jail_and_why():
    square = table(at={0: 25}).dice(2, 3).play(ev.Roll(), 0)
    assert (view(square.state, 1).dice_by, view(square.state, 1).dice_jailed) == (0, "square")  # the turn has passed
    doubles = table(at={0: 6}).dice(2, 2)
    doubles.state = replace(doubles.state, doubles=2)
    assert view(doubles.play(ev.Roll(), 0).state, 0).dice_jailed == "doubles"
    card = table(at={0: 34}, chance=("CH10",) + tuple(f"CH{i:02}" for i in range(1, 17) if i != 10)).dice(1, 1)
    assert view(card.play(ev.Roll(), 0).state, 0).dice_jailed == "card"
    square.dice(1, 2).play(ev.Roll(), 1)  # the next roll is nobody's way to jail
    assert (view(square.state, 0).dice_by, view(square.state, 0).dice_jailed) == (1, None)
