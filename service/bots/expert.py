"""The card game's expert bot: a determinised Monte Carlo search over worlds its seat cannot tell apart.

Each decision deals the cards its seat has not seen into a world (``worlds.sample``), plays every candidate move in
that world with the real ``decide``/``evolve``, and plays the game on from there with greedy players for a few turns;
the candidate whose worlds end best, on average over many worlds, is played. Every candidate meets the same worlds
and the same continuations (common random numbers), so the comparison between two moves is not drowned by the luck
of the deal — which in this game is most of what happens.

The search is bounded by *nodes* (commands decided), never by time, so a seed and a budget give the same game on
any machine. It reads the true table only through ``worlds.sample``: ``omniscient=True`` skips that and searches
the true world, a ceiling for measurement that no table may seat (``python -m service bot-league``).
"""

from __future__ import annotations

import random
from collections.abc import Hashable

import msgspec

import service.rules.free_parking as rules
from service.events import free_parking as ev
from service.rules.free_parking import cards
from service.rules.free_parking.state import State

from . import worlds
from .free_parking import GreedyBot
from .turns import next_move

NODES = 800
"""The default budget: commands decided per decision (``bench`` keeps a server bot's decision p99 within 50 ms)."""
HORIZON = 2
"""Turns each continuation plays before the table is judged (``value``)."""
MIN_WORLDS = 4
POTENTIAL = 0.6
"""What a point in hand that the seat can spend minutes on is worth, against a point down."""
EXPOSED = 0.3
"""What a Point card Officer Jones could take costs, while the meter reads 0."""
WORLD_NODES = 4
"""What dealing a world costs, in nodes: a budget buys fewer worlds when each continuation is short."""


class ExpertBot:
    name = "expert"

    def __init__(self, nodes: int = NODES, *, horizon: int = HORIZON, omniscient: bool = False) -> None:
        self.nodes, self.horizon, self.omniscient = nodes, horizon, omniscient
        self._greedy = GreedyBot()

    def choose(self, s: State, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        options = candidates(s, seat, legal)
        if len(options) <= 1:
            return options[0] if options else None
        me = s.seats[seat].player
        totals = [0.0] * len(options)
        spent = played = 0
        while spent < self.nodes or played < MIN_WORLDS:
            world_seed = rnd.getrandbits(64)
            world = s if self.omniscient else worlds.sample(s, seat, random.Random(world_seed))
            spent += WORLD_NODES
            for k, option in enumerate(options):
                value, used = self._continue(world, seat, option, me, random.Random(world_seed))
                totals[k] += value
                spent += used
            played += 1
        return options[max(range(len(options)), key=totals.__getitem__)]

    def _continue(self, s: State, seat: int, option, me, rnd: random.Random) -> tuple[float, int]:
        """Play ``option`` (``None``: let the moment pass) and go on with greedy players for ``horizon`` turns; the
        table's value for ``me``, and the commands decided."""
        players = [self._greedy] * s.n
        used = 0
        if option is None:
            move = _next(s, players, rnd, skip=seat)
            if move is None:
                return value(s, me), 0
            seat, option = move
        _, s = rules.run(s, option, seat, 0)
        used += 1
        last_turn = s.turn + self.horizon
        while s.phase != "finished" and s.turn < last_turn:
            move = _next(s, players, rnd)
            if move is None:
                break
            _, s = rules.run(s, move[1], move[0], 0)
            used += 1
        return value(s, me), used


def _next(s: State, players: list, rnd: random.Random, skip: int | None = None):
    seats = None if skip is None else set(range(s.n)) - {skip}
    return next_move(rules, s, players, rnd, seats=seats)


def value(s: State, me) -> float:
    """How well the table stands for the player ``me`` (wherever a trade moved them): 1 for a win, 0 for a loss,
    else a share of the seats' progress towards the winning line."""
    mine = next(i for i, st in enumerate(s.seats) if st.player == me)
    if s.phase == "finished":
        return 1.0 if s.winner == mine else 0.0
    progress = [_progress(s, i) for i in range(s.n)]
    best_other = max(p for i, p in enumerate(progress) if i != mine)
    return 0.5 + (progress[mine] - best_other) / 1000


def _progress(s: State, seat: int) -> float:
    """Points down, and what the seat holds towards more: Point cards in hand it has (or will feed) the minutes
    for, a Free Parking card's free errand; less the Point card Officer Jones may take while its meter reads 0."""
    st = s.seats[seat]
    held = fed = free = 0
    for c in st.hand:
        kind = cards.kind_of(c)
        if kind == "point":
            held += cards.value_of(c)
        elif kind == "feed_meter":
            fed += cards.value_of(c)
        elif kind == "free_parking":
            free += 1
    potential = min(st.meter + 0.5 * fed, held) + (30 * free if held else 0)
    exposed = min((cards.value_of(c) for c in st.points), default=0) if st.meter == 0 else 0
    return st.total + st.score + POTENTIAL * potential - EXPOSED * exposed


# --- the moves worth searching ----------------------------------------------------------------------


def candidates(s: State, seat: int, legal: list[msgspec.Struct]) -> list[msgspec.Struct | None]:
    """``legal`` less moves that are the same to the seat (two Feed the Meter 30s, any position of a fan it cannot
    see), swaps of three reduced to the two of the least useful cards, and ``None`` where the seat may let the
    moment pass (an interrupt it owes no one)."""
    seen: dict[Hashable, msgspec.Struct] = {}
    for c in legal:
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
