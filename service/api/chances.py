"""Chances a person at the table can take out of turn, and whether the server's bots hold back for one.

A bot at a person's table moves ``human_pace_ms`` after the event before it. That is time enough to follow the game,
not to take a chance the bot's next move may close: an Officer Jones on a bot whose meter just ran to Violation, a bid
in an auction the bots bid up a dollar a second. So the bots wait ``chance_ms`` instead whenever the event just
appended *opened* such a chance for a person, and in a Monopoly auction a person is still bidding in (``holds_back``).

What opens a chance, per kind, read off its ``legal_commands``:

- the card game: the person's seat has a legal command it did not have before the event, while it is not their turn
  (off turn, with nothing awaited, that is only Officer Jones; an answer they owe holds the bots up anyway);
- Monopoly: the person may give an answer they could not before — a bid or a pass in an auction, a claim in a
  building shortage, an answer to a trade offered to them. Building, selling and mortgages are open to an owner at
  any time and never close with a bot's move, so they open nothing. An auction a person is still in (a bidder who has
  not passed) keeps the bots at that pace for every move, whoever moved last.

The wait is counted from the event that opened the chance and ends with the next event: a person who took it (or any
other event) puts the bots back on the ordinary pace, unless that event opens another chance. Everything here is pure
over the game as it is after the event and as it was before, so the scheduler's decision can be tested without a
clock (``schedule.due_at``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.events import monopoly as mono
from service.rules.resign import playing_on

ANSWERS = (mono.Bid, mono.PassBid, mono.ClaimBuildings, mono.AcceptTrade, mono.RejectTrade)
"""Monopoly's answers: what a seat says when a wait asks it (legal.py's ``_answers``, less withdrawing one's own
trade offer and declaring bankruptcy, which no one else's move offers)."""


def people(s: Any) -> list[int]:
    """The seats where a person sits: not a server bot, nor a bot account (a program needs no time to read the table,
    and takes a chance at once or not at all)."""
    return [i for i, st in enumerate(s.seats) if st.player is not None and st.player.person]


def holds_back(game: Any, before: Any | None) -> bool:
    """Whether the server's bots wait a person's chance now: the last event (``before``: the state before it; ``None``
    when unknown, when only the auction's rule can hold) opened a chance for a person, or a person still bids in an
    auction."""
    s, rules = game.state, game.rules
    seats = people(s)
    if rules.KIND == "monopoly":
        if any(_bidding(s, p) for p in seats):
            return True
        new = _monopoly_opened
    else:
        new = _off_turn_opened
    return before is not None and any(new(rules, before, s, p) for p in seats)


def _bidding(s: Any, seat: int) -> bool:
    """A Monopoly auction is open and ``seat`` is among its bidders and has not passed (the high bidder too)."""
    a = s.auction
    return a is not None and seat in a.bidders and seat not in a.passed


def _fresh(had: list[msgspec.Struct], has: list[msgspec.Struct]) -> bool:
    return any(c not in had for c in has)


def _off_turn_opened(rules: Any, before: Any, after: Any, seat: int) -> bool:
    """The card game's rule (and any kind's but Monopoly's): a legal command ``seat`` did not have, off its turn."""
    if getattr(after, "turn_seat", None) == seat:
        return False
    has = playing_on(rules.legal_commands(after, seat))  # resign is no chance a bot's move could close
    return bool(has) and _fresh(playing_on(rules.legal_commands(before, seat)), has)


def _monopoly_opened(rules: Any, before: Any, after: Any, seat: int) -> bool:
    """Monopoly's rule: an answer ``seat`` may give that it could not give before."""
    has = _answers(rules, after, seat)
    return bool(has) and _fresh(_answers(rules, before, seat), has)


def _answers(rules: Any, s: Any, seat: int) -> list[msgspec.Struct]:
    return [c for c in rules.legal_commands(s, seat) if isinstance(c, ANSWERS)]
