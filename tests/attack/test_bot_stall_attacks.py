"""A person at a table with server bots holding the bot on turn back for ever (issue 31's pace and chance window).

A bot at a person's table moves ``human_pace_ms`` after the game's *last event*, whoever's it was. In Monopoly a person
off turn may offer a trade and withdraw it at any time; each is an event, so a person who sends one every
``human_pace_ms`` or sooner keeps the bot on turn from ever coming due. The bot's turn has no clock of its own
(``schedule.turn_due``: "the bot plays before it"), so the lobby's turn clock forfeits no one, and the only end is
the idle close a day after the turn began — at a table with a second person, the griefer holds them there all day.
Pure: ``due_at`` over the game and its last event's time, as the runner records it.
"""

from __future__ import annotations

import pytest

from service.api.schedule import due_at
from service.events import monopoly as mono
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.rules.engine import Game, rules_for

PACE, CHANCE = 1_000, 4_000
BOT, PERSON = 0, 1


def table() -> Game:
    """Monopoly with the lobby's 120 s turn clock: a strategic bot in seat 0, on turn, and Ann in seat 1."""
    game = Game.new("monopoly", "g_stall", rules_for("monopoly").CONFIG(seats=2, turn_seconds=120), bytes(32))
    game.play(Create(), None, 1)
    game.play(TakeSeat(player=Player(name="Bot", player_id="g_bot", bot="strategic", bot_version=1)), None, 1)
    game.play(TakeSeat(player=Player(name="Ann", player_id="g_ann", guest=True)), None, 1)
    assert game.state.turn_seat == BOT and game.state.step == "roll"
    return game


@pytest.mark.xfail(strict=True, reason="the bots' pace counts from the game's last event, a person's trade offer or "
                   "withdrawal too: a person sending one a second holds the bot on turn back until the idle close")
def test_a_persons_own_trade_traffic_does_not_hold_the_bot_on_turn_back_for_ever():
    game = table()
    at, due = 1, due_at(game, 1, 0, PACE, chance_ms=CHANCE)
    for _ in range(200):  # 200 offers and withdrawals, each sooner than the pace: six minutes of a 120 s turn
        at += PACE - 100
        if due is not None and due <= at:
            return  # the bot came due before Ann's next command: it rolls
        before = game.state
        game.play(mono.OfferTrade(to=BOT, give=mono.Holdings(cash=1)), PERSON, at)
        due = due_at(game, at, 0, PACE, chance_ms=CHANCE, before=before)
        at += PACE - 100
        if due is not None and due <= at:
            return
        before = game.state
        game.play(mono.WithdrawTrade(trade=game.state.trades[-1].id), PERSON, at)
        due = due_at(game, at, 0, PACE, chance_ms=CHANCE, before=before)
    assert game.state.turn_seat == BOT and game.state.step == "roll"
    raise AssertionError(f"the bot on turn never came due in {at // 1000} s of Ann's trade offers and withdrawals")
