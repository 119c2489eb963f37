"""``python -m service golden --write``: record every golden log not yet recorded, then verify them all.

Recording plays games (bots, the simulation), which ``replays`` must never need; so the command lives here and hands
``service.sim.golden.play`` to ``replays.golden.write``. An existing golden is never rewritten."""

from __future__ import annotations

import argparse

from replays import golden
from replays.__main__ import main as replays_main
from service.sim.golden import play


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("golden", help="record the golden logs not yet recorded (never rewrites one), then verify all")
    p.add_argument("--write", action="store_true", help="record every golden not yet recorded")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.write:
        for recipe, written in golden.write(play):
            state = "written" if written else "kept (a golden is never rewritten)"
            print(f"{recipe.path.name}: {state}")
    return replays_main(["golden"])
