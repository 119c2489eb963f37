"""The card game's expert bot: a determinised Monte Carlo search over worlds its seat cannot tell apart.

Each decision deals the cards its seat has not seen into a world (``worlds.sample``), plays every candidate move in
that world with the real ``decide``/``evolve``, and plays the game on from there for two turns (its own seat by its
rule of thumb, the others as greedy bots); the table reached is judged by a chance of winning fitted to bot games
(``value.chances``), and the candidate whose worlds end best on average is played, where it beats the rule of
thumb's move on evidence. Every candidate meets the same worlds
and the same continuations (common random numbers), so the comparison between two moves is not drowned by the luck
of the deal — which in this game is most of what happens.

The search is bounded by *nodes* (commands decided), never by time, so a seed and a budget give the same game on
any machine. It reads the true table only through ``worlds.sample``: ``omniscient=True`` skips that and searches
the true world, a ceiling for measurement that no table may seat (``python -m service bot-league``), and
``open_hands=True`` samples only the decks' orders, seeing every hand: what of that ceiling is knowing the hands.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable

import msgspec

import service.rules.free_parking as rules
from service.events import free_parking as ev
from service.rules.free_parking import cards
from service.rules.free_parking.state import State
from service.rules.resign import playing_on

from . import worlds
from .free_parking import GreedyBot
from .turns import next_move
from .value import chances

NODES = 800
"""The default budget: commands decided per decision (``bench`` keeps a server bot's decision p99 within 50 ms)."""
HORIZON = 2
"""Turns each continuation plays before the table is judged (``value``)."""
MIN_WORLDS = 4
SURE = 2.0
"""Standard errors by which a move must beat the rule of thumb's before the search plays it instead (``_pick``)."""
WORLD_NODES = 4
"""What dealing a world costs, in nodes: a budget buys fewer worlds when each continuation is short."""


class RuleOfThumb(GreedyBot):
    """The greedy bot's play, but drawing a Second Chance card exactly when not ahead (and never when ahead): the
    deck's catch-up cards (Trade Places, Take a Point) favour whoever trails. Measured by simulation: 53.3% of 10,000
    heads-up games against greedy (the greedy bot draws below 100 points; drawing always wins 50.6%). It is the
    expert's move unless its search finds better, and its own play in the search's continuations."""

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        c = super().choose(s, seat, legal, rnd)
        if isinstance(c, (ev.EndTurn, ev.DrawSecondChance)) and ev.DrawSecondChance() in legal and ev.EndTurn() in legal:
            lead = s.seats[seat].score - max(s.seats[o].score for o in s.opponents(seat))
            return ev.DrawSecondChance() if lead <= 0 else ev.EndTurn()
        return c


class ExpertBot:
    name = "expert"

    def __init__(
        self, nodes: int = NODES, *, horizon: int = HORIZON, omniscient: bool = False, open_hands: bool = False
    ) -> None:
        self.nodes, self.horizon, self.omniscient, self.open_hands = nodes, horizon, omniscient, open_hands
        self._greedy, self._thumb = GreedyBot(), RuleOfThumb()

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        options = candidates(s, seat, legal)
        if len(options) <= 1:
            return options[0] if options else None
        me = s.seats[seat].player
        values: list[list[float]] = [[] for _ in options]
        spent = 0
        while spent < self.nodes or len(values[0]) < MIN_WORLDS:
            world_seed = rnd.getrandbits(64)
            world = s if self.omniscient else worlds.sample(s, seat, random.Random(world_seed), hands_known=self.open_hands)
            spent += WORLD_NODES
            for k, option in enumerate(options):
                value, used = self._continue(world, seat, option, me, random.Random(world_seed))
                values[k].append(value)
                spent += used
        return options[self._pick(s, seat, legal, options, values)]

    def _pick(self, s: State, seat: int, legal: list, options: list, values: list[list[float]]) -> int:
        """The best candidate by its mean — unless it beats the rule of thumb's move by less than ``SURE`` standard
        errors of their paired differences: the search departs from the sound rule of thumb only on evidence, so
        that the luck of a few worlds does not choose for it."""
        means = [sum(v) / len(v) for v in values]
        best = max(range(len(options)), key=means.__getitem__)
        usual = self._thumb.choose(s, seat, legal, random.Random(0))
        key = None if usual is None else _same(usual)
        base = next((k for k, o in enumerate(options) if (None if o is None else _same(o)) == key), None)
        if base is None or base == best:
            return best
        diffs = [a - b for a, b in zip(values[best], values[base], strict=True)]
        mean = sum(diffs) / len(diffs)
        spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1) / len(diffs))
        return best if mean > SURE * spread else base

    def _continue(self, s: State, seat: int, option, me, rnd: random.Random) -> tuple[float, int]:
        """Play ``option`` (``None``: let the moment pass) and go on for ``horizon`` turns, ``me`` by the rule of thumb
        and the others as greedy bots; the table's value for ``me``, and the commands decided."""
        used = 0
        if option is None:
            move = _next(s, self._players(s, me), rnd, skip=seat)
            if move is None:
                return value(s, me), 0
            seat, option = move
        _, s = rules.run(s, option, seat, 0)
        used += 1
        last_turn = s.turn + self.horizon
        while s.phase != "finished" and s.turn < last_turn:
            move = _next(s, self._players(s, me), rnd)
            if move is None:
                break
            _, s = rules.run(s, move[1], move[0], 0)
            used += 1
        return value(s, me), used

    def _players(self, s: State, me) -> list:
        """Who plays each seat in a continuation: a trade of places moves ``me``, and its play with it."""
        return [self._thumb if st.player == me else self._greedy for st in s.seats]


