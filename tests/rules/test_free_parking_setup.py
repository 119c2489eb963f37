"""RULES.md §1 — players, decks, setup, the draw to six at a turn's start, and the reshuffle of the playing deck."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from service.events import free_parking as ev
from service.events.base import Player
from service.events.common import Create, SeatTaken, TakeSeat, Timeout
from service.rules import rng
from service.rules.free_parking import cards, legal_commands
from service.rules.free_parking.cards import playing_deck, second_chance_deck


def player(i: int) -> Player:
    return Player(name=f"p{i}")


# --- players and decks ---------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_two_to_four_players_play_with_one_set_of_64_and_32_cards(dealt, seats):
    playing, second = dealt(seats).cards_in_play()
    assert len(playing) == 64 and len(set(playing)) == 64
    assert len(second) == 32 and len(set(second)) == 32
    assert sorted(playing) == sorted(c.id for c in playing_deck(1))


@pytest.mark.parametrize("seats", [5, 6, 7, 8])
def test_five_to_eight_players_combine_two_sets_of_128_and_64_cards(dealt, seats):
    playing, second = dealt(seats).cards_in_play()
    assert len(playing) == 128 and len(set(playing)) == 128
    assert len(second) == 64 and len(set(second)) == 64
    assert "OJ-6" in playing and "SC-trade_places-4" in second  # the second set's copies continue the numbering


@pytest.mark.parametrize("seats", [1, 9])
def test_a_game_has_two_to_eight_seats(seats):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"seats": seats}, ev.FreeParkingConfig)


def test_the_playing_deck_holds_the_counts_of_the_rules_table():
    """Feed 20/30/40/60: 6/8/7/5; Point 10…60: 4/5/5/5/4/3; each Special 3."""
    counts = Counter((c.kind, c.value) for c in playing_deck(1))
    assert counts == {
        ("feed_meter", 20): 6, ("feed_meter", 30): 8, ("feed_meter", 40): 7, ("feed_meter", 60): 5,
        ("point", 10): 4, ("point", 20): 5, ("point", 30): 5, ("point", 40): 5, ("point", 50): 4, ("point", 60): 3,
        ("officer_jones", None): 3, ("talk_your_way_out", None): 3, ("free_parking", None): 3, ("time_expires", None): 3,
    }  # fmt: skip


def test_the_second_chance_deck_holds_the_counts_of_the_rules_table():
    counts = Counter(c.effect for c in second_chance_deck(1))
    assert counts == {
        "take_point": 4, "give_point": 3, "lose_point": 3, "trade_places": 2, "add_20": 4, "add_40": 3,
        "set_60": 2, "minus_20": 4, "violation": 3, "all_minus_20": 2, "draw_2": 2,
    }  # fmt: skip


def test_every_physical_card_has_its_own_id():
    ids = [c.id for c in playing_deck(2)]
    assert len(ids) == len(set(ids)) == 128
    assert cards.card("P30-1") != cards.card("P30-2")
    assert cards.value_of("P30-1") == cards.value_of("P30-2") == 30
    assert (cards.kind_of("M20-1"), cards.kind_of("OJ-1"), cards.kind_of("TW-2")) == ("feed_meter", "officer_jones", "talk_your_way_out")
    assert (cards.kind_of("FP-1"), cards.kind_of("TE-3")) == ("free_parking", "time_expires")
    assert cards.effect_of("SC-take_point-2") == "take_point"


def test_docs_rng_md_states_the_unshuffled_order_the_tie_breaks_follow():
    """The tie-break of the server's default card picks is "the card's place in the unshuffled deck of docs/rng.md":
    that page lists the deck's kinds, values and counts in the code's order, and P30-2 comes before P30-10."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "rng.md").read_text()
    para = text.split("**Unshuffled playing deck**", 1)[1].split("**Unshuffled Second Chance deck**", 1)[0]
    valued = [(int(v), int(n)) for v, n in re.findall(r"(\d+) ×(\d+)", para)]
    assert valued == [(value, count) for _, value, count in cards.PLAYING_DECK if value is not None]
    specials = re.findall(r"([A-Z][A-Za-z ]+?) ×3 \(`([A-Z]+)-", para)
    assert [code for _, code in specials] == ["OJ", "TW", "FP", "TE"]
    order = [c.id for c in playing_deck(2)]
    assert order.index("P30-2") < order.index("P30-10") and "`P30-2` before `P30-10`" in para
    assert cards.lowest_first(["P30-10", "P40-1", "P30-2"]) == ["P30-2", "P30-10", "P40-1"]


# --- setup ---------------------------------------------------------------------------------------


