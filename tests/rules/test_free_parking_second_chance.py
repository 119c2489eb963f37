"""RULES.md §1 — the eleven Second Chance effects, their targets and choices, the "no effect" cases, trade places,
and the Second Chance deck's reshuffle. A Second Chance card is drawn after the main play and resolves at once;
then the turn ends.

Every table here is at seat 1's turn, after its main play (``phase="after_main"``), with the card on top of the
Second Chance deck.
"""

from __future__ import annotations

import msgspec
import pytest

from service.events import free_parking as ev
from service.events.common import Timeout
from service.rules import rng
from service.rules.free_parking import view
from service.rules.free_parking.state import Pending


def drawn(table, card: str, **layout):
    """Seat 1 draws ``card`` from the top of the Second Chance deck."""
    layout.setdefault("seats", 3)
    t = table(phase="after_main", second_chance=[card], **layout)
    t.play(ev.DrawSecondChance(), 1)
    assert t.events[0] == ev.SecondChanceDrawn(seat=1, card=card, effect=card.split("-")[1])
    return t


def assert_turn_ended(t, drawer: int = 1) -> None:
    assert ev.TurnEnded(seat=drawer) in t.events
    assert t.state.turn_seat == (drawer + 1) % t.state.n and t.state.phase == "main"
    assert t.action is None and t.pending is None


# --- drawing --------------------------------------------------------------------------------------


def test_a_second_chance_card_resolves_at_once_goes_to_its_discards_and_ends_the_turn(table):
    t = drawn(table, "SC-add_20-1", meters={1: 10})
    assert t.types()[:5] == [ev.SecondChanceDrawn, ev.MeterSet, ev.ActionResolved, ev.TurnEnded, ev.TurnBegan]
    assert t.state.second_chance_discard[-1] == "SC-add_20-1"
    assert "SC-add_20-1" not in t.state.second_chance
    assert_turn_ended(t)


def test_an_empty_second_chance_deck_is_replaced_by_its_discards_shuffled(table):
    """When the Second Chance deck is empty, its discards are reshuffled into a new one (an event)."""
    discards = ["SC-add_20-1", "SC-add_40-1", "SC-set_60-1", "SC-draw_2-1"]  # the rest go there too
    t = table(phase="after_main", second_chance=[], second_chance_discard=discards)
    pile = t.state.second_chance_discard
    t.play(ev.DrawSecondChance(), 1)
    order = rng.shuffle(t.state.seed, "reshuffle:second_chance:1", pile)
    shuffled = t.one(ev.DeckReshuffled)
    assert (shuffled.deck, shuffled.count, shuffled.reshuffle) == ("second_chance", len(pile), 1)
    assert shuffled.secret.order == tuple(order)
    assert t.one(ev.SecondChanceDrawn).card == order[0]
    assert t.state.second_chance_reshuffles == 1
    assert t.state.second_chance_discard[-1] == order[0]  # only the card just resolved


def test_no_second_chance_card_can_be_drawn_when_deck_and_discards_are_both_empty(table):
    t = table(phase="after_main")
    t.state = msgspec.structs.replace(t.state, second_chance=(), second_chance_discard=())
    assert t.refused(ev.DrawSecondChance(), 1) == "second_chance_empty"


# --- take a Point card, unseen ---------------------------------------------------------------------


def test_take_point_names_a_player_who_may_answer_then_the_drawer_picks_a_position_unseen(table):
    t = drawn(table, "SC-take_point-1", seats=4, meters={1: 30}, points={2: ["P20-1"], 3: ["P30-1", "P50-1", "P10-1"]})
    # the drawer names a player: only those with Point cards, clockwise from the drawer's left
    assert t.types() == [ev.SecondChanceDrawn, ev.ChoiceAwaited]
    assert t.one(ev.ChoiceAwaited) == ev.ChoiceAwaited(seat=1, choice="target", options=(2, 3), deadline_at=t.deadline)
    t.play(ev.Choose(target=3), 1)
    assert t.types() == [ev.Chosen, ev.ResponseAwaited]
    assert t.one(ev.ResponseAwaited) == ev.ResponseAwaited(
        seat=3, action="take_point", by=1, card="SC-take_point-1", deadline_at=t.deadline
    )
    t.play(ev.Accept(), 3)
    # the target's cards are turned face down in an order of the RNG, and the drawer picks a position
    fanned = t.one(ev.PointCardsFanned)
    seq = t.state.version - len(t.events) + t.events.index(fanned) + 1  # the fan event's own seq
    assert fanned.secret.order == tuple(rng.shuffle(t.state.seed, f"unseen:{seq}", ["P30-1", "P50-1", "P10-1"]))
    assert fanned.count == 3
    assert t.one(ev.ChoiceAwaited).options == (0, 1, 2)
    t.play(ev.Choose(position=2), 1)
    taken = fanned.secret.order[2]
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=3, card=taken, cause="SC-take_point-1", to=1)
    assert t.seat(1).points == (taken,)
    assert taken not in t.seat(3).points and len(t.seat(3).points) == 2
    assert t.seat(1).meter == 30  # you do not change the time showing on your Meter
    assert_turn_ended(t)


