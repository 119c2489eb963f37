"""A game the server closed for nobody moving verifies like any other, in every kind: the close is re-decided from
the log, so a close earlier than the idle time, one claiming another last move, or one sent by a seat is rejected at
its seq, even resealed by a forger who knows the seed."""

from __future__ import annotations

import random

import pytest

from replays.verify import verify
from service.events.common import Close
from service.sim.games import new_game, play

from .forge import export_of, rechain, replace, with_command
from .test_verify import rejected

DAY = 86_400_000
KINDS = {"free-parking": (3, ["random"] * 3), "solitaire": (1, ["greedy"]), "monopoly": (2, ["random"] * 2)}


def closed(kind: str):
    """A game a few moves in, then closed a day after its last move; its export, and the seed."""
    seats, bots = KINDS[kind]
    seed = bytes([len(kind)]) * 32
    sim = new_game(kind, seats, seed, f"closed-{kind}", bots)
    for _, _ in zip(range(8), play(sim, bots, random.Random(2)), strict=False):
        pass
    sim.envelopes += sim.game.play(Close(idle_ms=DAY, since=sim.game.last_at), None, sim.game.last_at + DAY)
    return export_of(sim), seed


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_seed", [True, False])
def test_a_closed_game_verifies_every_command_the_close_included(kind, with_seed):
    (header, envelopes), _ = closed(kind)
    if not with_seed:  # the seed is then the one seed_revealed published
        header = replace(header, seed=None)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert [e.type for e in envelopes[-2:]] == ["game_closed", "seed_revealed"]
    assert "goes on" not in verdict.summary()  # a finished game, not a prefix


@pytest.mark.parametrize("kind", KINDS)
def test_a_close_moved_before_the_idle_time_is_refused_by_the_rules(kind):
    (header, envelopes), seed = closed(kind)
    i = len(envelopes) - 2
    early = envelopes[i - 1].at + DAY - 1
    edited = envelopes[:i] + [replace(e, at=early) for e in envelopes[i:]]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "command (the rules refuse it)")
    assert "not_idle" in line


@pytest.mark.parametrize("kind", KINDS)
def test_a_close_claiming_an_older_last_move_is_refused(kind):
    (header, envelopes), seed = closed(kind)
    i = len(envelopes) - 2
    since = envelopes[i - 1].at - DAY
    edited = envelopes[:i] + [with_command(envelopes[i], since=since)] + envelopes[i + 1 :]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "command (the rules refuse it)")
    assert "stale_close" in line


def test_a_close_sent_by_a_seat_is_refused():
    (header, envelopes), seed = closed("free-parking")
    i = len(envelopes) - 2
    edited = envelopes[:i] + [replace(e, actor="seat:0") for e in envelopes[i:]]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "command (the rules refuse it)")
    assert "server_only" in line
