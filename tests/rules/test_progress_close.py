"""The idle close counts a game's progress, not a seat's own traffic (rules version 3 of Monopoly and of the card game,
docs/limits.md "Games nobody plays"): the close's ``since`` must be the time of the last event that moved the game on
— a turn, a roll, a main play — so a player who never rolls and offers then withdraws a trade before each idle close
no longer holds the table for ever. Which events move a game on is each kind's ruling (``rules/*/progress.py``); the
time comes from the log alone, so a verifier re-decides the close. Games recorded under older versions, where any event
counted, re-decide as they were played."""

from __future__ import annotations

import pytest

from replays.verify import verify
from service.events import free_parking as fev
from service.events import monopoly as ev
from service.events.base import Player
from service.events.common import Close, Create, TakeSeat, Timeout
from service.rules.engine import Game, export_header, rules_for
from service.rules.errors import RuleViolation

from .conftest import build_table

HOUR, DAY = 3_600_000, 86_400_000
T0 = 1_800_000_000_000
SEED = bytes(range(32))


def monopoly_game(rules_version: int | None = None) -> tuple[Game, list]:
    """Two people at a Monopoly table, no turn clock; seat 0's turn began at ``T0``. With the envelopes so far."""
    game = Game.new("monopoly", "g_progress", rules_for("monopoly").CONFIG(seats=2), SEED, rules_version)
    log = game.play(Create(), None, T0)
    for i in range(2):
        log += game.play(TakeSeat(player=Player(name=f"p{i}", player_id=f"g_{i}", guest=True)), None, T0)
    return game, log


def trade_loop(game: Game, log: list, days: int) -> None:
    """Seat 0, whose turn it is, never rolls: it offers seat 1 a trade and withdraws it, just before each idle close."""
    for k in range(days):
        at = T0 + (k + 1) * (DAY - HOUR)
        offered = game.play(ev.OfferTrade(to=1, give=ev.Holdings(cash=10)), 0, at)
        log += offered + game.play(ev.WithdrawTrade(trade=offered[0].seq), 0, at + 1)


def refused(game: Game, command: Close, at: int) -> str:
    with pytest.raises(RuleViolation) as caught:
        game.decide(command, None, at)
    return caught.value.code


def test_a_trade_offered_and_withdrawn_before_each_close_no_longer_holds_a_monopoly_table():
    game, log = monopoly_game()
    trade_loop(game, log, days=3)
    assert game.last_at > T0 + 2 * DAY and game.progress_at == T0  # three days of trades; the turn began at T0
    assert refused(game, Close(idle_ms=DAY, since=game.last_at), game.last_at + DAY) == "stale_close"
    closed = game.play(Close(idle_ms=DAY, since=T0), None, game.last_at)
    assert [e.type for e in closed] == ["game_closed", "seed_revealed"]
    verdict = verify(export_header(game, with_seed=True), log + closed)  # the log alone says when it last moved on
    assert verdict.ok and verdict.redecided, verdict.summary()


def test_under_version_2_every_event_counted_and_the_loop_held_the_table():
    game, log = monopoly_game(rules_version=2)
    trade_loop(game, log, days=3)
    assert game.progress_at == game.last_at
    assert refused(game, Close(idle_ms=DAY, since=T0), game.last_at) == "stale_close"
    assert refused(game, Close(idle_ms=DAY, since=game.last_at), game.last_at + DAY - 1) == "not_idle"
    closed = game.play(Close(idle_ms=DAY, since=game.last_at), None, game.last_at + DAY)
    verdict = verify(export_header(game, with_seed=True), log + closed)  # recorded so, it replays so
    assert verdict.ok and verdict.redecided, verdict.summary()


def test_a_roll_moves_monopoly_on_and_a_trade_offer_does_not():
    game, _ = monopoly_game()
    game.play(ev.Roll(), 0, T0 + HOUR)
    assert game.progress_at == T0 + HOUR
    while game.state.pending is not None:  # whatever the roll asked (a purchase, an auction) is left to the server
        game.play(Timeout(), None, game.state.pending.deadline_at)
    moved_on = game.progress_at
    game.play(ev.OfferTrade(to=0, give=ev.Holdings(cash=1)), 1, game.last_at + HOUR)
    assert game.progress_at == moved_on and game.last_at > moved_on


def test_the_card_games_interrupts_and_answers_do_not_move_it_on_its_turns_plays_do():
    t = build_table(3, hands={0: ["OJ-1"], 1: ["M20-1"], 2: ["M30-1"]}, points={2: ["P10-1"]}, meters={2: 0})
    before = t.state.progress
    t.play(fev.OfficerJones(card="OJ-1", target=2), 0)
    t.play(fev.Accept(), 2)
    assert t.state.progress == before  # an interrupt and all it asked: seat 1's turn still has not moved
    t.play(fev.FeedMeter(card="M20-1"), 1)
    assert t.state.progress == t.state.version  # the main play of the seat on turn does


def test_under_version_2_the_card_game_counted_every_event():
    hands = {0: ["OJ-1"], 1: ["M20-1"], 2: ["M30-1"]}
    t = build_table(3, hands=hands, points={2: ["P10-1"]}, meters={2: 0}, rules_version=2)
    t.play(fev.OfficerJones(card="OJ-1", target=2), 0)
    assert t.state.progress == t.state.version


def test_a_solitaire_counts_every_move():
    game = Game.new("solitaire", "g_sol", rules_for("solitaire").CONFIG(seats=1), SEED)
    game.play(Create(), None, T0)
    game.play(TakeSeat(player=Player(name="sol", player_id="g_sol", guest=True)), None, T0)
    move = rules_for("solitaire").legal_commands(game.state, 0)[0]
    game.play(move, 0, T0 + HOUR)
    assert game.progress_at == game.last_at == T0 + HOUR