def test_the_game_deals_the_moment_the_last_seat_is_taken(fresh_game):
    t = fresh_game(3)
    assert t.state.phase == "waiting"
    for i in range(2):
        t.play(TakeSeat(player=player(i)), None)
        assert t.types() == [SeatTaken] and t.one(SeatTaken).seat == i
    t.play(TakeSeat(player=player(2)), None)
    assert t.types()[:4] == [SeatTaken, ev.RoundDealt, ev.TurnBegan, ev.CardsDrawn]
    assert t.state.phase == "main"
    assert [st.player.name for st in t.state.seats] == ["p0", "p1", "p2"]


def test_seat_zero_deals_five_cards_each_and_seat_one_plays_first(fresh_game):
    t = fresh_game(4)
    for i in range(4):
        t.play(TakeSeat(player=player(i)), None)
    dealt = t.one(ev.RoundDealt)
    assert (dealt.round, dealt.dealer, dealt.hand_size) == (1, 0, 5)
    assert [len(h) for h in dealt.secret.hands] == [5, 5, 5, 5]
    assert t.one(ev.TurnBegan) == ev.TurnBegan(seat=1, turn=1)
    # seat 1's turn starts with the draw to six; the others keep five
    assert t.one(ev.CardsDrawn).seat == 1 and t.one(ev.CardsDrawn).count == 1
    assert [len(st.hand) for st in t.state.seats] == [5, 6, 5, 5]
    assert t.state.turn_seat == 1


def test_the_deal_shuffles_both_decks_and_deals_one_card_at_a_time_from_the_dealers_left(dealt):
    s = dealt(3).state
    order = rng.shuffle(s.seed, "deal:1:playing", [c.id for c in playing_deck(1)])
    second = rng.shuffle(s.seed, "deal:1:second_chance", [c.id for c in second_chance_deck(1)])
    # dealer 0: seat 1 gets the 1st, 4th, 7th… card; seat 2 the 2nd…; seat 0 (the dealer) the 3rd…
    assert s.seats[1].hand[:5] == tuple(order[0:15:3])
    assert s.seats[2].hand == tuple(order[1:15:3])
    assert s.seats[0].hand == tuple(order[2:15:3])
    assert s.seats[1].hand[5] == order[15]  # then seat 1 draws its sixth
    assert s.deck == tuple(order[16:])
    assert s.second_chance == tuple(second)
    assert s.discard == () and s.second_chance_discard == ()


def test_every_meter_starts_at_violation_with_no_point_cards(dealt):
    s = dealt(4).state
    assert [st.meter for st in s.seats] == [0, 0, 0, 0]
    assert [st.points for st in s.seats] == [()] * 4


def test_game_created_commits_to_the_seed_without_revealing_it(fresh_game):
    t = fresh_game(2)
    created = t.one(ev.GameCreated)
    seed = t.state.seed
    assert created.seed_commitment == hashlib.sha256(seed).hexdigest()
    assert seed.hex() not in msgspec.json.encode(created).decode()


def test_no_play_is_accepted_before_the_deal(fresh_game):
    t = fresh_game(2)
    t.play(TakeSeat(player=player(0)), None)
    assert t.refused(ev.FeedMeter(card="M20-1"), 0) == "game_not_started"
    assert t.refused(ev.OfficerJones(card="OJ-1", target=1), 0) == "game_not_started"
    assert t.refused(ev.Accept(), 0) == "game_not_started"
    assert t.refused(Timeout(), None) == "game_not_started"
    assert legal_commands(t.state, 0) == []


def test_creating_and_seating_are_the_servers_and_a_full_game_takes_no_one_else(fresh_game):
    t = fresh_game(2)
    assert t.refused(Create(), None) == "already_created"
    assert t.refused(TakeSeat(player=player(0)), 0) == "server_only"
    t.play(TakeSeat(player=player(0)), None)
    t.play(TakeSeat(player=player(1)), None)
    assert t.refused(TakeSeat(player=player(2)), None) == "game_full"
    assert t.refused(Create(), 0) == "server_only"


def test_seat_commands_must_come_from_a_seat_and_server_commands_from_the_server(table):
    t = table(hands={1: ["M20-1"]})
    assert t.refused(ev.FeedMeter(card="M20-1"), None) == "seat_only"
    assert t.refused(ev.EndTurn(), None) == "seat_only"
    assert t.refused(ev.Accept(), None) == "seat_only"
    assert t.refused(Timeout(), 1) == "server_only"


@pytest.mark.parametrize("seat", [3, -1, 7])
def test_only_a_seat_of_this_table_may_send_a_command(table, seat):
    t = table(hands={2: ["M20-1"]})
    assert t.refused(ev.Discard(card="M20-1"), seat) == "not_a_seat"
    assert t.legal(seat) == []


def test_a_command_of_another_game_is_refused(table):
    class Roll(msgspec.Struct):
        pass

    assert table().refused(Roll(), 1) == "unknown_command"


# --- a turn starts: the draw to six --------------------------------------------------------------


