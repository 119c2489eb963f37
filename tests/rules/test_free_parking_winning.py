"""RULES.md §1 "Winning" — the moment any player's Point cards total 200 or more, that player wins, on their turn or
not; the seed is revealed right after; from then on every command is refused with ``game_over``."""

from __future__ import annotations

import hashlib

import pytest

from service.events import free_parking as ev
from service.events.common import SeedRevealed, Timeout
from service.rules.free_parking import view

ONE_NINETY = ["P60-1", "P60-2", "P40-1", "P30-1"]  # 190 points down


def assert_won(t, seat: int, points: int) -> None:
    player = t.state.seats[seat].player
    won = t.one(ev.GameWon)
    assert won == ev.GameWon(seat=seat, player=player, points=points)
    assert t.events[-2:] == [won, SeedRevealed(seed=t.state.seed.hex())]  # SeedRevealed follows GameWon
    assert hashlib.sha256(bytes.fromhex(t.events[-1].seed)).hexdigest() == hashlib.sha256(t.state.seed).hexdigest()
    assert t.state.phase == "finished" and t.state.winner == seat
    assert t.none(ev.TurnEnded)  # the game ends at once: no further turn


def test_an_errand_reaching_200_wins_at_once(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ONE_NINETY})
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.types() == [ev.ErrandRun, ev.GameWon, SeedRevealed]
    assert_won(t, 1, 200)


def test_a_total_over_200_wins_too(table):
    t = table(hands={1: ["P60-3"]}, meters={1: 60}, points={1: ONE_NINETY})
    t.play(ev.RunErrand(card="P60-3"), 1)
    assert_won(t, 1, 250)


def test_a_total_under_200_does_not_win(table):
    t = table(hands={1: ["P10-1"]}, meters={1: 10}, points={1: ["P60-1", "P60-2", "P40-1", "P20-1"]})  # 180
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.none(ev.GameWon) and t.state.phase == "after_main" and t.state.winner is None


def test_free_parking_can_score_the_winning_errand(table):
    t = table(hands={1: ["FP-1", "P20-1"]}, meters={1: 0}, points={1: ONE_NINETY})
    t.play(ev.FreeParking(card="FP-1", errand="P20-1"), 1)
    assert_won(t, 1, 210)


def test_a_point_card_taken_by_second_chance_can_win_for_the_drawer(table):
    t = table(phase="after_main", second_chance=["SC-take_point-1"], points={1: ONE_NINETY, 2: ["P10-1"]})
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Accept(), 2)
    assert t.types() == [ev.Accepted, ev.PointCardsFanned, ev.Chosen, ev.PointCardMoved, ev.GameWon, SeedRevealed]
    assert_won(t, 1, 200)
    assert t.none(ev.ActionResolved)


def test_a_point_card_given_away_can_win_for_an_opponent_out_of_turn(table):
    """The winning can happen out of turn: the drawer gives the card that lifts an opponent to 200."""
    t = table(phase="after_main", second_chance=["SC-give_point-1"], points={1: ["P10-1"], 0: ONE_NINETY})
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Accept(), 1)
    t.play(ev.Choose(target=0), 1)
    assert t.one(ev.PointCardMoved) == ev.PointCardMoved(seat=1, card="P10-1", cause="SC-give_point-1", to=0)
    assert_won(t, 0, 200)
    assert t.state.turn_seat == 1  # it was not the winner's turn


def test_the_winner_is_the_player_now_sitting_at_the_seat_after_trading_places(table):
    """Players keep their identity when they trade places; the seat's Point cards now count for its new player."""
    t = table(phase="after_main", second_chance=["SC-trade_places-1"], hands={2: ["P10-1"]}, meters={2: 10}, points={2: ONE_NINETY})
    drawer = t.state.seats[1].player
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Choose(target=2), 1)
    t.play(ev.Accept(), 2)
    t.play(ev.Accept(), 1)  # the drawer's own answer: the trade takes their place too
    assert t.state.seats[2].player == drawer and t.state.turn_seat == 1
    t.play(ev.Discard(card=t.state.seats[1].hand[0]), 1)
    t.play(ev.EndTurn(), 1)
    t.play(ev.RunErrand(card="P10-1"), 2)
    assert t.one(ev.GameWon).player == drawer
    assert_won(t, 2, 200)


# --- after the win ---------------------------------------------------------------------------------


@pytest.fixture
def won(table):
    t = table(
        hands={1: ["P10-1", "M20-1", "TW-1", "FP-1", "P20-1", "TE-1"], 2: ["OJ-1", "TW-2"], 0: ["OJ-2"]},
        meters={1: 10, 0: 0},
        points={1: ONE_NINETY, 0: ["P50-1"]},
    )
    t.play(ev.RunErrand(card="P10-1"), 1)
    assert t.state.phase == "finished"
    return t


@pytest.mark.parametrize(
    ("seat", "command"),
    [
        (1, ev.FeedMeter(card="M20-1")),
        (1, ev.RunErrand(card="P20-1")),
        (1, ev.FreeParking(card="FP-1", errand="P20-1")),
        (1, ev.TimeExpires(card="TE-1", target=2)),
        (1, ev.SwapThree(cards=("M20-1", "TW-1", "FP-1"))),
        (1, ev.Discard(card="M20-1")),
        (1, ev.DrawSecondChance()),
        (1, ev.EndTurn()),
        (2, ev.OfficerJones(card="OJ-1", target=0)),
        (2, ev.TalkOut(card="TW-2")),
        (2, ev.Accept()),
        (2, ev.Choose(target=0)),
        (2, ev.EndTurn()),
        (None, Timeout()),
    ],
)
def test_after_the_win_every_command_is_refused_with_game_over(won, seat, command):
    assert won.refused(command, seat, at=won.at + 10**9) == "game_over"


def test_after_the_win_no_seat_has_a_legal_command_and_every_hand_is_shown(won):
    for seat in range(3):
        assert won.legal(seat) == []
    spectator = view(won.state, None)
    assert spectator.status == "finished" and spectator.winner == 1
    assert spectator.players[2].hand is not None


def test_a_win_in_the_middle_of_an_action_leaves_no_wait_behind(table):
    t = table(phase="after_main", second_chance=["SC-take_point-1"], points={1: ONE_NINETY, 2: ["P10-1", "P20-1"]})
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Accept(), 2)
    t.play(ev.Choose(position=0), 1)
    assert t.state.phase == "finished" and t.pending is None
    assert t.refused(Timeout(), None, at=t.at + 10**9) == "game_over"
