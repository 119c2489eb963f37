"""Rent by the board: streets by buildings (double on a bare site of a complete group), railroads by how many the
owner holds, utilities a multiple of the dice. Nothing on a mortgaged property."""

from __future__ import annotations

from typing import Literal

from .board import RAILROAD_RENT, SQUARES, UTILITY_TIMES, group_of
from .state import State

Via = Literal["dice", "card"]


def owns_group(s: State, seat: int, square: int) -> bool:
    return all(s.sites[q].owner == seat for q in group_of(square))


def rent(s: State, square: int, dice_total: int, via: Via = "dice") -> int:
    """What the lander owes the owner of ``square``. ``via`` ``card``: a Chance card sent them there, so a railroad
    charges double and a utility ten times ``dice_total`` (a fresh throw) whatever the owner holds."""
    sq, site = SQUARES[square], s.sites[square]
    if site.owner is None or site.mortgaged:
        return 0
    held = sum(1 for q in group_of(square) if s.sites[q].owner == site.owner)
    if sq.type == "railroad":
        return RAILROAD_RENT[held] * (2 if via == "card" else 1)
    if sq.type == "utility":
        return (10 if via == "card" else UTILITY_TIMES[held]) * dice_total
    if site.level:
        return sq.rent[site.level]
    return sq.rent[0] * (2 if owns_group(s, site.owner, square) else 1)
