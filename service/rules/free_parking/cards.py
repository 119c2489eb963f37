"""The deck tables of the card game: the one place where counts and values live (RULES.md §1).

The rule text names the kinds and values of cards but not how many of each; the counts below are
the service's ruling. Every physical card has its own id. A deck's unshuffled order is the order
of these tables, copies numbered from 1 (set two continues the numbering), and a shuffle starts
from that order — see ``docs/rng.md``.
"""

from __future__ import annotations

from typing import Final

import msgspec

# (kind, value, count): 26 Feed the Meter, 26 Point, 12 Special = 64 cards a set.
PLAYING_DECK: Final = (
    ("feed_meter", 20, 6),
    ("feed_meter", 30, 8),
    ("feed_meter", 40, 7),
    ("feed_meter", 60, 5),
    ("point", 10, 4),
    ("point", 20, 5),
    ("point", 30, 5),
    ("point", 40, 5),
    ("point", 50, 4),
    ("point", 60, 3),
    ("officer_jones", None, 3),
    ("talk_your_way_out", None, 3),
    ("free_parking", None, 3),
    ("time_expires", None, 3),
)

# (effect, count): 32 Second Chance cards a set.
SECOND_CHANCE_DECK: Final = (
    ("take_point", 4),
    ("give_point", 3),
    ("lose_point", 3),
    ("trade_places", 2),
    ("add_20", 4),
    ("add_40", 3),
    ("set_60", 2),
    ("minus_20", 4),
    ("violation", 3),
    ("all_minus_20", 2),
    ("draw_2", 2),
)

METER_MAX: Final = 60
HAND_SIZE: Final = 6
DEAL_SIZE: Final = 5
SWAP_SIZE: Final = 3
WINNING_POINTS: Final = 200
ROUND_POINTS: Final = 150  # tournament mode: a round ends when a seat's Point cards reach this
ROUND_BONUS: Final = 25  # ... and that player scores this on top
TOURNAMENT_POINTS: Final = 300  # a cumulative total that ends the tournament after its round
SECOND_CHANCE_DRAWS: Final = 2
SECOND_CHANCE_MINUTES: Final = 20

_CODES: Final = {
    "feed_meter": "M",
    "point": "P",
    "officer_jones": "OJ",
    "talk_your_way_out": "TW",
    "free_parking": "FP",
    "time_expires": "TE",
}


class Card(msgspec.Struct, frozen=True):
    """A playing card as every view shows it."""

    id: str
    kind: str
    value: int | None = None


class SecondChanceCard(msgspec.Struct, frozen=True):
    id: str
    effect: str


def sets_for(seats: int) -> int:
    """2–4 players use one set; 5–8 combine two."""
    return 1 if seats <= 4 else 2


def playing_deck(sets: int) -> tuple[Card, ...]:
    """Every playing card of ``sets`` sets, in unshuffled order: e.g. ``M20-1``, ``P50-4``, ``OJ-2``."""
    cards = []
    for kind, value, count in PLAYING_DECK:
        for n in range(1, count * sets + 1):
            code = _CODES[kind] + (str(value) if value is not None else "")
            cards.append(Card(f"{code}-{n}", kind, value))
    return tuple(cards)


def second_chance_deck(sets: int) -> tuple[SecondChanceCard, ...]:
    """Every Second Chance card of ``sets`` sets, in unshuffled order: e.g. ``SC-take_point-3``."""
    return tuple(
        SecondChanceCard(f"SC-{effect}-{n}", effect)
        for effect, count in SECOND_CHANCE_DECK
        for n in range(1, count * sets + 1)
    )


_ALL_PLAYING: Final = {c.id: c for c in playing_deck(2)}
_ALL_SECOND_CHANCE: Final = {c.id: c for c in second_chance_deck(2)}
_ORDER: Final = {cid: i for i, cid in enumerate(_ALL_PLAYING)}


def card(card_id: str) -> Card:
    return _ALL_PLAYING[card_id]


def is_card(card_id: str) -> bool:
    return card_id in _ALL_PLAYING


def effect_of(sc_id: str) -> str:
    return _ALL_SECOND_CHANCE[sc_id].effect


def value_of(card_id: str) -> int:
    value = _ALL_PLAYING[card_id].value
    return value if value is not None else 0


def kind_of(card_id: str) -> str:
    return _ALL_PLAYING[card_id].kind


def lowest_first(card_ids: tuple[str, ...] | list[str]) -> list[str]:
    """Cards by value, ties by their place in the unshuffled deck: the order the server's default picks use."""
    return sorted(card_ids, key=lambda c: (value_of(c), _ORDER[c]))
