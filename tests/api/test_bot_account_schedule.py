"""A bot account is no person (issue 33): the server's bots at its table wait neither the human pace nor a chance
window for it. The scheduler's pure decision (``schedule.due_at``, ``pace``) on the very tables where a person's
chance holds the bots back (``test_chance_schedule.py``), the person's seat handed to a bot account; and what a seat
records, so that logs from before bot accounts encode, and replay, byte for byte as they did."""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from service.api import chances
from service.api.schedule import due_at, pace
from service.events import free_parking as fp
from service.events import monopoly as mono
from service.events.base import Player, recorded
from tests.api.chance_seeds import PERSON, auction_seed, bot_plays, officer_jones_seed, seated

PACE, CHANCE = 1_000, 4_000
AT = 50_000


def due(game, before, at: int = AT) -> int | None:
    return due_at(game, at, 0, PACE, chance_ms=CHANCE, before=before)


def as_bot_account(game, before):
    """``game`` and the state ``before`` its last event with the person's seat held by a bot account instead."""

    def swap(state):
        seats = list(state.seats)
        seats[PERSON] = replace(seats[PERSON], player=replace(seats[PERSON].player, guest=False, player_id="p_bot",
                                                              account="bot"))
        return replace(state, seats=tuple(seats))

    game.state = swap(game.state)
    return game, swap(before)


def test_an_officer_jones_opened_for_a_bot_account_holds_no_bot_back():
    game = seated("free-parking", officer_jones_seed(), ("greedy",))
    before = game.state
    bot_plays(game, AT)
    assert due(game, before) == AT + CHANCE  # a person here: the window
    game, before = as_bot_account(game, before)
    assert any(isinstance(c, fp.OfficerJones) for c in game.rules.legal_commands(game.state, PERSON))  # same chance
    assert chances.people(game.state) == [] and not chances.holds_back(game, before)
    assert due(game, before) == AT  # neither the window nor the pace: the bot plays on at once


def test_an_auction_a_bot_account_bids_in_goes_at_once():
    game = seated("monopoly", auction_seed(), ("strategic", "strategic"))
    game.play(mono.Roll(), PERSON, 2)
    before = game.state
    game.play(mono.Decline(), PERSON, AT)
    assert due(game, before) == AT + CHANCE
    game, before = as_bot_account(game, before)
    assert PERSON in game.state.auction.bidders
    assert due(game, before) == AT


def test_the_pace_is_a_persons_only_and_the_operators_bot_delay_still_holds():
    class Table:
        def __init__(self, *players):
            self.state = type("S", (), {"seats": [type("Seat", (), {"player": p})() for p in players]})()

    greedy = Player(name="Greedy Gus", player_id="b_1", bot="greedy")
    ann = Player(name="Ann", player_id="p_ann")
    robo = Player(name="Robo", player_id="p_robo", account="bot")
    guest = Player(name="Gil", player_id="g_gil", guest=True)
    assert pace(Table(greedy, ann), 0, PACE) == PACE
    assert pace(Table(greedy, guest), 0, PACE) == PACE  # a guest is a person
    assert pace(Table(greedy, robo), 0, PACE) == 0
    assert pace(Table(greedy, robo), 50, PACE) == 50
    assert pace(Table(greedy, robo, ann), 0, PACE) == PACE  # a person at the table: the pace is theirs


def test_a_seat_records_the_account_only_for_a_bot_account():
    """A person's seat, a guest's and a server bot's encode as before bot accounts: their logs hash and replay alike."""
    person = "".join(["per", "son"])  # equal to the literal, not the same object: as from a token's record
    ann = Player(name="Ann", player_id="p_ann", account=recorded(person))
    assert msgspec.json.encode(ann) == b'{"name":"Ann","player_id":"p_ann"}' and ann.person
    robo = Player(name="Robo", player_id="p_robo", account=recorded("bot"))
    assert msgspec.json.decode(msgspec.json.encode(robo), type=Player) == robo
    assert b'"account":"bot"' in msgspec.json.encode(robo)
    assert [p.shown_account for p in (robo, Player(name="G", bot="greedy"), Player(name="Gil", guest=True))] == [
        "bot", "bot", "person"]