def test_take_point_from_the_only_player_with_point_cards_needs_no_naming(table):
    t = drawn(table, "SC-take_point-1", points={0: ["P40-1"]})
    assert t.one(ev.Chosen) == ev.Chosen(seat=1, choice="target", value=0, how="only_option")
    assert t.pending.seat == 0 and t.pending.kind == "respond"
    t.play(ev.Accept(), 0)
    # a single face-down card: the only position is taken without asking
    assert ev.Chosen(seat=1, choice="position", value=0, how="only_option") in t.events
    assert t.seat(1).points == ("P40-1",) and t.seat(0).points == ()


def test_take_point_has_no_effect_when_no_opponent_has_a_point_card(table):
    """A card that would … take a Point card where there is none to … take has no effect."""
    t = drawn(table, "SC-take_point-2", points={1: ["P10-1"]})
    assert t.types()[:3] == [ev.SecondChanceDrawn, ev.ActionResolved, ev.TurnEnded]
    assert t.seat(1).points == ("P10-1",)
    assert_turn_ended(t)


# --- give a Point card ------------------------------------------------------------------------------


def test_give_point_the_drawer_chooses_the_card_and_the_opponent(table):
    t = drawn(table, "SC-give_point-1", points={1: ["P30-1", "P10-1"], 2: ["P20-1"]})
    # the card takes a Point card from the drawer: the drawer may talk their way out of it
    assert t.one(ev.ResponseAwaited) == ev.ResponseAwaited(
        seat=1, action="give_point", by=1, card="SC-give_point-1", deadline_at=t.deadline
    )
    t.play(ev.Accept(), 1)
    assert t.one(ev.ChoiceAwaited) == ev.ChoiceAwaited(seat=1, choice="card", options=("P10-1", "P30-1"), deadline_at=t.deadline)
    t.play(ev.Choose(card="P30-1"), 1)
    assert t.one(ev.ChoiceAwaited) == ev.ChoiceAwaited(seat=1, choice="target", options=(2, 0), deadline_at=t.deadline)
    t.play(ev.Choose(target=0), 1)
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=1, card="P30-1", cause="SC-give_point-1", to=0)
    assert t.seat(1).points == ("P10-1",) and t.seat(0).points == ("P30-1",) and t.seat(2).points == ("P20-1",)
    assert_turn_ended(t)


def test_give_point_of_a_single_card_to_the_single_opponent_asks_only_the_answer(table):
    t = drawn(table, "SC-give_point-2", seats=2, points={1: ["P50-1"]})
    t.play(ev.Accept(), 1)
    assert t.all(ev.Chosen) == [
        ev.Chosen(seat=1, choice="card", value="P50-1", how="only_option"),
        ev.Chosen(seat=1, choice="target", value=0, how="only_option"),
    ]
    assert t.seat(0).points == ("P50-1",) and t.seat(1).points == ()


def test_give_point_has_no_effect_when_the_drawer_has_no_point_card(table):
    t = drawn(table, "SC-give_point-1", points={2: ["P20-1"]})
    assert t.types()[:3] == [ev.SecondChanceDrawn, ev.ActionResolved, ev.TurnEnded]
    assert t.seat(2).points == ("P20-1",)


# --- lose a Point card ------------------------------------------------------------------------------


