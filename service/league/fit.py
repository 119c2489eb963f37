"""``python -m service.league.fit``: fit the card game's table judgement (``service.bots.value``) to bot games.

Seeded games between the rule of thumb and greedy bots (two to four seats, both modes) are played — the players of
the expert's own continuations, and of about equal skill: with a random bot at the table, what predicts the winner is
mostly which seat is the random one, and weights fitted to that judged holding Free Parking a loss. At every few
commands each seat's ``features`` are kept with whether that seat's player went on to win. A conditional logit —
each seat's chance its share of ``exp(w · features)`` — is fitted by gradient ascent on the log-likelihood (a little
L2), and the weights are printed in the order of ``FEATURES``, ready to paste as ``WEIGHTS``. Deterministic: the
same ``--games`` and ``--seed`` print the same weights.
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np

import service.rules.free_parking as rules
from service.bots import next_move, seated
from service.bots.expert import RuleOfThumb
from service.bots.free_parking import GreedyBot
from service.bots.value import FEATURES, features
from service.sim import seeds
from service.sim.games import new_game

EVERY = 3
LINEUP = (RuleOfThumb, GreedyBot)
"""The bots a fitted game seats, each seat drawn from these by the game's index."""


def positions(games: int, base: bytes) -> tuple[np.ndarray, np.ndarray]:
    """``x[g, seat, feature]`` for each kept position and ``won[g, seat]``: 1 where that seat's player won."""
    xs, ys = [], []
    for g in range(games):
        seats = 2 + g % 3
        mode = "tournament" if g % 4 == 3 else "standard"
        pick = random.Random(g)
        lineup = [LINEUP[pick.randrange(len(LINEUP))]() for _ in range(seats)]
        sim = new_game("free-parking", seats, seeds.game_seed(base, g), f"fit-{g}", [b.name for b in lineup], {"mode": mode})
        rnd = random.Random(seeds.bots_seed(base, g))
        playing = {st.player: b for st, b in zip(sim.game.state.seats, lineup, strict=True)}
        kept = []
        while sim.game.state.phase != "finished":
            s = sim.game.state
            if len(sim.envelopes) % EVERY == 0:
                kept.append((s, [st.player for st in s.seats]))
            seat, command = next_move(rules, s, seated(playing, s), rnd)
            sim.send(command, seat)
        end = sim.game.state
        winner = end.seats[end.winner].player
        for s, players in kept:
            row = np.zeros((4, len(FEATURES)))
            mask = np.zeros(4)
            for i in range(seats):
                row[i] = features(s, i)
                mask[i] = 1.0 if players[i] == winner else 0.0
            row[seats:] = np.nan  # seats the table does not have
            xs.append(row)
            ys.append(mask)
    return np.array(xs), np.array(ys)


def fit(x: np.ndarray, won: np.ndarray, steps: int = 3_000, rate: float = 0.5, l2: float = 1e-3) -> np.ndarray:
    present = ~np.isnan(x[:, :, 0])
    x = np.nan_to_num(x)
    w = np.zeros(x.shape[2])
    for _ in range(steps):
        z = np.where(present, x @ w, -np.inf)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = np.einsum("gs,gsf->f", won - p, x) / len(x) - l2 * w
        w += rate * grad
    return w


def log_loss(x: np.ndarray, won: np.ndarray, w: np.ndarray) -> float:
    present = ~np.isnan(x[:, :, 0])
    z = np.where(present, np.nan_to_num(x) @ w, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-(won * np.where(present, logp, 0)).sum() / len(x))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m service.league.fit", description=__doc__)
    p.add_argument("--games", type=int, default=3000)
    p.add_argument("--seed", default="0")
    args = p.parse_args(argv)
    base = seeds.parse_base(args.seed)
    x, won = positions(args.games, base)
    held_out = len(x) // 5
    w = fit(x[held_out:], won[held_out:])
    print(f"# {len(x)} positions of {args.games} games; held-out log loss {log_loss(x[:held_out], won[:held_out], w):.4f}"
          f" (no weights: {log_loss(x[:held_out], won[:held_out], np.zeros_like(w)):.4f})")
    print("WEIGHTS = (")
    for name, v in zip(FEATURES, w, strict=True):
        print(f"    {v:.4f},  # {name}")
    print(")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
