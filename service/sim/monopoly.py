"""Where Monopoly turns end: bot games played fast, in memory, counting the square of every turn's end.

A game is decided command by command with the rules' own ``run`` (the same decisions as the service, without
sealing each event into the hash chain: nothing here is stored or exported). The square of a turn's end is
read at each ``turn_ended`` from the ``moved``, ``sent_to_jail`` and ``left_jail`` events before it; square 10
is two places, In Jail and Just Visiting, told apart by whether the player is in jail there. Each game also
records how it ended (``last_player``: won by bankruptcies; ``max_rounds``; ``cut``: still going after
``max_commands``) and its length, for the report of how uncapped games end.

Game *i* of a run has the seed ``sha256(base ‖ "game:" ‖ i)`` and its bots draw from ``sha256(base ‖ "bots:"
‖ i)`` (``service.cli.seeds``), so a run depends only on its base seed and options, not on how many worker
processes share it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec

from service.bots.monopoly import BOTS, JailPolicy
from service.sim import seeds
from service.events import monopoly as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat, Timeout
from service.rules import monopoly as rules
from service.rules.monopoly.board import JAIL, SQUARES
from service.rules.resign import playing_on

START_AT = 1_767_225_600_000
STEP_MS = 1_000
IN_JAIL = 40
"""The row of square 10 for a turn that ends in jail; ``JAIL`` (10) is Just Visiting."""
ROWS: tuple[int, ...] = tuple(range(JAIL + 1)) + (IN_JAIL,) + tuple(range(JAIL + 1, 40))
"""Rows in board order, In Jail straight after Just Visiting."""


def row_name(row: int) -> str:
    if row == IN_JAIL:
        return "In Jail"
    if row == JAIL:
        return "Just Visiting"
    return SQUARES[row].name


@dataclass(frozen=True)
class Spec:
    """Everything one game depends on."""

    index: int
    seats: int
    bots: tuple[str, ...]
    jail: JailPolicy
    rounds: int | None
    """``None``: uncapped, played until one player is left (or ``max_commands``)."""
    seed: bytes
    bots_seed: int
    max_commands: int = 200_000


class Played(NamedTuple):
    """How one game ended (``last_player``, ``max_rounds``, or ``cut`` at ``max_commands``) and its length."""

    end: str
    commands: int
    turns: int
    rounds: int


@dataclass
class Tally:
    """Turns ended on each row (``IN_JAIL`` for square 10 in jail), over one game or many."""

    ends: list[int] = field(default_factory=lambda: [0] * 41)
    turns: int = 0
    games: int = 0
    commands: int = 0
    events: int = 0
    played: list[Played] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.ends = [a + b for a, b in zip(self.ends, other.ends, strict=True)]
        self.turns += other.turns
        self.games += other.games
        self.commands += other.commands
        self.events += other.events
        self.played += other.played


def plan(
    games: int,
    seats: tuple[int, int],
    bots: tuple[str, ...],
    jail: JailPolicy,
    rounds: int | None,
    base: bytes,
    max_commands: int = 200_000,
) -> list[Spec]:
    """Game ``i``: its seats and bots by ``seeds.seating``, its seeds from ``base``."""
    out = []
    for i in range(games):
        seated = seeds.seating(i, seats, bots)
        out.append(
            Spec(
                index=i,
                seats=len(seated),
                bots=seated,
                jail=jail,
                rounds=rounds,
                seed=seeds.game_seed(base, i),
                bots_seed=seeds.bots_seed(base, i),
                max_commands=max_commands,
            )
        )
    return out


class Track:
    """Each seat's square and whether it is in jail, kept from the events (cheaper than reading the state)."""

    __slots__ = ("jailed", "position")

    def __init__(self, seats: int) -> None:
        self.position = [0] * seats
        self.jailed = [False] * seats

    def row_after(self, event: msgspec.Struct) -> int | None:
        """Follow ``event``; at a turn's end, the row it ends on."""
        kind = type(event)
        if kind is ev.Moved:
            self.position[event.seat] = event.to
        elif kind is ev.SentToJail:
            self.position[event.seat], self.jailed[event.seat] = JAIL, True
        elif kind is ev.LeftJail:
            self.jailed[event.seat] = False
        elif kind is ev.TurnEnded:
            seat = event.seat
            return IN_JAIL if self.jailed[seat] else self.position[seat]
        return None


