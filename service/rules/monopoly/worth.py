"""What a player is worth, in the two senses RULES.md §3 uses.

Buildings count at cost: a house at its group's house price, a hotel at five (the four houses it replaced and
itself).
"""

from __future__ import annotations

from .board import SQUARES
from .state import State


def buildings_cost(s: State, seat: int) -> int:
    return sum(SQUARES[q].house_cost * site.level for q, site in enumerate(s.sites) if site.owner == seat)


def tax_worth(s: State, seat: int) -> int:
    """For Income Tax: cash + the printed price of every property, mortgaged or not + buildings at cost."""
    printed = sum(SQUARES[q].price for q, site in enumerate(s.sites) if site.owner == seat)
    return s.seats[seat].cash + printed + buildings_cost(s, seat)


def final_worth(s: State, seat: int) -> int:
    """For the end of a timed game: cash + printed price of unmortgaged property + mortgage value of mortgaged
    property + buildings at cost."""
    held = sum(
        SQUARES[q].mortgage_value if site.mortgaged else SQUARES[q].price
        for q, site in enumerate(s.sites)
        if site.owner == seat
    )
    return s.seats[seat].cash + held + buildings_cost(s, seat)
