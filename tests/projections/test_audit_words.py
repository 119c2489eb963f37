"""The audit read model tells every event in its own kind's words, whatever kind the process projected before: the
events the kinds share (``seat_taken``, ``resign``, ``game_closed``…) have a summary per kind, and the projector's
per-type lookup is per kind too. Keyed by type alone, a solitaire projected first made a card game's ``seat 0 taken by
…`` read ``played by …`` in that process (the CI run that found it: 47 projection tests of one worker)."""

from __future__ import annotations

import random

import pytest

from service.projections import audit
from service.rules.engine import audit_lines, rules_for
from service.sim.games import new_game, play


def _log(kind: str, seats: int, bots: list[str]):
    sim = new_game(kind, seats, bytes([3]) * 32, f"g_words_{kind}", bots)
    for _ in play(sim, bots, random.Random(3)):
        pass
    return sim.envelopes


@pytest.mark.parametrize("first", ["solitaire", "free-parking", "monopoly"])
def test_each_kind_is_told_in_its_own_words_whichever_kind_came_first(first, monkeypatch):
    monkeypatch.setattr(audit, "_SUMMARIES", {})  # a fresh process
    logs = {"solitaire": _log("solitaire", 1, ["greedy"]), "free-parking": _log("free-parking", 2, ["greedy"] * 2),
            "monopoly": _log("monopoly", 2, ["strategic"] * 2)}
    for kind in [first] + [k for k in logs if k != first]:
        events = [rules_for(kind).CODEC.join(env.public) for env in logs[kind]]
        assert audit.lines(kind, logs[kind], events) == audit_lines(rules_for(kind), logs[kind], reveal=False), kind
