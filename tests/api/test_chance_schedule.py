"""The scheduler's pure decision (issue 31): after an event that opens an out-of-turn chance for a person, a bot at
the table waits ``chance_ms`` instead of ``human_pace_ms`` — and a Monopoly auction a person still bids in goes at
that pace throughout. ``due_at`` over (game, the event's time, the settings, the state before): no clock."""

from __future__ import annotations

from msgspec.structs import replace

from service.api import chances
from service.api.schedule import due_at
from service.events import free_parking as fp
from service.events import monopoly as mono
from tests.api.chance_seeds import PERSON, auction_seed, bot_plays, officer_jones_seed, seated

PACE, CHANCE = 1_000, 4_000
AT = 50_000


def due(game, before, at: int = AT, chance_ms: int = CHANCE) -> int | None:
    return due_at(game, at, 0, PACE, chance_ms=chance_ms, before=before)


def officer_jones_open():
    """The card game just after the bot's Free Parking play opened Officer Jones for the person: (game, state before)."""
    game = seated("free-parking", officer_jones_seed(), ("greedy",))
    before = game.state
    bot_plays(game, AT)
    return game, before


def test_an_officer_jones_the_bot_opened_holds_the_bots_back_for_the_chance_window():
    game, before = officer_jones_open()
    assert any(isinstance(c, fp.OfficerJones) for c in game.rules.legal_commands(game.state, PERSON))
    assert game.state.turn_seat != PERSON
    assert due(game, before) == AT + CHANCE
    assert due(game, before, chance_ms=0) == AT + PACE  # no window set: the ordinary pace
    assert due(game, before, chance_ms=PACE // 2) == AT + PACE  # a window shorter than the pace changes nothing
    assert due(game, game.state) == AT + PACE  # an event after which the chance was already open opened nothing


def test_the_person_taking_the_chance_ends_the_wait():
    game, _ = officer_jones_open()
    jones = next(c for c in game.rules.legal_commands(game.state, PERSON) if isinstance(c, fp.OfficerJones))
    before = game.state
    game.play(jones, PERSON, AT + 10)
    assert game.state.pending is not None and game.state.pending.seat == 1  # the bot's answer is awaited
    assert due(game, before, at=AT + 10) == AT + 10 + PACE  # and comes at the ordinary pace, not the window's end


def test_a_chance_on_the_persons_own_turn_or_at_a_table_of_bots_holds_nothing_back():
    game, before = officer_jones_open()
    while game.state.turn_seat != PERSON:  # the bot plays its turn out: the person's legal is now their turn's
        before = game.state
        bot_plays(game, AT + 1)
    assert any(c not in game.rules.legal_commands(before, PERSON) for c in game.rules.legal_commands(game.state, PERSON))
    assert not chances.holds_back(game, before)
    game, before = officer_jones_open()
    assert due(_all_bots(game), before) == AT  # bots alone play at once, chance or none


def _all_bots(game):
    """``game`` with the person's seat handed to a bot too."""
    seats = tuple(replace(st, player=replace(st.player, bot="greedy")) for st in game.state.seats)
    game.state = replace(game.state, seats=seats)
    return game


def auction_open():
    """Monopoly just after the person declined a property: an auction of all three seats. (game, state before)."""
    game = seated("monopoly", auction_seed(), ("strategic", "strategic"))
    game.play(mono.Roll(), PERSON, 2)
    before = game.state
    game.play(mono.Decline(), PERSON, AT)
    return game, before


def test_an_auction_a_person_bids_in_goes_at_the_chance_pace_bid_after_bid():
    game, before = auction_open()
    assert due(game, before) == AT + CHANCE  # the auction opened: the person may bid
    at, bids = AT, 0
    while True:
        at += CHANCE
        seat, command = bot_plays(game, at)
        assert seat != PERSON
        bids += isinstance(command, mono.Bid)
        if game.state.auction.awaited == (PERSON,):
            break
        assert due(game, None, at=at) == at + CHANCE  # whatever came before: the person is still bidding
    assert bids >= 2
    assert game.state.auction.awaited == (PERSON,)  # the bots are done: the auction waits on the person alone
    assert due(game, None, at=at) == game.state.auction.deadline_at


def test_an_auction_the_person_passed_on_goes_at_the_ordinary_pace():
    game, _ = auction_open()
    before = game.state
    game.play(mono.PassBid(), PERSON, AT + 5)
    assert game.state.auction is not None and PERSON in game.state.auction.passed
    assert due(game, before, at=AT + 5) == AT + 5 + PACE


def test_a_trade_offered_to_the_person_opens_a_chance_and_one_the_person_offered_does_not():
    game, _ = auction_open()
    game.play(mono.PassBid(), PERSON, AT + 5)
    while game.state.auction is not None:
        bot_plays(game, AT + 6)
    before = game.state
    game.play(mono.OfferTrade(to=PERSON, give=mono.Holdings(cash=1)), 1, AT + 7)
    assert chances.holds_back(game, before)  # the person may accept or reject it: an answer they could not give
    before = game.state
    game.play(mono.OfferTrade(to=2, give=mono.Holdings(cash=1)), PERSON, AT + 8)
    assert not chances.holds_back(game, before)  # withdrawing their own offer is no answer to anyone
