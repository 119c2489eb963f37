"""Worlds a seat cannot tell apart: the card game's hidden cards dealt afresh, consistently with what one seat sees.

A seat sees its own hand, every meter and Point card, both discard piles, the card of an action in play, and how many
cards each other hand and each deck holds (``view``). Everything else — the other hands, both deck orders, the order
of a fan of Point cards, and the seed that would shuffle the discard pile back in — is hidden. ``sample`` deals the
cards the seat has not seen into those places at random (its own ``random.Random``), and gives the world a seed of
its own: a search over sampled worlds can never learn a hidden card, because it is never shown one. The sample is
computed from the seat's knowledge alone, so two tables the seat sees alike give the same worlds for the same
``rnd`` — ``tests/bots/test_expert.py`` checks exactly that.

The seat's knowledge is its view of the table now, not the whole log: the cards of a discard pile shuffled back in
under the deck are dealt anywhere among the unseen places, not only to the deck's bottom. That forgets a little, and
never adds knowledge the seat lacks.
"""

from __future__ import annotations

import random
from functools import cache

from msgspec.structs import replace

from service.rules.free_parking import cards
from service.rules.free_parking.state import State


@cache
def _playing(sets: int) -> frozenset[str]:
    return frozenset(c.id for c in cards.playing_deck(sets))


@cache
def _second_chance(sets: int) -> frozenset[str]:
    return frozenset(c.id for c in cards.second_chance_deck(sets))


def unseen(s: State, seat: int) -> tuple[list[str], list[str]]:
    """The playing cards and Second Chance cards ``seat`` has not seen, each sorted by id (so the list depends on
    what the seat knows, never on where the hidden cards are)."""
    sets = cards.sets_for(s.n)
    seen = set(s.seats[seat].hand) | set(s.discard) | {c for st in s.seats for c in st.points}
    seen_sc = set(s.second_chance_discard)
    if s.action is not None:
        (seen_sc if s.action.card.startswith("SC-") else seen).add(s.action.card)
    return sorted(_playing(sets) - seen), sorted(_second_chance(sets) - seen_sc)


def sample(s: State, seat: int, rnd: random.Random, *, hands_known: bool = False) -> State:
    """A world ``seat`` cannot tell from ``s``: the unseen cards dealt to the other hands and the deck (each keeps
    its size), the unseen Second Chance cards shuffled into their deck, a fan of Point cards in a new order, and a
    new seed for every shuffle still to come.

    ``hands_known`` (for measurement only: no seat knows the other hands) keeps every hand as it is and hides only
    what no player could know, the decks' orders and the fan's: what the expert would win seeing the hands."""
    if hands_known:
        deck, chances = sorted(s.deck), sorted(s.second_chance)
        rnd.shuffle(deck)
        rnd.shuffle(chances)
        return _dealt(s, s.seats, deck, chances, rnd)
    pool, pool_sc = unseen(s, seat)
    others = [i for i in range(s.n) if i != seat]
    wanted = sum(len(s.seats[i].hand) for i in others) + len(s.deck)
    if len(pool) != wanted or len(pool_sc) != len(s.second_chance):
        raise ValueError(f"seat {seat}'s unseen cards ({len(pool)}, {len(pool_sc)}) do not fill the hidden places")
    rnd.shuffle(pool)
    rnd.shuffle(pool_sc)
    seats = list(s.seats)
    at = 0
    for i in others:
        size = len(seats[i].hand)
        seats[i] = replace(seats[i], hand=tuple(pool[at : at + size]))
        at += size
    return _dealt(s, tuple(seats), pool[at:], pool_sc, rnd)


def _dealt(s: State, seats: tuple, deck: list[str], chances: list[str], rnd: random.Random) -> State:
    """``s`` with these hands and deck orders, its fan of Point cards shuffled and a new seed."""
    action = s.action
    if action is not None and action.fan:
        fan = sorted(action.fan)  # never the true order shuffled: that order could be read back out of the world
        rnd.shuffle(fan)
        action = replace(action, fan=tuple(fan))
    return replace(
        s,
        seats=seats,
        deck=tuple(deck),
        second_chance=tuple(chances),
        action=action,
        seed=rnd.randbytes(32),
        seeding="legacy",
        game_seed=None,
    )
