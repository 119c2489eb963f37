"""How well a card-game table stands for each seat: a chance of winning from what lies on it, fitted to games.

Each seat's standing is a weighted sum of *features* of its place — points down and how near the winning line,
minutes on the meter and what it can spend them on, what its hand holds, whether Officer Jones could strike it,
whether the turn is its — and a seat's chance of winning is its share of ``exp(standing)`` among the seats
(a conditional logit). The weights are fitted by ``python -m service.league.fit`` to the positions of seeded games
between the rule of thumb and greedy bots — the players of the expert's continuations — and who went on to win
them; ``WEIGHTS`` is what it printed. The expert's search judges the tables its continuations reach with
``chances``: no table is judged by a hand-tuned guess.
"""

from __future__ import annotations

import math

from service.rules.free_parking import cards
from service.rules.free_parking.state import State

FEATURES = (
    "points", "near_win", "errand_wins", "meter", "spendable", "held", "fed", "free_parking", "officer_jones",
    "talk_your_way_out", "time_expires", "exposed", "to_play", "cards", "total",
)

WEIGHTS = (
    0.8152, 0.8199, 0.8681, -0.1658, 0.5425, 0.2332, 0.1447, 0.2071, 0.1170, 0.3515, -0.0120, -0.2537, 0.0064,
    -0.3331, 1.2841,
)
"""One weight a feature, in the order of ``FEATURES`` (``python -m service.league.fit`` prints them)."""


def features(s: State, seat: int) -> tuple[float, ...]:
    """The seat's place on the table, as numbers of about one."""
    st = s.seats[seat]
    line = cards.ROUND_POINTS if s.config.mode == "tournament" else cards.WINNING_POINTS
    runnable = best = held = fed = 0
    counts = {"free_parking": 0, "officer_jones": 0, "talk_your_way_out": 0, "time_expires": 0}
    for c in st.hand:
        kind, v = cards.kind_of(c), cards.value_of(c)
        if kind == "point":
            held, best = held + v, max(best, v)
            if v <= st.meter:
                runnable = max(runnable, v)
        elif kind == "feed_meter":
            fed += v
        else:
            counts[kind] += 1
    score = st.score
    exposed = min((cards.value_of(c) for c in st.points), default=0) if st.meter == 0 else 0
    return (
        score / 100,
        max(0, score - (line - 60)) / 60,
        float(score + max(runnable, best if counts["free_parking"] else 0) >= line),
        st.meter / 60,
        min(st.meter, held) / 100,
        held / 100,
        fed / 100,
        float(counts["free_parking"]),
        float(counts["officer_jones"]),
        float(counts["talk_your_way_out"]),
        float(counts["time_expires"]),
        exposed / 60,
        float(s.turn_seat == seat),
        len(st.hand) / 6,
        st.total / 100,
    )


def standing(s: State, seat: int, weights: tuple[float, ...] = WEIGHTS) -> float:
    return sum(w * f for w, f in zip(weights, features(s, seat), strict=True))


def chances(s: State, weights: tuple[float, ...] = WEIGHTS) -> list[float]:
    """Each seat's chance of winning from this table: 1 for a winner, 0 for the others once the game is over."""
    if s.phase == "finished":
        return [1.0 if i == s.winner else 0.0 for i in range(s.n)]
    scores = [standing(s, i, weights) for i in range(s.n)]
    top = max(scores)
    e = [math.exp(x - top) for x in scores]
    total = sum(e)
    return [x / total for x in e]
