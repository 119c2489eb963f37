"""The card game's bots answer every wait, the drawer's own answer to a trade of places included (rules version 2),
and the greedy bot spends a Talk card on a trade only when the trade would give away the better seat."""

from __future__ import annotations

import random

import pytest

from service.bots import bot, next_move
from service.events import free_parking as ev
from service.rules import free_parking

NINETY = ["P60-1", "P30-1"]
TWENTY = ["P20-1"]


def trade_awaiting(table, *, drawer_points, named_points, drawer_answers: bool):
    """Seat 1, holding a Talk card, drew Trade Places and named seat 2 (who holds one too); the answer of seat 2 or,
    once it accepted, of the drawer is awaited."""
    t = table(
        phase="after_main", second_chance=["SC-trade_places-1"],
        hands={1: ["TW-1"], 2: ["TW-2"]}, points={1: drawer_points, 2: named_points},
    )  # fmt: skip
    t.play(ev.DrawSecondChance(), 1)
    t.play(ev.Choose(target=2), 1)
    if drawer_answers:
        t.play(ev.Accept(), 2)
    return t


def greedy_answer(t, seat: int):
    return bot("free-parking", "greedy").choose(t.state, seat, t.legal(seat), random.Random(0))


def test_a_greedy_drawer_keeps_the_trade_it_chose_to_gain_by(table):
    """It named a seat with more points: its Talk card stays in hand (for an action against it later)."""
    t = trade_awaiting(table, drawer_points=TWENTY, named_points=NINETY, drawer_answers=True)
    assert greedy_answer(t, 1) == ev.Accept()


def test_a_greedy_drawer_that_is_ahead_talks_its_way_out_of_its_own_trade(table):
    """The trade it drew would hand its better seat over (a server default, or the only opponent): it refuses it."""
    t = trade_awaiting(table, drawer_points=NINETY, named_points=TWENTY, drawer_answers=True)
    assert greedy_answer(t, 1) == ev.TalkOut(card="TW-1")


@pytest.mark.parametrize(("named_points", "answer"), [(NINETY, ev.TalkOut(card="TW-2")), (TWENTY, ev.Accept())])
def test_a_greedy_named_player_talks_out_of_a_trade_only_when_it_holds_the_better_seat(table, named_points, answer):
    drawer_points = TWENTY if named_points == NINETY else NINETY
    t = trade_awaiting(table, drawer_points=drawer_points, named_points=named_points, drawer_answers=False)
    assert greedy_answer(t, 2) == answer


def test_a_greedy_bot_still_talks_out_of_any_other_action_against_it(table):
    t = table(hands={1: ["TE-1"], 2: ["TW-1"]}, meters={2: 40})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert greedy_answer(t, 2) == ev.TalkOut(card="TW-1")


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_both_bots_answer_the_drawers_wait_on_a_trade(table, name):
    t = trade_awaiting(table, drawer_points=TWENTY, named_points=["P20-2"], drawer_answers=True)
    players = [bot("free-parking", name) for _ in range(t.state.n)]
    seat, command = next_move(free_parking, t.state, players, random.Random(1))
    assert seat == 1 and command in t.legal(1)
    t.play(command, seat)
    assert t.action is None and t.state.turn_seat in (1, 2)


def test_every_bot_the_service_seats_has_names_of_its_own():
    """A table of eight of one kind (the expert too) names each bot, never "<kind> bot 1"; no two kinds share a name."""
    from service.bots import BOTS
    from service.bots.names import NAMES, bot_name

    kinds = {name for bots in BOTS.values() for name in bots}
    for kind in kinds:
        taken: list[str] = []
        for _ in range(8):
            taken.append(bot_name(kind, taken))
        assert not any(" bot " in name for name in taken), (kind, taken)
    assert bot_name("expert", []) == "Expert Eve"
    every = [name.casefold() for names in NAMES.values() for name in names]
    assert len(every) == len(set(every))
