"""The two decks (classic US, pre-2008), each card as the effect it has, in this project's own words.

A card is ``(id, effect, text)``; ``effect`` is a tuple the decider matches on: ``("advance", square)`` moves
forward to the square (salary if it passes GO), ``("nearest", kind)`` advances to the next railroad or utility
and charges the card's rent there, ``("back", 3)``, ``("jail",)``, ``("collect", n)`` from the bank,
``("pay", n)`` to the bank, ``("repairs", per_house, per_hotel)``, ``("pay_each", n)``, ``("collect_each", n)``
and ``("keep",)`` for Get Out of Jail Free.
"""

from __future__ import annotations

from typing import NamedTuple


class Card(NamedTuple):
    id: str
    effect: tuple[str | int, ...]
    text: str


CHANCE: tuple[Card, ...] = (
    Card("CH01", ("advance", 0), "Advance to GO, collect $200"),
    Card("CH02", ("advance", 24), "Go on to Illinois Avenue"),
    Card("CH03", ("advance", 11), "Go on to St. Charles Place"),
    Card(
        "CH04",
        ("nearest", "utility"),
        "Go on to the next utility; if it is owned, pay ten times a fresh throw",
    ),
    Card(
        "CH05",
        ("nearest", "railroad"),
        "Go on to the next railroad; if it is owned, pay twice its rent",
    ),
    Card(
        "CH06",
        ("nearest", "railroad"),
        "Go on to the next railroad; if it is owned, pay twice its rent",
    ),
    Card("CH07", ("collect", 50), "The bank pays you a $50 dividend"),
    Card("CH08", ("keep",), "Get Out of Jail Free: keep it until used, or sell it"),
    Card("CH09", ("back", 3), "Step back three squares"),
    Card("CH10", ("jail",), "Straight to jail, without passing GO"),
    Card("CH11", ("repairs", 25, 100), "Repairs: $25 a house, $100 a hotel"),
    Card("CH12", ("pay", 15), "A $15 fine"),
    Card("CH13", ("advance", 5), "Take a ride to Reading Railroad"),
    Card("CH14", ("advance", 39), "Take a walk on Boardwalk"),
    Card("CH15", ("pay_each", 50), "Chairman of the board: pay each player $50"),
    Card("CH16", ("collect", 150), "Your loan matures: collect $150"),
)

CHEST: tuple[Card, ...] = (
    Card("CC01", ("advance", 0), "Advance to GO, collect $200"),
    Card("CC02", ("collect", 200), "A bank error in your favour: collect $200"),
    Card("CC03", ("pay", 50), "The doctor's fee: pay $50"),
    Card("CC04", ("collect", 45), "Stock sold: collect $45"),
    Card("CC05", ("keep",), "Get Out of Jail Free: keep it until used, or sell it"),
    Card("CC06", ("jail",), "Straight to jail, without passing GO"),
    Card("CC07", ("collect_each", 50), "Opera night: every other player pays you $50"),
    Card("CC08", ("collect", 100), "A fund matures: collect $100"),
    Card("CC09", ("collect", 20), "An income tax refund: collect $20"),
    Card("CC10", ("collect", 100), "Life insurance matures: collect $100"),
    Card("CC11", ("pay", 100), "Hospital bill: pay $100"),
    Card("CC12", ("pay", 150), "School fees: pay $150"),
    Card("CC13", ("collect", 25), "A consultancy fee: collect $25"),
    Card("CC14", ("repairs", 40, 115), "Street repairs: $40 a house, $115 a hotel"),
    Card("CC15", ("collect", 10), "Second prize in a beauty contest: collect $10"),
    Card("CC16", ("collect", 100), "An inheritance: collect $100"),
)

CARDS: dict[str, Card] = {c.id: c for c in CHANCE + CHEST}
JAIL_CARDS = ("CH08", "CC05")


def deck_of(card: str) -> str:
    return "chance" if card.startswith("CH") else "chest"
