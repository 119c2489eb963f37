"""Bots for the card game. Both choose only among ``legal_commands``; neither sees anything a seat may not."""

from __future__ import annotations

import random

import msgspec

from service.events import free_parking as ev
from service.rules.free_parking import cards
from service.rules.free_parking.state import State
from service.rules.resign import playing_on


class RandomBot:
    """Any legal command: first a kind of command uniformly, then one of that kind (so twenty ways to swap
    three do not drown one way to feed the meter). Interrupts now and then when it could."""

    name = "random"

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        legal = playing_on(legal)  # bots never resign (RULES.md §4)
        if not legal:
            return None
        if s.pending is None and seat != s.turn_seat and rnd.random() >= 0.3:
            return None
        by_type: dict[type, list[msgspec.Struct]] = {}
        for c in legal:
            by_type.setdefault(type(c), []).append(c)
        return rnd.choice(by_type[rnd.choice(list(by_type))])


class GreedyBot:
    """Scores as fast as it can, protects its points, and strikes at the leader."""

    name = "greedy"

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        legal = playing_on(legal)  # bots never resign (RULES.md §4)
        if not legal:
            return None
        by_type: dict[type, list[msgspec.Struct]] = {}
        for c in legal:
            by_type.setdefault(type(c), []).append(c)
        me = s.seats[seat]
        leader = _leader(s, seat)
        if s.pending is not None:
            return self._answer(s, seat, by_type, leader)
        jones = [c for c in by_type.get(ev.OfficerJones, []) if c.target == leader]
        if jones:
            return jones[0]
        if seat != s.turn_seat:
            return None
        if s.phase == "main" and me.hand:
            return self._main_play(s, seat, by_type, leader)
        if ev.DrawSecondChance in by_type and me.score < 100:
            return by_type[ev.DrawSecondChance][0]
        return by_type[ev.EndTurn][0]

    def _answer(self, s: State, seat: int, by_type: dict, leader: int) -> msgspec.Struct:
        if ev.Accept in by_type:
            talk = by_type.get(ev.TalkOut)
            return talk[0] if talk and _worth_talking_out(s, seat) else by_type[ev.Accept][0]
        choices = by_type[ev.Choose]
        targets = [c for c in choices if c.target is not None]
        if targets:
            return next((c for c in targets if c.target == leader), targets[0])
        return choices[0]  # the lowest card, or the first position

    def _main_play(self, s: State, seat: int, by_type: dict, leader: int) -> msgspec.Struct:
        me = s.seats[seat]
        free = by_type.get(ev.FreeParking, [])
        if free:
            return max(free, key=lambda c: cards.value_of(c.errand))
        errands = by_type.get(ev.RunErrand, [])
        if errands:
            return max(errands, key=lambda c: cards.value_of(c.card))
        expires = [c for c in by_type.get(ev.TimeExpires, []) if s.seats[c.target].meter >= 30]
        if expires:
            return max(expires, key=lambda c: s.seats[c.target].meter)
        feeds = by_type.get(ev.FeedMeter, [])
        wanted = max((cards.value_of(c) for c in me.hand if cards.kind_of(c) == "point"), default=0)
        if feeds and me.meter < max(wanted, 20):
            return max(feeds, key=lambda c: cards.value_of(c.card))
        if feeds and me.meter < cards.METER_MAX:
            return min(feeds, key=lambda c: cards.value_of(c.card))
        keep = ("point", "officer_jones", "talk_your_way_out", "free_parking")
        discards = [c for c in by_type.get(ev.Discard, []) if cards.kind_of(c.card) not in keep]
        if discards:
            return discards[0]
        return min(by_type[ev.Discard], key=lambda c: (cards.kind_of(c.card) == "point", cards.value_of(c.card)))


def _worth_talking_out(s: State, seat: int) -> bool:
    """Any action against it is worth a Talk card, but a trade of places only when it would give away the better
    seat (more points): the drawer chose the trade to gain by it, and keeps it unless the seat it named, by the
    server's default or as the only opponent, holds fewer points than its own; the named player likewise."""
    a = s.action
    if a is None or a.kind != "trade_places" or a.target is None:
        return True
    other = a.target if seat == a.by else a.by
    return s.seats[seat].score > s.seats[other].score


def _leader(s: State, seat: int) -> int:
    return max(s.opponents(seat), key=lambda o: s.seats[o].score)


BOTS = {"random": RandomBot, "greedy": GreedyBot}
