"""RULES.md §1 — the pending waits: while the game waits on a seat only that seat may act; every wait has a
deadline (``at`` + response_seconds × 1000); the server's ``Timeout`` is refused before it and, after it, answers
for the seat as an event of its own: ``accept``, or the documented default choice (the next seat clockwise with a
legal target, position 0, the lowest-valued Point card with ties by card id)."""

from __future__ import annotations

import pytest

from service.events import free_parking as ev
from service.events.common import Timeout
from service.rules.free_parking import view
from service.rules.free_parking.state import Pending


def time_expires_on_seat_2(table, **layout):
    """Four seats; seat 1 plays Time Expires against seat 2, whose meter shows 40."""
    layout.setdefault("hands", {1: ["TE-1", "M20-1"], 2: ["TW-1", "M30-1"], 0: ["OJ-1"], 3: ["OJ-2"]})
    t = table(4, meters={2: 40, 1: 0}, points={1: ["P10-1"]}, **layout)
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    return t


def drawn(table, card: str, **layout):
    t = table(phase="after_main", second_chance=[card], **layout)
    t.play(ev.DrawSecondChance(), 1)
    return t


# --- only the awaited seat acts -----------------------------------------------------------------------


def test_while_the_game_waits_only_the_target_may_act(table):
    t = time_expires_on_seat_2(table)
    assert t.pending == Pending(seat=2, kind="respond", deadline_at=t.deadline)
    # the player whose turn it is must wait too
    assert t.refused(ev.EndTurn(), 1) == "awaiting_response"
    assert t.refused(ev.DrawSecondChance(), 1) == "awaiting_response"
    # no one may interrupt with Officer Jones while an answer is awaited
    assert t.refused(ev.OfficerJones(card="OJ-1", target=1), 0) == "awaiting_response"
    assert t.refused(ev.OfficerJones(card="OJ-2", target=1), 3) == "awaiting_response"
    # nor answer for the target
    assert t.refused(ev.Accept(), 3) == "awaiting_response"
    # the target owes its answer before anything else
    assert t.refused(ev.FeedMeter(card="M30-1"), 2) == "answer_owed"


def test_while_the_game_waits_every_other_seat_may_only_resign(table):
    t = time_expires_on_seat_2(table)
    assert t.legal(2) == [ev.Accept(), ev.TalkOut(card="TW-1"), ev.Resign()]
    for seat in (0, 1, 3):
        assert t.legal(seat) == [ev.Resign()]  # only resigning, at any moment
        assert view(t.state, seat).legal == [ev.Resign()]


def test_a_choice_is_awaited_from_its_seat_alone_and_legal_lists_its_options(table):
    t = drawn(table, "SC-take_point-1", seats=4, points={2: ["P10-1"], 3: ["P20-1"]})
    assert t.pending.kind == "target" and t.pending.options == (2, 3)
    assert t.legal(1) == [ev.Choose(target=2), ev.Choose(target=3), ev.Resign()]
    assert [t.legal(s) for s in (0, 2, 3)] == [[ev.Resign()]] * 3
    assert t.refused(ev.Choose(target=3), 2) == "awaiting_response"


def test_play_resumes_where_it_was_once_the_wait_is_over(table):
    t = time_expires_on_seat_2(table)
    t.play(ev.Accept(), 2)
    assert t.pending is None and t.action is None
    assert t.state.turn_seat == 1 and t.state.phase == "after_main"
    assert set(map(type, t.legal(1))) >= {ev.DrawSecondChance, ev.EndTurn}


def test_the_view_shows_the_wait_its_deadline_and_the_action(table):
    t = time_expires_on_seat_2(table)
    pending = view(t.state, 0).pending
    assert (pending.kind, pending.seat, pending.deadline_at) == ("respond", 2, t.deadline)
    assert (pending.action.kind, pending.action.by, pending.action.card, pending.action.target) == ("time_expires", 1, "TE-1", 2)


