"""RULES.md §2 — properties of the ``solitaire`` kind over thousands of seeded games.

``SOLITAIRE_PROPERTY_GAMES`` games (default 2000) are played by a random player that picks from
``legal_commands`` (mostly moves; now and then undo, a redeal, or resigning; every game is resigned after
``MAX_COMMANDS``); in every other game the player spends both redeals at once and then only moves (a few of
those games run out of moves: lost at once under rules version 1, stuck under version 2, where the player undoes or
resigns; both rulings are tested by hand in ``test_solitaire.py``). Games alternate between the rules versions, two by
two. After every event the board must hold the 48 cards once each and four gaps; every listed command must be
accepted (a stuck game lists exactly undo and resign); a card sent to a gap it does not fit must be refused; and
folding the log from nothing must give the state the decider reached. Every ``VERIFY_EVERY``-th game also goes through the
engine, is exported and passes ``replays.verify``.
"""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest

from replays.verify import verify
from service.events import solitaire as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.export import dumps, load
from service.rules.engine import Game, export_header
from service.rules.errors import RuleViolation
from service.rules.solitaire import CODEC, evolve, legal_commands, run, status_of
from service.rules.solitaire import layout as grid
from service.rules.solitaire.state import RULES_VERSIONS, State, initial
from tests.depth import count

GAMES = count("SOLITAIRE_PROPERTY_GAMES", 2000, 20000)  # 2,000: the fewest that reach both stuck ends
MAX_COMMANDS = 60
VERIFY_EVERY = 100
AT = 1_800_000_000_000
PLAYER = Player(name="ann", player_id="p_ann")


def seed_of(i: int) -> bytes:
    return hashlib.sha256(f"solitaire property:{i}".encode()).digest()


def choose(s: State, legal: list[msgspec.Struct], rnd: random.Random, turn: int, hasty: bool) -> msgspec.Struct:
    """Mostly a move; sometimes undo or a redeal; a resignation at the cap (or, rarely, before).

    A ``hasty`` player spends both redeals first and then only moves, never straight back (a card that fits
    from both sides keeps most boards alive, so only a few of these games run out of moves).
    """
    by_type: dict[type, list[msgspec.Struct]] = {}
    for c in legal:
        by_type.setdefault(type(c), []).append(c)
    roll = rnd.random()
    if turn >= MAX_COMMANDS or roll < 0.005:
        return ev.Resign()
    if hasty:
        if ev.Redeal in by_type:
            return ev.Redeal()
        onward = [m for m in by_type.get(ev.Move, []) if not grid.is_shuttle(s.layout, (m.card, m.to.row, m.to.slot), s.last)]
        return rnd.choice(onward or legal)
    if ev.Undo in by_type and roll < 0.08:
        return ev.Undo()
    if ev.Redeal in by_type and (roll < 0.12 or ev.Move not in by_type):
        return ev.Redeal()
    if ev.Move in by_type:
        return rnd.choice(by_type[ev.Move])
    return rnd.choice(legal)


def misfit(s: State, rnd: random.Random) -> ev.Move | None:
    """A card sent to a gap it does not fit, if the board has one."""
    row, slot = rnd.choice(grid.gaps(s.layout))
    fits = set(grid.fillers(s.layout, row, slot))
    card = rnd.choice([c for c in grid.DECK if c not in fits])
    return ev.Move(card=card, to=ev.Place(row=row, slot=slot))


def version_of(i: int) -> int:
    return RULES_VERSIONS[(i // 2) % len(RULES_VERSIONS)]


def play_one(i: int) -> tuple[State, list[msgspec.Struct], list[tuple[msgspec.Struct, int | None]], int]:
    """One random game, checked event by event; its final state, events, commands and how often it was stuck."""
    rnd = random.Random(i)
    s = initial(ev.SolitaireConfig(seats=1), seed_of(i), version_of(i))
    log: list[msgspec.Struct] = []
    commands: list[tuple[msgspec.Struct, int | None]] = [(Create(), None), (TakeSeat(player=PLAYER), None)]
    for command, seat in commands:
        events, s = run(s, command, seat, AT)
        log += events
    turn = stuck = 0
    while status_of(s) != "finished":
        legal = legal_commands(s, 0)
        assert legal and legal[-1] == ev.Resign()
        assert (legal == [ev.Undo(), ev.Resign()]) == s.stuck == (not grid.legal_moves(s.layout) and s.redeals_left == 0)
        if rnd.random() < 0.1:
            bad = misfit(s, rnd)
            with pytest.raises(RuleViolation) as refused:
                run(s, bad, 0, AT)
            assert refused.value.code == "card_does_not_fit"
        command = choose(s, legal, rnd, turn, hasty=i % 2 == 1)
        events, after = run(s, command, 0, AT)
        folded = s
        for event in events:
            folded = evolve(folded, event)
            if folded.layout is not None:
                assert grid.well_formed(folded.layout), f"game {i}: cards not conserved after {event}"
        assert folded == after
        commands.append((command, 0))
        log += events
        s, turn = after, turn + 1
        stuck += s.stuck
    return s, log, commands, stuck


def test_thousands_of_random_games_keep_every_card_and_replay():
    ends: dict[str, int] = {}
    stuck = 0
    for i in range(GAMES):
        s, log, commands, times_stuck = play_one(i)
        stuck += times_stuck
        replayed = initial(ev.SolitaireConfig(seats=1), seed_of(i))
        for event in log:
            replayed = evolve(replayed, CODEC.join(*CODEC.split(event)[1:]))
        assert replayed == s
        end = s.lost_reason or s.phase
        ends[end] = ends.get(end, 0) + 1
        if i % VERIFY_EVERY == 0:
            through_engine(i, commands, s)
    assert sum(ends.values()) == GAMES
    if GAMES >= 2000:  # the default run reaches both (rarely: a random player seldom runs out of moves)
        assert ends.get("no_moves", 0) > 0 and stuck > 0, "both versions' ends with nothing left to do are reached"
    print(f"\nsolitaire property games ({GAMES}): endings {dict(sorted(ends.items()))}, stuck {stuck} times")


def through_engine(i: int, commands: list[tuple[msgspec.Struct, int | None]], final: State) -> None:
    """The same commands through ``Game``: sealed, exported, read back and verified from the file alone."""
    game = Game.new("solitaire", f"prop-{i}", ev.SolitaireConfig(seats=1), seed_of(i), version_of(i))
    envelopes = []
    for n, (command, seat) in enumerate(commands):
        envelopes += game.play(command, seat, AT + n * 1000)
    assert game.state == final
    header, read = load(dumps(export_header(game, with_seed=False), envelopes))
    verdict = verify(header, read)
    assert verdict.ok and verdict.redecided, verdict
