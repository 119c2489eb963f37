"""Monopoly's audit lines: every event in plain words with the board's names, the bank named as such, and the deck
order — the game's only secret — spelled out for a reader allowed it and kept from every seat's record."""

from __future__ import annotations

import typing

import pytest

from service.events import monopoly as ev
from service.events.base import Player
from service.events.common import SeatTaken
from service.rules.monopoly import audit
from service.rules.monopoly.cards import CHANCE, CHEST

EVENTS = typing.get_args(ev.MonopolyEvent)


@pytest.mark.parametrize("event_type", EVENTS, ids=lambda t: t.__struct_config__.tag)
def test_every_event_has_words_of_its_own(event_type):
    assert audit.summary.dispatch(event_type) is not audit.summary.dispatch(object), (
        f"{event_type.__name__} has no summary"
    )


def test_squares_are_named_as_on_the_board_and_the_bank_is_the_bank():
    assert audit.summary(ev.Moved(seat=2, from_=36, to=5, salary=200)) == (
        "seat 2 moves from Chance to Reading Railroad, collecting $200 for passing GO"
    )
    assert (
        audit.summary(ev.Paid(payer=1, payee=3, amount=50, reason="rent", square=39))
        == "seat 1 pays seat 3 $50 (rent on Boardwalk)"
    )
    assert audit.summary(ev.Paid(payer=0, payee=None, amount=75, reason="tax")) == "seat 0 pays the bank $75 (tax)"
    assert audit.summary(ev.Paid(payer=None, payee=0, amount=200, reason="card")) == "the bank pays seat 0 $200 (card)"
    assert audit.summary(ev.WentBankrupt(seat=2, creditor=None)) == "seat 2 goes bankrupt to the bank"
    assert audit.summary(ev.PropertyTransferred(square=11, to=None)) == "St. Charles Place goes to the bank"


def test_buildings_auctions_and_trades_read_as_what_happened():
    assert (
        audit.summary(ev.Built(seat=1, square=37, level=5, price=200))
        == "seat 1 builds on Park Place for $200: a hotel"
    )
    assert audit.summary(ev.BuildingSold(seat=1, square=1, level=2, refund=25)) == (
        "seat 1 sells buildings on Mediterranean Avenue back for $25: 2 houses left"
    )
    assert audit.summary(ev.BuildingsSoldOff(seat=0, squares=(37, 39), levels=(3, 4), refund=300)) == (
        "seat 0 sells buildings back evenly for $300: Park Place 3 houses, Boardwalk 4 houses"
    )
    assert audit.summary(ev.AuctionOpened(lot=24, bidders=(0, 1, 2), deadline_at=1)) == (
        "auction of Illinois Avenue opens to seats 0, 1, 2"
    )
    assert audit.summary(ev.AuctionClosed(lot="house", winner=2, amount=60, square=9)) == (
        "auction of a house won by seat 2 for $60 for Connecticut Avenue"
    )
    assert audit.summary(ev.AuctionClosed(lot=12, winner=None, amount=0)) == "auction of Electric Company closes unsold"
    offer = ev.TradeOffered(
        trade=40,
        seat=0,
        to=3,
        give=ev.Holdings(cash=100, squares=(5,)),
        get=ev.Holdings(jail_cards=("CH08",)),
        deadline_at=1,
    )
    assert (
        audit.summary(offer) == "trade 40: seat 0 offers seat 3 $100, Reading Railroad for Get Out of Jail Free (CH08)"
    )
    assert audit.summary(ev.TradeClosed(trade=40, why="expired")) == "trade 40 expired"


def test_a_card_drawn_says_what_it_does():
    line = audit.summary(ev.CardDrawn(seat=3, deck="chest", card="CC05"))
    assert line.startswith("seat 3 draws Community Chest CC05: Get Out of Jail Free")


def test_the_end_names_the_winner_and_every_seats_worth():
    line = audit.summary(ev.GameEnded(winner=1, reason="max_rounds", worth=(1200, 3400, 0)))
    assert line == "seat 1 wins, the largest worth after the last round; worth seat 0 $1200, seat 1 $3400, seat 2 $0"


def test_the_deck_order_is_spelled_out_for_the_reader_allowed_it_and_no_seat_keeps_it():
    chance, chest = tuple(c.id for c in CHANCE[::-1]), tuple(c.id for c in CHEST)
    started = ev.GameStarted(cash=1500, secret=ev.DeckOrder(chance=chance, chest=chest))
    note = audit.secret_note(started)
    assert note == f"Chance {' '.join(chance)}; Community Chest {' '.join(chest)}"
    assert audit.secret_note(ev.GameStarted(cash=1500)) == ""  # redacted: nothing to say
    assert "CH16" not in audit.summary(started)  # the public line says nothing of the order
    assert audit.secret_note(SeatTaken(seat=0, player=Player(name="Ann"))) == ""
    assert not any(audit.secret_seen_by(started, seat) for seat in range(8))