def test_a_turn_starts_with_the_server_drawing_the_hand_up_to_six(table):
    t = table(
        hands={1: ["M20-1"], 2: ["P10-1", "P20-1"]},
        deck=["M30-1", "M30-2", "M30-3", "M30-4", "M30-5"],
    )
    t.play(ev.Discard(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.types() == [ev.TurnEnded, ev.TurnBegan, ev.CardsDrawn]
    drawn = t.one(ev.CardsDrawn)
    assert (drawn.seat, drawn.count, drawn.reason) == (2, 4, "turn")
    assert drawn.secret.cards == ("M30-1", "M30-2", "M30-3", "M30-4")  # from the top
    assert t.seat(2).hand == ("P10-1", "P20-1", "M30-1", "M30-2", "M30-3", "M30-4")
    assert t.state.deck == ("M30-5",)


def test_a_hand_already_holding_six_or_more_draws_nothing(table):
    eight = ["M20-1", "M20-2", "M20-3", "M20-4", "M20-5", "M20-6", "M30-1", "M30-2"]
    t = table(hands={1: ["M40-1"], 2: eight})
    t.play(ev.Discard(card="M40-1"), 1)
    t.play(ev.EndTurn(), 1)
    assert t.types() == [ev.TurnEnded, ev.TurnBegan]
    assert len(t.seat(2).hand) == 8


def test_play_passes_to_the_next_seat_and_wraps_round_the_table(table):
    t = table(hands={2: ["M20-1"]}, turn=2)
    turn = t.state.turn
    t.play(ev.Discard(card="M20-1"), 2)
    t.play(ev.EndTurn(), 2)
    assert t.one(ev.TurnBegan) == ev.TurnBegan(seat=0, turn=turn + 1)
    assert t.state.turn_seat == 0 and t.state.phase == "main"


def test_an_exhausted_playing_deck_is_replaced_by_the_discard_pile_shuffled(table):
    """If the playing deck is empty, the discard pile is shuffled into a new deck (an event with the new order)."""
    discard = ["M60-1", "P40-1", "OJ-1", "TW-1", "M20-2"]
    t = table(hands={1: ["M20-1"]}, deck=["M30-1"], discard=discard, rest_to=0)
    t.play(ev.Discard(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)  # seat 2 holds nothing: it needs six, the deck has one
    assert t.types() == [ev.TurnEnded, ev.TurnBegan, ev.DeckReshuffled, ev.CardsDrawn]
    shuffled = t.one(ev.DeckReshuffled)
    expected = rng.shuffle(t.state.seed, "reshuffle:playing:1", [*discard, "M20-1"])
    assert (shuffled.deck, shuffled.count, shuffled.reshuffle) == ("playing", 6, 1)
    assert shuffled.secret.order == tuple(expected)
    # the new deck lies under what was left of the old one
    assert t.one(ev.CardsDrawn).secret.cards == ("M30-1", *expected[:5])
    assert t.state.deck == (expected[5],)
    assert t.state.discard == ()
    assert t.state.reshuffles == 1


def test_each_reshuffle_of_the_playing_deck_uses_its_own_stream(table):
    t = table(hands={1: ["M20-1"]}, deck=[], discard=["M60-1", "P40-1"], rest_to=0)
    t.state = msgspec.structs.replace(t.state, reshuffles=1)
    t.play(ev.Discard(card="M20-1"), 1)
    t.play(ev.EndTurn(), 1)
    shuffled = t.one(ev.DeckReshuffled)
    assert shuffled.reshuffle == 2
    assert shuffled.secret.order == tuple(rng.shuffle(t.state.seed, "reshuffle:playing:2", ["M60-1", "P40-1", "M20-1"]))


def test_when_both_piles_are_empty_fewer_cards_are_drawn(table):
    t = table(hands={1: ["M20-1"]}, deck=["M30-1", "M30-2"], discard=[], rest_to=0)
    t.play(ev.FeedMeter(card="M20-1"), 1)
    # the fed card went to the discard pile: deck 2 + discard 1 is all there is for seat 2
    t.play(ev.EndTurn(), 1)
    assert t.one(ev.CardsDrawn).count == 3
    assert len(t.seat(2).hand) == 3
    assert t.state.deck == () and t.state.discard == ()


def test_when_nothing_is_left_to_draw_the_turn_starts_without_a_draw(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, deck=[], discard=[], rest_to=0)
    t.play(ev.RunErrand(card="P10-1"), 1)  # the errand lies on the table: nothing reaches the discard pile
    t.play(ev.EndTurn(), 1)
    assert t.types() == [ev.TurnEnded, ev.TurnBegan]
    assert t.seat(2).hand == ()
    # a player with an empty hand may end the turn without a main play
    t.play(ev.EndTurn(), 2)
    assert t.state.turn_seat == 0