def test_lose_point_the_drawer_chooses_which_card_goes_to_the_discard_pile(table):
    t = drawn(table, "SC-lose_point-1", points={1: ["P60-1", "P10-1", "P20-1"]})
    assert t.pending.kind == "respond" and t.pending.seat == 1
    t.play(ev.Accept(), 1)
    assert t.pending.kind == "card" and t.pending.options == ("P10-1", "P20-1", "P60-1")
    t.play(ev.Choose(card="P20-1"), 1)
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=1, card="P20-1", cause="SC-lose_point-1")
    assert t.seat(1).points == ("P60-1", "P10-1")
    assert t.state.discard[-1] == "P20-1"
    assert_turn_ended(t)


def test_lose_point_has_no_effect_when_the_drawer_has_no_point_card(table):
    t = drawn(table, "SC-lose_point-3", points={0: ["P20-1"]})
    assert t.types()[:3] == [ev.SecondChanceDrawn, ev.ActionResolved, ev.TurnEnded]
    assert t.seat(0).points == ("P20-1",)


# --- trade places -----------------------------------------------------------------------------------


def traded(t, named: int, drawer: int = 1) -> None:
    """The drawer names ``named`` (unless they are the only opponent); both accept, the named player first."""
    if t.pending.kind == "target":
        t.play(ev.Choose(target=named), drawer)
    t.play(ev.Accept(), named)
    t.play(ev.Accept(), drawer)
    assert t.one(ev.PlacesTraded) == ev.PlacesTraded(seat=drawer, other=named)


def test_trade_places_the_players_exchange_seats_and_take_over_what_lies_there(table):
    """Each leaves meter, hand and Point cards behind and takes over the other's; players keep their identity."""
    t = drawn(
        table, "SC-trade_places-1", seats=4,
        hands={1: ["M20-1"], 3: ["P10-1", "OJ-1"]}, meters={1: 40, 3: 10}, points={1: ["P20-1"], 3: ["P50-1", "P60-1"]},
    )  # fmt: skip
    before = t.state.seats
    assert t.one(ev.ChoiceAwaited) == ev.ChoiceAwaited(seat=1, choice="target", options=(2, 3, 0), deadline_at=t.deadline)
    traded(t, 3)
    after = t.state.seats
    assert (after[1].player, after[3].player) == (before[3].player, before[1].player)
    for seat in (1, 3):  # the seats keep their meters, hands and Point cards
        assert (after[seat].meter, after[seat].points) == (before[seat].meter, before[seat].points)
    assert after[3].hand == before[3].hand
    assert after[1].hand == before[1].hand


def test_trade_places_asks_the_named_player_then_the_drawer(table):
    """Trade places takes a place from two players: the named player is asked first, then the drawer — here a
    drawer at 190 points holding a Talk card, who once was never asked (their ``legal`` stayed empty)."""
    at_190 = ["P60-1", "P60-2", "P40-1", "P30-1"]
    t = drawn(table, "SC-trade_places-1", seats=4, hands={1: ["TW-1"], 3: ["M20-1"]}, points={1: at_190})
    t.play(ev.Choose(target=3), 1)
    assert t.types() == [ev.Chosen, ev.ResponseAwaited]
    assert t.one(ev.ResponseAwaited) == ev.ResponseAwaited(
        seat=3, action="trade_places", by=1, card="SC-trade_places-1", deadline_at=t.deadline
    )
    assert t.legal(3) == [ev.Accept(), ev.Resign()] and t.legal(1) == [ev.Resign()]
    t.play(ev.Accept(), 3)
    assert t.types() == [ev.Accepted, ev.ResponseAwaited]  # not traded yet: the drawer's answer is owed
    assert t.one(ev.ResponseAwaited) == ev.ResponseAwaited(
        seat=1, action="trade_places", by=1, card="SC-trade_places-1", deadline_at=t.deadline
    )
    assert t.legal(1) == [ev.Accept(), ev.TalkOut(card="TW-1"), ev.Resign()]
    assert [t.legal(seat) for seat in (0, 2, 3)] == [[ev.Resign()]] * 3
    t.play(ev.Accept(), 1)
    assert t.types()[:3] == [ev.Accepted, ev.PlacesTraded, ev.ActionResolved]


