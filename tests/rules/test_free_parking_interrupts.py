"""RULES.md §1 "Out of turn" — Officer Jones (in and out of turn, its preconditions) and Talk Your Way Out of It
against every action it may cancel: Officer Jones, Time Expires, and each Second Chance effect that takes minutes,
Point cards or place from a player, whoever drew it, the target included."""

from __future__ import annotations

import pytest

from service.events import free_parking as ev
from service.rules.free_parking.state import Pending

# --- Officer Jones ---------------------------------------------------------------------------------


def test_officer_jones_out_of_turn_makes_the_target_discard_a_point_card_of_their_choice(table):
    """Play this card against any opponent whose Meter is in Violation … at any time, even when it's not your turn."""
    t = table(hands={0: ["OJ-1"], 1: ["M20-1"]}, meters={2: 0}, points={2: ["P50-1", "P10-1", "P20-1"]})
    assert t.state.turn_seat == 1
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.events == [
        ev.OfficerJonesPlayed(seat=0, card="OJ-1", target=2, out_of_turn=True),
        ev.ResponseAwaited(seat=2, action="officer_jones", by=0, card="OJ-1", deadline_at=t.deadline),
    ]
    t.play(ev.Accept(), 2)
    # the target picks which of their Point cards to discard (offered lowest first)
    assert t.one(ev.ChoiceAwaited) == ev.ChoiceAwaited(
        seat=2, choice="card", options=("P10-1", "P20-1", "P50-1"), deadline_at=t.deadline
    )
    assert t.refused(ev.Choose(card="P50-1"), 0) == "awaiting_response"
    t.play(ev.Choose(card="P20-1"), 2)
    assert t.types() == [ev.Chosen, ev.PointCardMoved, ev.ActionResolved]
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=2, card="P20-1", cause="OJ-1")
    assert t.seat(2).points == ("P50-1", "P10-1")
    assert t.state.discard[-2:] == ("P20-1", "OJ-1")  # the Point card, then Officer Jones once used
    # it was not seat 0's turn, and seat 1's turn goes on where it was
    assert t.state.turn_seat == 1 and t.state.phase == "main" and t.action is None
    t.play(ev.FeedMeter(card="M20-1"), 1)


