"""The move log's words (engine.log_lines, each kind's ``Log``): names, what a deadline decided and for whom, the
dice that sent someone to jail. The HTTP side (GET /games/{id}/log) is tests/api/test_move_log.py."""

from __future__ import annotations

import hashlib
import random

from service.bots import bot, next_move
from service.events import free_parking as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat, Timeout
from service.rules.engine import Game, audit_lines, log_lines, rules_for
from tests.api.helpers import TIME_EXPIRES_SEED


def seated(kind: str, seed: bytes, names: list[tuple[str, str | None]], **config) -> tuple[Game, list]:
    game = Game.new(kind, "g_log", rules_for(kind).CONFIG(seats=len(names), **config), seed)
    envelopes = game.play(Create(), None, 1)
    for k, (name, as_bot) in enumerate(names):
        envelopes += game.play(TakeSeat(player=Player(name=name, player_id=f"g_{k}", bot=as_bot)), None, 1)
    return game, envelopes


def test_a_deadline_says_what_it_accepted_on_whose_behalf():
    game, envelopes = seated("free-parking", bytes.fromhex(TIME_EXPIRES_SEED()), [("Ann", None), ("Greedy Gus", "greedy")])
    for seat in (1, 0):
        hand = game.state.seats[seat].hand
        envelopes += game.play(ev.FeedMeter(card=next(c for c in hand if c.startswith("M"))), seat, 1)
        envelopes += game.play(ev.EndTurn(), seat, 1)
    te = next(c for c in game.state.seats[1].hand if c.startswith("TE-"))
    envelopes += game.play(ev.TimeExpires(card=te, target=0), 1, 1)
    envelopes += game.play(Timeout(), None, game.state.pending.deadline_at)
    lines = log_lines(game.rules, envelopes, player_id="g_0")
    words = [w for _, _, w, _ in lines]
    assert "Greedy Gus plays Time Expires on Ann" in words
    assert "waiting for Ann to talk their way out of Time Expires from Greedy Gus, or accept" in words
    assert "time ran out: Ann accepted Time Expires from Greedy Gus" in words
    zeroed = next(line for line in lines if line[2].startswith("Ann's meter goes to 0"))
    assert zeroed[3] == "Your meter was set to 0 (Violation): Greedy Gus's Time Expires"
    assert all(n is None for _, _, _, n in log_lines(game.rules, envelopes))  # nobody's notices without a player
    assert any("seat 0 accepts (deadline passed; the server accepted)" in line for line in audit_lines(game.rules, envelopes))


def test_monopoly_dice_say_who_rolled_and_when_the_roll_sent_them_to_jail():
    for i in range(50):
        game, envelopes = seated("monopoly", hashlib.sha256(b"m%d" % i).digest(), [("Ann", None), ("Strategic Stan", "strategic")],
                                 max_rounds=30)
        players, rnd = [bot("monopoly", "strategic") for _ in range(2)], random.Random(1)
        while game.rules.status_of(game.state) != "finished":
            seat, command = next_move(game.rules, game.state, players, rnd)
            envelopes += game.play(command, seat, 2)
        lines = log_lines(game.rules, envelopes, player_id="g_0")
        jailed = [line for line in lines if "sent to jail" in line[2]]
        if jailed:
            break
    else:
        raise AssertionError("no game sent anyone to jail")
    assert all(w.startswith(("Ann rolls", "Strategic Stan rolls")) for _, _, w, _ in jailed), jailed
    rolls = [w for _, _, w, _ in lines if " rolls " in w]
    assert rolls and all(w.startswith(("Ann ", "Strategic Stan ")) for w in rolls)
    assert not any("seat 0" in w or "seat 1" in w for _, _, w, _ in lines if "takes seat" not in w)
    for seq, _, words, notice in lines:
        if words.startswith("Ann goes to jail"):
            assert notice and notice.startswith("You go to jail"), (seq, words, notice)