def next_actor(rules, s, bots: list, rnd: random.Random, out_of_turn: bool) -> tuple[int, msgspec.Struct] | None:
    """The awaited seats first (in the order the wait lists them); then, when nothing blocks the turn, the
    other seats (only with ``out_of_turn``, and only those whose bot is not ``quiet`` now: listing a seat's
    options costs more than anything else here) and the mover."""
    p = s.pending
    if p is not None:
        for seat in p.seats:
            command = bots[seat].choose(s, seat, playing_on(rules.legal_commands(s, seat)), rnd)
            if command is not None:
                return seat, command
        if s.blocked:
            return None
    order = [q for q in s.opponents(s.turn_seat) if not bots[q].quiet(s, q, rnd)] if out_of_turn else []
    for seat in [*order, s.turn_seat]:
        command = bots[seat].choose(s, seat, playing_on(rules.legal_commands(s, seat)), rnd)
        if command is not None:
            return seat, command
    return None


def play_game(spec: Spec, *, out_of_turn: bool = False) -> Tally:
    """One game to its end (``spec.rounds`` rounds at most, ``spec.max_commands`` commands), counted turn by
    turn; a game still going after the last command is tallied as ``cut``."""
    config = ev.MonopolyConfig(seats=spec.seats, max_rounds=spec.rounds)
    s = rules.initial(config, spec.seed)
    at = START_AT
    setup = [(Create(), None)] + [
        (TakeSeat(player=Player(name=f"{b}-{i}", bot=b)), None) for i, b in enumerate(spec.bots)
    ]
    for command, seat in setup:
        _, s = rules.run(s, command, seat, at)
    bots = [BOTS[name](spec.jail) for name in spec.bots]
    rnd = random.Random(spec.bots_seed)
    track = Track(spec.seats)
    tally = Tally(games=1)
    ends = tally.ends
    for _ in range(spec.max_commands):
        if s.over:
            break
        at += STEP_MS
        move = next_actor(rules, s, bots, rnd, out_of_turn)
        if move is None:
            if s.pending is None:
                raise RuntimeError(f"game {spec.index}: no seat acts at version {s.version}")
            at = max(at, s.pending.deadline_at)
            events, s = rules.run(s, Timeout(), None, at)
        else:
            events, s = rules.run(s, move[1], move[0], at)
        tally.commands += 1
        tally.events += len(events)
        for event in events:
            row = track.row_after(event)
            if row is not None:
                ends[row] += 1
                tally.turns += 1
    end = (s.end_reason or "?") if s.over else "cut"
    tally.played.append(Played(end, tally.commands, tally.turns, s.round))
    return tally


def _play_chunk(specs: list[Spec]) -> Tally:
    total = Tally()
    for spec in specs:
        total.add(play_game(spec))
    return total


def run(specs: list[Spec], workers: int) -> Iterator[tuple[int, Tally]]:
    """Tallies as games finish: ``(games done in this tally, tally)``; with ``workers`` > 1 spread over that
    many processes in small chunks (the sum does not depend on the order)."""
    if workers <= 1 or len(specs) < 2:
        for spec in specs:
            yield 1, play_game(spec)
        return
    size = max(1, min(25, len(specs) // (workers * 8)))
    chunks = [specs[i : i + size] for i in range(0, len(specs), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for chunk, tally in zip(chunks, pool.map(_play_chunk, chunks), strict=True):
            yield len(chunk), tally