def test_the_view_names_which_of_a_trades_two_answers_is_awaited(table):
    t = drawn(table, "SC-trade_places-1", seats=4)
    t.play(ev.Choose(target=3), 1)
    first = view(t.state, 0).pending
    assert (first.kind, first.seat, first.respondent, first.asked_next) == ("respond", 3, "named", [1])
    assert (first.action.kind, first.action.by, first.action.target) == ("trade_places", 1, 3)
    t.play(ev.Accept(), 3)
    second = view(t.state, 3).pending
    assert (second.kind, second.seat, second.respondent, second.asked_next) == ("respond", 1, "drawer", [])


def test_the_drawer_is_asked_about_their_own_trade_whether_or_not_they_hold_a_talk_card(table):
    """Always, whether or not they hold the card (skipping the wait would tell everyone they don't); and a trade
    always moves two players, which everyone sees, so neither wait is ever skipped."""
    t = drawn(table, "SC-trade_places-2", seats=2, hands={0: ["M20-1"], 1: ["M30-1"]})
    assert t.one(ev.Chosen) == ev.Chosen(seat=1, choice="target", value=0, how="only_option")
    assert t.pending == Pending(seat=0, kind="respond", deadline_at=t.deadline)
    t.play(ev.Accept(), 0)
    assert t.pending == Pending(seat=1, kind="respond", deadline_at=t.deadline)
    assert t.legal(1) == [ev.Accept(), ev.Resign()]


@pytest.mark.parametrize("talker", ["named", "drawer"])
def test_either_talk_out_cancels_a_trade(table, talker):
    """A talk-out by either cancels the trade: both cards are discarded, nobody moves, and play goes on to the seat
    after the drawer's, where the named player still sits."""
    t = drawn(table, "SC-trade_places-1", hands={1: ["TW-1"], 2: ["TW-2"]})
    players = [st.player for st in t.state.seats]
    t.play(ev.Choose(target=2), 1)
    if talker == "drawer":
        t.play(ev.Accept(), 2)
    seat, talk = (2, "TW-2") if talker == "named" else (1, "TW-1")
    t.play(ev.TalkOut(card=talk), seat)
    assert t.events[:2] == [
        ev.TalkedOut(seat=seat, card=talk, cancelled="SC-trade_places-1"),
        ev.ActionResolved(card="SC-trade_places-1", cancelled=True),
    ]
    assert t.none(ev.ResponseAwaited) and t.none(ev.PlacesTraded)  # a named player's talk-out leaves nothing to ask
    assert [st.player for st in t.state.seats] == players
    assert {"TW-1", "TW-2"} - {talk} <= set(t.seat(1).hand + t.seat(2).hand) and talk in t.state.discard
    assert "SC-trade_places-1" in t.state.second_chance_discard
    assert t.one(ev.TurnEnded).seat == 1 and t.one(ev.TurnBegan).seat == 2


def test_each_answer_of_a_trade_has_its_deadline_and_on_timeout_the_server_accepts(table):
    t = drawn(table, "SC-trade_places-1", hands={2: ["TW-2"], 1: ["TW-1"]})
    t.play(ev.Choose(target=2), 1)
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[0] == ev.Accepted(seat=2, by_server=True)
    opened = t.pending.deadline_at - 15_000  # the second wait counts from the timeout that opened it
    assert t.pending == Pending(seat=1, kind="respond", deadline_at=opened + 15_000)
    assert t.refused(Timeout(), None, at=t.pending.deadline_at - 1) == "deadline_not_reached"
    t.play(Timeout(), None, at=t.pending.deadline_at)
    assert t.events[:2] == [ev.Accepted(seat=1, by_server=True), ev.PlacesTraded(seat=1, other=2)]
    assert "TW-1" in t.seat(1).hand and "TW-2" in t.seat(2).hand  # the server plays no Talk card; hands stay put


def test_version_1_trade_places_asks_only_the_named_player(table):
    """Games recorded under rules version 1 replay as they were decided: the drawer was not asked."""
    t = drawn(table, "SC-trade_places-1", hands={1: ["TW-1"]}, rules_version=1)
    t.play(ev.Choose(target=2), 1)
    t.play(ev.Accept(), 2)
    assert t.types()[:3] == [ev.Accepted, ev.PlacesTraded, ev.ActionResolved]
    assert "TW-1" in t.seat(1).hand  # the drawer's Talk card was never offered; it stays with the seat