# --- the deadline -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [15, 30, 1])
def test_a_wait_has_a_deadline_of_at_plus_the_response_time(table, seconds):
    t = table(hands={1: ["TE-1"]}, meters={2: 40}, response_seconds=seconds)
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert t.one(ev.ResponseAwaited).deadline_at == t.at + seconds * 1000 == t.pending.deadline_at


def test_the_default_response_time_is_15_seconds(table):
    t = time_expires_on_seat_2(table)
    assert t.pending.deadline_at == t.at + 15_000


def test_each_wait_of_an_action_counts_from_the_command_that_opened_it(table):
    t = table(hands={0: ["OJ-1"]}, meters={2: 0}, points={2: ["P10-1", "P20-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0, at=t.at)
    later = t.at + 7_000
    t.play(ev.Accept(), 2, at=later)
    assert t.one(ev.ChoiceAwaited).deadline_at == later + 15_000 == t.pending.deadline_at


def test_the_server_timeout_is_refused_before_the_deadline(table):
    t = time_expires_on_seat_2(table)
    deadline = t.pending.deadline_at
    assert t.refused(Timeout(), None, at=t.at) == "deadline_not_reached"
    assert t.refused(Timeout(), None, at=deadline - 1) == "deadline_not_reached"


def test_at_the_deadline_the_server_accepts_on_the_players_behalf_as_an_event_of_its_own(table):
    t = time_expires_on_seat_2(table)
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Accepted(seat=2, by_server=True)
    assert t.one(ev.MeterSet) == ev.MeterSet(seat=2, meter=0, cause="TE-1")
    assert t.pending is None
    assert "TW-1" in t.seat(2).hand  # the server never plays a Talk card for anyone


def test_the_server_timeout_is_accepted_any_time_after_the_deadline(table):
    t = time_expires_on_seat_2(table)
    t.play(Timeout(), None, at=t.pending.deadline_at + 3_600_000)
    assert t.seat(2).meter == 0


def test_the_server_timeout_needs_someone_to_wait_for(table):
    t = table(hands={1: ["M20-1"]})
    assert t.refused(Timeout(), None) == "nothing_pending"


# --- the server's default choices -------------------------------------------------------------------


def test_on_timeout_the_server_discards_the_targets_lowest_valued_point_card(table):
    """The same applies to a choice the target owes: on timeout the server picks the lowest-valued one."""
    t = table(hands={0: ["OJ-1"]}, meters={2: 0}, points={2: ["P50-1", "P10-3", "P20-1"]})
    t.play(ev.OfficerJones(card="OJ-1", target=2), 0)
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.pending.kind == "card"
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Chosen(seat=2, choice="card", value="P10-3", how="timeout")
    assert t.seat(2).points == ("P50-1", "P20-1")


def test_on_timeout_equal_values_are_broken_by_card_id(table):
    t = drawn(table, "SC-lose_point-1", points={1: ["P40-1", "P30-2", "P60-1", "P30-1"]})
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.pending.options == ("P30-1", "P30-2", "P40-1", "P60-1")
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Chosen(seat=1, choice="card", value="P30-1", how="timeout")


def test_on_timeout_card_ids_tie_by_copy_number_not_by_spelling(table):
    """With two sets, P30-2 comes before P30-10: ties follow the unshuffled deck (cards.lowest_first)."""
    t = drawn(table, "SC-lose_point-1", seats=5, points={1: ["P30-10", "P30-2"]})
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.pending.options == ("P30-2", "P30-10")


def test_on_timeout_the_server_names_the_next_seat_clockwise_with_a_legal_target(table):
    # seat 2 (the drawer's left) has no Point card to take; seat 3 is the next with one
    t = drawn(table, "SC-take_point-1", seats=4, points={3: ["P20-1"], 0: ["P10-1"]})
    assert t.pending.options == (3, 0)
    deadline = t.pending.deadline_at
    t.play(Timeout(), None, at=deadline)
    assert t.events[0] == ev.Chosen(seat=1, choice="target", value=3, how="timeout")
    assert t.pending == Pending(seat=3, kind="respond", deadline_at=deadline + 15_000)


def test_on_timeout_the_server_names_the_next_seat_clockwise_wrapping_round_the_table(table):
    t = table(4, turn=3, phase="after_main", second_chance=["SC-trade_places-1"])
    t.play(ev.DrawSecondChance(), 3)
    assert t.pending.options == (0, 1, 2)
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Chosen(seat=3, choice="target", value=0, how="timeout")


def test_on_timeout_a_given_point_card_goes_to_the_drawers_left(table):
    t = drawn(table, "SC-give_point-1", seats=4, points={1: ["P20-1", "P10-1"]})
    for _ in range(3):  # the drawer's answer, the card, the opponent
        t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=1, card="P10-1", cause="SC-give_point-1", to=2)


def test_on_timeout_the_server_picks_position_0_of_the_face_down_fan(table):
    t = drawn(table, "SC-take_point-1", points={2: ["P20-1", "P50-1", "P30-1"]})
    t.play(ev.Accept(), 2)
    fan = t.one(ev.PointCardsFanned).secret.order
    assert t.pending.kind == "position"
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Chosen(seat=1, choice="position", value=0, how="timeout")
    assert t.seat(1).points == (fan[0],)


# --- answering a choice ------------------------------------------------------------------------------


def test_a_choice_names_exactly_the_kind_of_thing_awaited(table):
    t = drawn(table, "SC-take_point-1", seats=4, points={2: ["P10-1"], 3: ["P20-1"]})
    assert t.refused(ev.Choose(card="P10-1"), 1) == "wrong_choice"
    assert t.refused(ev.Choose(position=0), 1) == "wrong_choice"
    assert t.refused(ev.Choose(target=2, position=0), 1) == "wrong_choice"
    assert t.refused(ev.Choose(), 1) == "wrong_choice"


def test_a_choice_must_be_one_of_the_options(table):
    t = drawn(table, "SC-take_point-1", seats=4, points={2: ["P10-1"], 3: ["P20-1"]})
    assert t.refused(ev.Choose(target=0), 1) == "not_an_option"  # seat 0 has no Point card to take
    assert t.refused(ev.Choose(target=1), 1) == "not_an_option"  # not oneself
    t.play(ev.Choose(target=3), 1)
    t.play(ev.Accept(), 3)
    assert t.seat(1).points == ("P20-1",)


def test_a_card_choice_must_be_one_of_ones_own_point_cards(table):
    t = drawn(table, "SC-lose_point-1", points={1: ["P10-1", "P20-1"], 2: ["P30-1"]})
    t.play(ev.Accept(), 1)
    assert t.refused(ev.Choose(card="P30-1"), 1) == "not_an_option"
    assert t.refused(ev.Choose(card="M20-1"), 1) == "not_an_option"


def test_a_position_must_lie_within_the_fan(table):
    t = drawn(table, "SC-take_point-1", points={2: ["P10-1", "P20-1"]})
    t.play(ev.Accept(), 2)
    assert t.refused(ev.Choose(position=2), 1) == "not_an_option"


def test_an_answer_and_a_choice_are_not_interchangeable(table):
    t = drawn(table, "SC-lose_point-1", points={1: ["P10-1", "P20-1"]})
    assert t.pending.kind == "respond"
    assert t.refused(ev.Choose(card="P10-1"), 1) == "no_choice_awaited"
    t.play(ev.Accept(), 1)
    assert t.pending.kind == "card"
    assert t.refused(ev.Accept(), 1) == "no_response_awaited"
    assert t.refused(ev.TalkOut(card="TW-1"), 1) == "no_response_awaited"


def test_with_nothing_awaited_there_is_nothing_to_answer_or_choose(table):
    t = table(hands={1: ["M20-1"]})
    assert t.refused(ev.Accept(), 1) == "no_response_awaited"
    assert t.refused(ev.Choose(target=2), 1) == "no_choice_awaited"


# --- which actions wait: only those that cannot change anything anyone can see are skipped ----------------


def _opened(table, action: str):
    """Seat 1 starts ``action`` against a target holding no Talk card (seat 2, or seat 1 itself for its own card);
    the table is one where the action changes something: the target's meter at 30, Point cards on every table."""
    points = {1: ["P10-1"], 2: ["P20-1"], 0: ["P30-1"]}
    if action == "time_expires":
        t = table(hands={1: ["TE-1"], 2: ["M20-1"]}, meters={2: 30}, points=points)
        t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    elif action == "officer_jones":
        t = table(hands={1: ["OJ-1"], 2: ["M20-1"]}, meters={2: 0}, points=points)
        t.play(ev.OfficerJones(card="OJ-1", target=2), 1)
    else:
        meters = {0: 30, 1: 30, 2: 30}
        t = drawn(table, f"SC-{action}-1", hands={2: ["M20-1"], 1: ["M30-1"]}, meters=meters, points=points)
        if t.pending.kind == "target":
            t.play(ev.Choose(target=2), 1)
    return t


@pytest.mark.parametrize(
    ("action", "asked"),
    [
        ("time_expires", [2]), ("officer_jones", [2]), ("take_point", [2]), ("give_point", [1]), ("lose_point", [1]),
        ("trade_places", [2, 1]), ("minus_20", [1]), ("violation", [1]), ("all_minus_20", [2, 0]),
    ],
)  # fmt: skip
def test_every_action_that_changes_something_waits_for_each_target_whether_or_not_they_hold_a_talk_card(
    table, action, asked
):
    """Whenever such an action targets a player, the game waits for that player's answer — always, whether or not
    they hold the card (skipping the wait would tell everyone they don't)."""
    t = _opened(table, action)
    for seat in asked:
        assert t.pending is not None and (t.pending.kind, t.pending.seat) == ("respond", seat), (action, seat)
        assert t.legal(seat) == [ev.Accept(), ev.Resign()]
        t.play(ev.Accept(), seat)
        while t.pending is not None and t.pending.kind != "respond":  # a choice the action owes (card, target…)
            t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.action is None


@pytest.mark.parametrize(
    "layout",
    [
        {"card": "TE-1", "meters": {2: 0}},
        {"card": "SC-minus_20-1", "meters": {1: 0}},
        {"card": "SC-violation-1", "meters": {1: 0}},
        {"card": "SC-all_minus_20-1", "meters": {0: 0, 1: 40, 2: 0}},
    ],
)
def test_a_wait_is_skipped_only_where_the_action_cannot_change_anything_anyone_can_see(table, layout):
    """Time Expires, −20 or Violation against a meter already at 0: nobody is asked, which reveals nothing."""
    card, meters = layout["card"], layout["meters"]
    if card == "TE-1":
        t = table(hands={1: ["TE-1"], 2: ["TW-1"]}, meters=meters)
        t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    else:
        t = drawn(table, card, hands={0: ["TW-1"], 1: ["TW-2"], 2: ["TW-3"]}, meters=meters)
    assert t.none(ev.ResponseAwaited) and t.none(ev.MeterSet)
    assert t.pending is None and t.action is None
    assert [st.meter for st in t.state.seats] == [meters.get(i, 0) for i in range(3)]


@pytest.mark.parametrize(
    ("card", "chooser"),
    [("OJ-1", 2), ("SC-lose_point-1", 1), ("SC-give_point-1", 1)],
)
def test_every_server_default_card_ties_by_the_unshuffled_deck_p30_2_before_p30_10(table, card, chooser):
    """The lowest-valued card, ties by the card's place in the unshuffled deck of docs/rng.md: P30-2 before P30-10."""
    owned = ["P40-1", "P30-10", "P30-2", "P30-7"]
    if card == "OJ-1":
        t = table(5, hands={1: ["OJ-1"]}, meters={2: 0}, points={2: owned})
        t.play(ev.OfficerJones(card="OJ-1", target=2), 1)
    else:
        t = drawn(table, card, seats=5, points={1: owned})
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.pending.options == ("P30-2", "P30-7", "P30-10", "P40-1")
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Chosen(seat=chooser, choice="card", value="P30-2", how="timeout")
