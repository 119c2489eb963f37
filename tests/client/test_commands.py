"""What ``act`` refuses to send (client/free_parking_client/commands.py): anything not listed in the view's ``legal``
exactly, and open-ended commands (a bid, a build order, a claim, a trade offer) outside their ``legal_forms`` — read
off a real Monopoly state's ``legal_forms``, so the shapes are the service's."""

from __future__ import annotations

import msgspec
import pytest

from free_parking_client import NotLegal
from free_parking_client.commands import body, check

LEGAL = [{"type": "bid", "amount": 10}, {"type": "pass_bid"}, {"type": "build", "sites": [1]},
         {"type": "claim_buildings", "sites": []}, {"type": "offer_trade", "to": 1, "give": {"cash": 1}},
         {"type": "choose", "target": 0}, {"type": "resign"}]
FORMS = msgspec.json.decode(b'{"bid": {"min": 10, "max": 300}, "build": [1, 3], "claim_buildings": [1, 3],'
                            b' "offer_trade": {"to": [1, 2], "cash": 300, "squares": [5, 6], "jail_cards": ["CH07"],'
                            b' "their_squares": {"1": [11], "2": []}, "their_jail_cards": {"1": [], "2": ["CC01"]}}}')


def legal(command: dict, kind: str = "monopoly") -> None:
    check(kind, 7, LEGAL, FORMS, body(kind, command))


@pytest.mark.parametrize("command", [
    {"type": "pass_bid"}, {"type": "bid", "amount": 300}, {"type": "build", "sites": [3, 1, 1]},
    {"type": "claim_buildings", "sites": [3]},
    {"type": "offer_trade", "to": 2, "give": {"cash": 300, "squares": [6], "jail_cards": []}, "get": {"jail_cards": ["CC01"]}},
    {"type": "offer_trade", "to": 1, "give": {}, "get": {"squares": [11], "cash": 5000}},  # their cash: checked on acceptance
    {"type": "choose", "target": 0, "card": None, "command_id": "mine"},  # a default and transport fields are not the command
])
def test_listed_commands_and_open_ended_ones_within_their_forms_pass(command):
    legal(command, "free-parking" if command["type"] == "choose" else "monopoly")


@pytest.mark.parametrize("command", [
    {"type": "roll"}, {"type": "pass_bid", "extra": 1}, {"type": "bid", "amount": 9}, {"type": "bid", "amount": 301},
    {"type": "bid", "amount": "10"}, {"type": "build", "sites": [2]}, {"type": "build", "sites": []},
    {"type": "claim_buildings", "sites": [5]}, {"type": "offer_trade", "to": 3, "give": {"cash": 1}},
    {"type": "offer_trade", "to": 1, "give": {"cash": 301}}, {"type": "offer_trade", "to": 1, "give": {"squares": [7]}},
    {"type": "offer_trade", "to": 1, "get": {"squares": [12]}}, {"type": "offer_trade", "to": 1, "get": {"jail_cards": ["CC01"]}},
    {"type": "offer_trade", "to": 1, "give": [1]}, {"type": "choose", "target": 1},
])
def test_anything_else_is_refused_with_its_reason(command):
    with pytest.raises(NotLegal) as refused:
        legal(command, "free-parking" if command["type"] == "choose" else "monopoly")
    assert refused.value.version == 7 and refused.value.reason


def test_an_open_ended_command_with_no_form_is_held_to_the_list():
    with pytest.raises(NotLegal, match="not among"):
        check("monopoly", 3, [{"type": "bid", "amount": 10}], None, {"type": "bid", "amount": 11})


def test_the_forms_are_read_as_the_service_writes_them():
    """A real Monopoly table's ``legal`` and ``legal_forms``, encoded as the view sends them: the offer the client lets
    through is one the rules accept, and the ones it refuses the rules refuse too."""
    from service.events import monopoly as ev
    from service.rules.errors import RuleViolation
    from service.rules.monopoly import run
    from service.rules.monopoly.legal import legal_commands, legal_forms
    from tests.rules.monopoly_table import table

    t = table(3, own={0: (1, 3, 5), 1: (39,)}, levels={1: 1, 3: 1}, jail_cards={2: ("CC05",)})
    listed = msgspec.json.decode(msgspec.json.encode(legal_commands(t.state, 0)))
    forms = msgspec.json.decode(msgspec.json.encode(legal_forms(t.state, 0)))
    offer = {"type": "offer_trade", "to": 2, "give": {"cash": 1500, "squares": [5]}, "get": {"jail_cards": ["CC05"]}}
    check("monopoly", 0, listed, forms, offer)
    for wrong in ({**offer, "give": {"squares": [1]}}, {**offer, "get": {"squares": [39]}}):  # houses on 1; 39 is seat 1's
        with pytest.raises(NotLegal):
            check("monopoly", 0, listed, forms, wrong)
        with pytest.raises(RuleViolation):
            run(t.state, msgspec.convert(wrong, ev.OfferTrade), 0, t.now)
    t.play(msgspec.convert(offer, ev.OfferTrade), 0)