def next_person(seats: int, drawer: int, named: int) -> tuple[int, int]:
    """Where the next turn goes after ``drawer`` traded with ``named``: (the seat, the seat that person sat in before).
    The person who would have played next had nobody moved sits at the seat after the drawer's old seat — and if that
    player was the one named, they play next, now from the drawer's old seat."""
    after = (drawer + 1) % seats
    return (drawer if named == after else after), after


@pytest.mark.parametrize(
    ("seats", "drawer", "named"),
    [
        (2, 1, 0), (2, 0, 1),  # two seats: the named player is always the next
        (3, 1, 2), (3, 1, 0),  # named is next / named sits on the drawer's right
        (4, 1, 3), (4, 3, 0), (4, 2, 3),  # further round; wrapping past seat 0
        (5, 1, 2), (5, 4, 2), (6, 5, 0), (8, 1, 2), (8, 7, 0), (8, 2, 6),
    ],
)  # fmt: skip
def test_after_a_trade_the_next_turn_goes_to_who_would_have_played_next_had_nobody_moved(table, seats, drawer, named):
    t = table(seats, turn=drawer, phase="after_main", second_chance=["SC-trade_places-1"])
    t.play(ev.DrawSecondChance(), drawer)
    players = [st.player for st in t.state.seats]
    traded(t, named, drawer)
    seat, before = next_person(seats, drawer, named)
    assert t.one(ev.TurnEnded) == ev.TurnEnded(seat=drawer)
    assert t.one(ev.TurnBegan).seat == seat == t.state.turn_seat
    assert t.state.seats[seat].player == players[before]
    assert t.state.seats[named].player == players[drawer]  # the drawer now plays when the named seat's turn comes


def test_after_trading_with_the_player_on_the_left_the_drawer_plays_right_after_them(table):
    """Only the next turn is moved: then play passes seat by seat again, to the drawer in the named player's seat."""
    t = drawn(table, "SC-trade_places-2", seats=3)
    drawer, left = t.state.seats[1].player, t.state.seats[2].player
    traded(t, 2)
    assert t.state.turn_seat == 1 and t.state.seats[1].player == left
    t.play(ev.Discard(card=t.seat(1).hand[0]), 1)
    t.play(ev.EndTurn(), 1)
    assert t.one(ev.TurnBegan).seat == 2 and t.state.seats[2].player == drawer


# --- the meter ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "meter", "after"),
    [
        ("SC-add_20-1", 0, 20), ("SC-add_20-2", 30, 50), ("SC-add_20-3", 50, 60),
        ("SC-add_40-1", 10, 50), ("SC-add_40-2", 30, 60),
        ("SC-set_60-1", 0, 60), ("SC-set_60-2", 20, 60),
    ],
)  # fmt: skip
def test_a_second_chance_card_adds_minutes_up_to_60_with_no_one_to_ask(table, card, meter, after):
    t = drawn(table, card, meters={1: meter})
    assert t.types()[:3] == [ev.SecondChanceDrawn, ev.MeterSet, ev.ActionResolved]
    assert t.one(ev.MeterSet) == ev.MeterSet(seat=1, meter=after, cause=card)
    assert t.seat(1).meter == after
    assert_turn_ended(t)


@pytest.mark.parametrize("card", ["SC-add_20-1", "SC-add_40-1", "SC-set_60-1"])
def test_adding_minutes_to_a_full_meter_has_no_effect(table, card):
    t = drawn(table, card, meters={1: 60})
    assert t.none(ev.MeterSet) and t.seat(1).meter == 60
    assert_turn_ended(t)


@pytest.mark.parametrize(("meter", "after"), [(60, 40), (30, 10), (20, 0), (10, 0)])
def test_minus_20_takes_20_minutes_off_the_drawers_meter_floored_at_0(table, meter, after):
    t = drawn(table, "SC-minus_20-1", meters={1: meter})
    assert t.one(ev.ResponseAwaited).seat == 1  # it takes minutes from the drawer: the drawer may talk out
    t.play(ev.Accept(), 1)
    assert t.one(ev.MeterSet) == ev.MeterSet(seat=1, meter=after, cause="SC-minus_20-1")
    assert t.seat(1).meter == after
    assert_turn_ended(t)


