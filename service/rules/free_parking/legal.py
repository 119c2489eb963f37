"""``legal_commands``: exactly what a seat may send now — every listed command is accepted, and no other is.

``resign`` is listed for every seat still in a game being played, on turn or not, even while the game waits on
another seat (RULES.md §1 "Resigning"): it is always the last entry."""

from __future__ import annotations

from itertools import combinations

import msgspec

from service.events import free_parking as ev

from . import cards
from .state import State


def legal_commands(s: State, seat: int) -> list[msgspec.Struct]:
    if s.phase not in ("main", "after_main") or not 0 <= seat < s.n or s.seats[seat].forfeited:
        return []
    hand = s.seats[seat].hand
    p = s.pending
    if p is not None:
        if p.seat != seat:
            return [ev.Resign()]
        if p.kind == "respond":
            talks = (ev.TalkOut(card=c) for c in hand if cards.kind_of(c) == "talk_your_way_out")
            return [ev.Accept(), *talks, ev.Resign()]
        return [*(ev.Choose(**{p.kind: o}) for o in p.options), ev.Resign()]
    out: list[msgspec.Struct] = []
    if seat == s.turn_seat:
        out += _main_plays(s, seat) if s.phase == "main" else []
        if s.phase == "after_main" or not hand:
            if s.second_chance or s.second_chance_discard:
                out.append(ev.DrawSecondChance())
            out.append(ev.EndTurn())
    out += _officer_jones(s, seat)
    out.append(ev.Resign())  # at any moment the seat is still in, last: a bot never picks it (service/bots)
    return out


def _main_plays(s: State, seat: int) -> list[msgspec.Struct]:
    me = s.seats[seat]
    by_kind: dict[str, list[str]] = {}
    for c in me.hand:
        by_kind.setdefault(cards.kind_of(c), []).append(c)
    points = by_kind.get("point", [])
    out: list[msgspec.Struct] = [ev.FeedMeter(card=c) for c in by_kind.get("feed_meter", [])]
    out += [ev.RunErrand(card=c) for c in points if cards.value_of(c) <= me.meter]
    out += [ev.FreeParking(card=f, errand=p) for f in by_kind.get("free_parking", []) for p in points]
    out += [ev.TimeExpires(card=c, target=t) for c in by_kind.get("time_expires", []) for t in s.opponents(seat)]
    out += [ev.SwapThree(cards=trio) for trio in combinations(me.hand, 3)] if swap_draws(s) else []
    out += [ev.Discard(card=c) for c in me.hand]
    return out


def swap_draws(s: State) -> bool:
    """Whether swap three may be played: from rules version 2 only when at least one new card can be drawn (from the
    deck, or the discard pile reshuffled); version 1 offered it always, and an empty table handed the hand back."""
    return s.rules_version == 1 or bool(s.deck or s.discard)


def _officer_jones(s: State, seat: int) -> list[msgspec.Struct]:
    jones = [c for c in s.seats[seat].hand if cards.kind_of(c) == "officer_jones"]
    if not jones:
        return []
    targets = [o for o in s.opponents(seat) if s.seats[o].meter == 0 and s.seats[o].points]
    return [ev.OfficerJones(card=c, target=t) for c in jones for t in targets]