def test_a_player_who_played_officer_jones_out_of_turn_still_takes_their_turn(table):
    """If you play it out of turn, you still take your turn when it comes up."""
    t = table(hands={2: ["OJ-1"], 1: ["M20-1"]}, meters={0: 0}, points={0: ["P30-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=0), 2)
    t.play(ev.Accept(), 0)
    t.play(ev.Discard(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.one(ev.TurnBegan).seat == 2
    assert t.one(ev.CardsDrawn).count == 6 and t.state.phase == "main"


def test_officer_jones_on_ones_own_turn_does_not_use_the_main_play(table):
    """If you play it on your turn, you then take your regular turn as well."""
    t = table(hands={1: ["OJ-1", "M20-1"]}, meters={2: 0}, points={2: ["P30-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 1)
    assert t.one(ev.OfficerJonesPlayed).out_of_turn is False
    t.play(ev.Accept(), 2)
    # a single Point card: no choice to wait for
    assert ev.Chosen(seat=2, choice="card", value="P30-1", how="only_option") in t.events
    assert t.seat(2).points == ()
    assert t.state.phase == "main"
    t.play(ev.FeedMeter(card="M20-1"), 1)
    assert t.seat(1).meter == 20


def test_officer_jones_may_also_be_played_after_the_main_play(table):
    t = table(hands={3: ["OJ-1"]}, seats=4, meters={1: 0}, points={1: ["P30-1"]}, phase="after_main")
    t.play(ev.OfficerJones(card="OJ-1", target=1), 3)  # against the very player whose turn it is
    t.play(ev.Accept(), 1)
    assert t.seat(1).points == () and t.state.phase == "after_main" and t.state.turn_seat == 1


def test_officer_jones_needs_a_target_at_violation(table):
    t = table(hands={0: ["OJ-1"]}, meters={2: 10}, points={2: ["P30-1"]})
    assert t.refused(ev.OfficerJones(card="OJ-1", target=2), 0) == "target_not_in_violation"


def test_officer_jones_needs_a_target_with_a_point_card_down(table):
    t = table(hands={0: ["OJ-1"]}, meters={2: 0})
    assert t.refused(ev.OfficerJones(card="OJ-1", target=2), 0) == "target_has_no_points"


def test_officer_jones_is_played_against_an_opponent_not_oneself(table):
    t = table(hands={0: ["OJ-1"]}, meters={0: 0}, points={0: ["P30-1"]})
    assert t.refused(ev.OfficerJones(card="OJ-1", target=0), 0) == "invalid_target"
    assert t.refused(ev.OfficerJones(card="OJ-1", target=3), 0) == "invalid_target"


def test_officer_jones_needs_an_officer_jones_card_in_hand(table):
    t = table(hands={0: ["TE-1"], 1: ["OJ-1"]}, meters={2: 0}, points={2: ["P30-1"]})
    assert t.refused(ev.OfficerJones(card="TE-1", target=2), 0) == "wrong_card_kind"
    assert t.refused(ev.OfficerJones(card="OJ-1", target=2), 0) == "card_not_in_hand"


def test_officer_jones_may_not_be_played_while_the_game_waits_for_an_answer(table):
    """Officer Jones may be played at any time the game is not waiting on someone's response."""
    t = table(hands={0: ["OJ-1"], 1: ["TE-1"], 2: ["OJ-2"]}, meters={1: 0, 2: 30}, points={1: ["P30-1"], 0: ["P10-1"]})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert t.pending.seat == 2
    assert t.refused(ev.OfficerJones(card="OJ-1", target=1), 0) == "awaiting_response"
    # the awaited seat owes its answer first
    assert t.refused(ev.OfficerJones(card="OJ-2", target=1), 2) == "answer_owed"


def test_officer_jones_against_a_player_without_a_talk_card_still_waits_for_their_answer(table):
    """The game waits for the target's answer always, whether or not they hold the card."""
    t = table(hands={0: ["OJ-1"], 2: ["M20-1"]}, meters={2: 0}, points={2: ["P30-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.pending.kind == "respond" and t.pending.seat == 2
    assert t.legal(2) == [ev.Accept(), ev.Resign()]


# --- Talk Your Way Out of It -------------------------------------------------------------------------


def assert_talked_out(t, seat: int, talk: str, cancelled: str) -> None:
    """Both cards are discarded; the action is cancelled."""
    assert t.events[:2] == [ev.TalkedOut(seat=seat, card=talk, cancelled=cancelled), ev.ActionResolved(card=cancelled, cancelled=True)]
    assert talk not in t.seat(seat).hand and talk in t.state.discard
    pile = t.state.second_chance_discard if cancelled.startswith("SC-") else t.state.discard
    assert cancelled in pile
    assert t.action is None and t.pending is None


def test_talk_out_cancels_officer_jones(table):
    t = table(hands={0: ["OJ-1"], 2: ["TW-1", "M20-1"]}, meters={2: 0}, points={2: ["P30-1", "P20-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.legal(2) == [ev.Accept(), ev.TalkOut(card="TW-1"), ev.Resign()]
    t.play(ev.TalkOut(card="TW-1"), 2)
    assert_talked_out(t, 2, "TW-1", "OJ-1")
    assert t.seat(2).points == ("P30-1", "P20-1")
    assert t.state.turn_seat == 1 and t.state.phase == "main"


def test_talk_out_cancels_time_expires_which_still_was_the_main_play(table):
    """A main play that is cancelled (Time Expires talked out of) still was the turn's main play."""
    t = table(hands={1: ["TE-1", "M20-1"], 2: ["TW-2"]}, meters={2: 40})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    t.play(ev.TalkOut(card="TW-2"), 2)
    assert_talked_out(t, 2, "TW-2", "TE-1")
    assert t.seat(2).meter == 40
    assert t.state.phase == "after_main"
    assert t.refused(ev.FeedMeter(card="M20-1"), 1) == "main_play_done"
    t.play(ev.EndTurn(), 1)


def drawn(table, card: str, **layout):
    t = table(phase="after_main", second_chance=[card], **layout)
    t.play(ev.DrawSecondChance(), 1)
    return t


def test_talk_out_cancels_take_point_against_the_named_player(table):
    t = drawn(table, "SC-take_point-1", hands={2: ["TW-1"]}, points={2: ["P60-1"]})
    assert t.pending == Pending(seat=2, kind="respond", deadline_at=t.deadline)
    t.play(ev.TalkOut(card="TW-1"), 2)
    assert_talked_out(t, 2, "TW-1", "SC-take_point-1")
    assert t.seat(2).points == ("P60-1",) and t.seat(1).points == ()
    assert t.none(ev.PointCardsFanned)
    assert t.one(ev.TurnEnded).seat == 1  # the cancelled card still ends the drawer's turn


def test_the_drawer_may_talk_out_of_their_own_give_point(table):
    """This card cancels any action against you, including any Second Chance card you … draw."""
    t = drawn(table, "SC-give_point-1", hands={1: ["TW-3"]}, points={1: ["P40-1"]})
    assert t.legal(1) == [ev.Accept(), ev.TalkOut(card="TW-3"), ev.Resign()]
    t.play(ev.TalkOut(card="TW-3"), 1)
    assert_talked_out(t, 1, "TW-3", "SC-give_point-1")
    assert t.seat(1).points == ("P40-1",)


def test_the_drawer_may_talk_out_of_their_own_lose_point(table):
    t = drawn(table, "SC-lose_point-1", hands={1: ["TW-1"]}, points={1: ["P40-1", "P10-1"]})
    t.play(ev.TalkOut(card="TW-1"), 1)
    assert_talked_out(t, 1, "TW-1", "SC-lose_point-1")
    assert t.seat(1).points == ("P40-1", "P10-1")


def test_talk_out_cancels_trade_places_against_the_named_player(table):
    t = drawn(table, "SC-trade_places-1", hands={2: ["TW-1"]})
    players = [st.player for st in t.state.seats]
    t.play(ev.Choose(target=2), 1)
    t.play(ev.TalkOut(card="TW-1"), 2)
    assert_talked_out(t, 2, "TW-1", "SC-trade_places-1")
    assert [st.player for st in t.state.seats] == players
    assert t.none(ev.PlacesTraded)


@pytest.mark.parametrize("card", ["SC-minus_20-1", "SC-violation-1"])
def test_the_drawer_may_talk_out_of_losing_their_own_minutes(table, card):
    t = drawn(table, card, hands={1: ["TW-2"]}, meters={1: 50})
    t.play(ev.TalkOut(card="TW-2"), 1)
    assert_talked_out(t, 1, "TW-2", card)
    assert t.seat(1).meter == 50


def test_talk_out_of_all_minus_20_spares_only_the_one_who_talks(table):
    """Every opponent is asked in seat order from the drawer's left; each answers for themselves."""
    t = drawn(table, "SC-all_minus_20-1", seats=4, hands={2: ["TW-1"], 3: ["TW-2"], 0: ["TW-3"]}, meters={0: 30, 2: 30, 3: 30})
    assert t.pending.seat == 2
    t.play(ev.Accept(), 2)
    assert t.pending.seat == 3
    t.play(ev.TalkOut(card="TW-2"), 3)
    assert t.one(ev.TalkedOut) == ev.TalkedOut(seat=3, card="TW-2", cancelled="SC-all_minus_20-1")
    assert t.state.discard[-1] == "TW-2"
    assert t.pending.seat == 0  # the effect goes on for the others
    t.play(ev.Accept(), 0)
    assert [st.meter for st in t.state.seats] == [10, 0, 10, 30]
    assert "TW-3" in t.seat(0).hand and "TW-1" in t.seat(2).hand
    assert t.one(ev.TurnEnded).seat == 1


def test_talk_out_is_not_offered_against_a_second_chance_card_that_takes_nothing(table):
    for card in ("SC-add_20-1", "SC-add_40-1", "SC-set_60-1", "SC-draw_2-1"):
        t = drawn(table, card, hands={1: ["TW-1"]}, meters={1: 0})
        assert t.none(ev.ResponseAwaited), card
        assert t.state.turn_seat == 2


def test_talk_out_only_answers_an_action_against_the_player(table):
    t = table(hands={1: ["TW-1"], 2: ["TW-2"], 0: ["OJ-1"]}, meters={2: 0}, points={2: ["P10-1"]})
    assert t.refused(ev.TalkOut(card="TW-1"), 1) == "no_response_awaited"
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.refused(ev.TalkOut(card="TW-1"), 1) == "awaiting_response"  # not the target
    assert t.refused(ev.TalkOut(card="TW-1"), 2) == "card_not_in_hand"


def test_talk_out_needs_a_talk_your_way_out_card(table):
    t = table(hands={0: ["OJ-1"], 2: ["OJ-2", "TW-1", "TW-2"]}, meters={2: 0}, points={2: ["P10-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.refused(ev.TalkOut(card="OJ-2"), 2) == "wrong_card_kind"
    # one talk_out per Talk card held
    assert t.legal(2) == [ev.Accept(), ev.TalkOut(card="TW-1"), ev.TalkOut(card="TW-2"), ev.Resign()]