@pytest.mark.parametrize("meter", [10, 60])
def test_violation_sends_the_drawers_meter_to_0(table, meter):
    t = drawn(table, "SC-violation-1", meters={1: meter})
    assert t.one(ev.ResponseAwaited).seat == 1
    t.play(ev.Accept(), 1)
    assert t.one(ev.MeterSet) == ev.MeterSet(seat=1, meter=0, cause="SC-violation-1")
    assert_turn_ended(t)


@pytest.mark.parametrize("card", ["SC-minus_20-2", "SC-violation-2"])
def test_taking_minutes_off_an_empty_meter_has_no_effect_and_asks_no_one(table, card):
    t = drawn(table, card, meters={1: 0})
    assert t.none(ev.ResponseAwaited) and t.none(ev.MeterSet)
    assert t.types()[:3] == [ev.SecondChanceDrawn, ev.ActionResolved, ev.TurnEnded]


def test_all_minus_20_asks_each_opponent_in_seat_order_from_the_drawers_left(table):
    """An effect on several players asks them one at a time, in seat order from the drawer's left."""
    t = drawn(table, "SC-all_minus_20-1", seats=4, meters={0: 10, 1: 60, 2: 50, 3: 30})
    asked = []
    for expected in (2, 3, 0):
        assert t.pending.kind == "respond" and t.pending.seat == expected
        asked.append(t.pending.seat)
        t.play(ev.Accept(), expected)
        assert t.one(ev.MeterSet).seat == expected
    assert asked == [2, 3, 0]
    assert [st.meter for st in t.state.seats] == [0, 60, 30, 10]  # every opponent, never the drawer
    assert_turn_ended(t)


def test_all_minus_20_skips_opponents_whose_meter_is_already_at_violation(table):
    t = drawn(table, "SC-all_minus_20-2", seats=4, meters={0: 20, 2: 0, 3: 40})
    assert t.pending.seat == 3
    t.play(ev.Accept(), 3)
    assert t.pending.seat == 0
    t.play(ev.Accept(), 0)
    assert [st.meter for st in t.state.seats] == [0, 0, 0, 20]


def test_all_minus_20_has_no_effect_when_every_opponent_is_at_violation(table):
    t = drawn(table, "SC-all_minus_20-1", meters={1: 40})
    assert t.none(ev.ResponseAwaited) and t.none(ev.MeterSet)
    assert_turn_ended(t)


# --- draw two ---------------------------------------------------------------------------------------


def test_draw_2_draws_two_playing_cards_now_and_the_hand_may_exceed_six(table):
    hand = ["M20-1", "M20-2", "M20-3", "M20-4", "M20-5", "M20-6"]
    t = drawn(table, "SC-draw_2-1", hands={1: hand}, deck=["P60-1", "P60-2", "P60-3"])
    assert t.all(ev.CardsDrawn)[0] == ev.CardsDrawn(
        seat=1, count=2, reason="second_chance", secret=ev.CardsSecret(cards=("P60-1", "P60-2"))
    )
    assert t.seat(1).hand == (*hand, "P60-1", "P60-2")
    assert len(t.seat(1).hand) == 8
    assert_turn_ended(t)


def test_draw_2_draws_from_the_reshuffled_discards_when_the_deck_runs_short(table):
    t = drawn(table, "SC-draw_2-2", deck=["P60-1"], discard=["M60-1", "M60-2"], rest_to=0)
    kinds = t.types()
    assert kinds[:4] == [ev.SecondChanceDrawn, ev.DeckReshuffled, ev.CardsDrawn, ev.ActionResolved]
    order = rng.shuffle(t.state.seed, "reshuffle:playing:1", ["M60-1", "M60-2"])
    assert t.seat(1).hand == ("P60-1", order[0])


def test_draw_2_with_nothing_left_to_draw_still_resolves(table):
    t = drawn(table, "SC-draw_2-1", deck=[], discard=[], rest_to=0)
    assert t.all(ev.CardsDrawn)[0] == ev.CardsDrawn(seat=1, count=0, reason="second_chance", secret=ev.CardsSecret(cards=()))
    assert_turn_ended(t)