def _next(s: State, players: list, rnd: random.Random, skip: int | None = None):
    seats = None if skip is None else set(range(s.n)) - {skip}
    return next_move(rules, s, players, rnd, seats=seats)


def value(s: State, me) -> float:
    """The chance the player ``me`` (wherever a trade moved them) wins from this table (``value.chances``)."""
    mine = next(i for i, st in enumerate(s.seats) if st.player == me)
    return chances(s)[mine]


# --- the moves worth searching ----------------------------------------------------------------------


def candidates(s: State, seat: int, legal: list[msgspec.Struct]) -> list[msgspec.Struct | None]:
    """``legal`` less moves that are the same to the seat (two Feed the Meter 30s, any position of a fan it cannot
    see), swaps of three reduced to the two of the least useful cards, and ``None`` where the seat may let the
    moment pass (an interrupt it owes no one)."""
    seen: dict[Hashable, msgspec.Struct] = {}
    for c in playing_on(legal):  # bots never resign (RULES.md §4)
        seen.setdefault(_same(c), c)
    options: list[msgspec.Struct | None] = list(seen.values())
    swaps = [c for c in options if isinstance(c, ev.SwapThree)]
    if len(swaps) > 2:
        keep = sorted(swaps, key=lambda c: sum(_use(s, seat, card) for card in c.cards))[:2]
        options = [c for c in options if not isinstance(c, ev.SwapThree) or c in keep]
    if s.pending is None and seat != s.turn_seat:
        options.append(None)
    return options


def _same(c: msgspec.Struct) -> Hashable:
    """What a command is, to the seat making it: its type and the kinds and values of its cards."""
    if isinstance(c, ev.Choose) and c.position is not None:
        return ("position",)
    fields = []
    for name in c.__struct_fields__:
        v = getattr(c, name)
        if isinstance(v, str) and cards.is_card(v):
            v = (cards.kind_of(v), cards.value_of(v))
        elif isinstance(v, tuple):
            v = tuple(sorted((cards.kind_of(x), cards.value_of(x)) for x in v))
        fields.append(v)
    return (type(c), *fields)


_KEEP = {"officer_jones": 45, "talk_your_way_out": 40, "free_parking": 50, "time_expires": 30}


def _use(s: State, seat: int, card: str) -> float:
    """How much a card in hand is worth keeping, roughly: what swap three would least like to lose."""
    kind, v = cards.kind_of(card), cards.value_of(card)
    if kind == "point":
        return v + (20 if v <= s.seats[seat].meter else 0)
    if kind == "feed_meter":
        return v / 2 if s.seats[seat].meter < cards.METER_MAX else 5
    return _KEEP[kind]
