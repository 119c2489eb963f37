"""``python -m service bot-league KIND --games N --seats K --bots a,b,c``: the bots of a kind, measured in a league.

Every table of ``K`` seats drawn from ``--bots`` that seats two different bots (``--solo BOT``: that bot alone
against ``K - 1`` of each other) plays ``N`` seeded games, seated in turn in each order of its bots. Game *i* is
dealt ``sha256(base ‖ "game:" ‖ i)`` and its bots draw from ``sha256(base ‖ "bots:" ‖ i)`` (``seeds.py``), and every
search is bounded by nodes, so the printed command line prints the same table on any machine, with any ``--jobs``.

It prints each bot's win share a seat at each table with a 95% Wilson interval, and a rating per bot: the service's
own (OpenSkill Plackett–Luce over each game's order of finish, μ − 3σ; ``service/league/ratings.py``). Solitaire is played alone: each bot plays the same deals (``--seats 1``).
The card game also fields ``omniscient``: the expert's search given the true hidden cards, a ceiling for
measurement that no table may seat, and ``open-hands``: the same search seeing every hand, not the decks' orders.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from service.league import games as league_games
from service.league import ratings, report
from service.league.tables import Task, plan

from service.sim import seeds

SEATS = {"free-parking": (2, 8), "monopoly": (2, 8), "solitaire": (1, 1)}


def run(tasks: list[Task], jobs: int) -> Iterator[league_games.Outcome]:
    """Outcomes in the order of ``tasks``, whatever ``jobs`` shares them."""
    if jobs <= 1 or len(tasks) < 2:
        yield from map(league_games.play_game, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(league_games.play_game, tasks, chunksize=max(1, min(8, len(tasks) // (jobs * 8))))


def check(args: argparse.Namespace) -> str | None:
    """What is wrong with the command line, if anything: each in one sentence."""
    low, high = SEATS[args.kind]
    known = league_games.names(args.kind)
    unknown = [b for b in args.bots if b not in known]
    if unknown:
        return f"{args.kind} has no bot {', '.join(unknown)}: its bots are {', '.join(known)}"
    if len(set(args.bots)) != len(args.bots):
        return "--bots names a bot twice: name each once (--solo seats one of them alone)"
    if not low <= args.seats <= high:
        return f"a {args.kind} table seats {low}" + (f" to {high}" if high != low else "") + f", not {args.seats}"
    if args.seats > 1 and len(args.bots) < 2:
        return "--bots needs two bots at least to make a table"
    if args.solo is not None and args.solo not in args.bots:
        return f"--solo {args.solo} is not one of --bots"
    if args.games < 1 or (args.nodes is not None and args.nodes < 1):
        return "--games and --nodes must be at least 1"
    if args.mode != "standard" and args.kind != "free-parking":
        return "--mode is the card game's (standard or tournament)"
    if args.max_rounds is not None and args.kind != "monopoly":
        return "--max-rounds is Monopoly's"
    return None


def options(args: argparse.Namespace) -> dict:
    if args.kind == "free-parking" and args.mode != "standard":
        return {"mode": args.mode}
    if args.kind == "monopoly" and args.max_rounds is not None:
        return {"max_rounds": args.max_rounds}
    return {}


def command_line(args: argparse.Namespace) -> str:
    """The command that prints this table again (``--jobs`` and the output flags aside: they change nothing in it)."""
    parts = ["python", "-m", "service", "bot-league", args.kind, "--games", str(args.games), "--seats", str(args.seats),
             "--bots", ",".join(args.bots), "--seed", args.seed]
    if args.solo:
        parts += ["--solo", args.solo]
    if args.mode != "standard":
        parts += ["--mode", args.mode]
    if args.max_rounds is not None:
        parts += ["--max-rounds", str(args.max_rounds)]
    if args.nodes is not None:
        parts += ["--nodes", str(args.nodes)]
    return shlex.join(parts)


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("[bold]playing"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=console)


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False, width=max(120, Console().width))
    args.bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    problem = check(args)
    try:
        base = seeds.parse_base(args.seed)
    except ValueError as e:
        problem = problem or str(e)
    if problem:
        sys.stderr.write(f"error: {problem}\n")
        return 2
    tasks = plan(args.kind, args.bots, args.seats, args.games, base, solo=args.solo, options=options(args), nodes=args.nodes)
    started = time.perf_counter()
    outcomes = []
    with _progress(Console(stderr=True)) as bar:
        task = bar.add_task("games", total=len(tasks))
        for outcome in run(tasks, args.jobs or os.cpu_count() or 1):
            outcomes.append(outcome)
            bar.advance(task)
    shares = ratings.shares(outcomes)
    wins = ratings.pairwise(outcomes)
    rated = ratings.rate(args.bots, outcomes)
    command = command_line(args)
    if args.png:
        report.plot(rated, Path(args.png), f"{args.kind}: {len(outcomes)} games")
    if args.json:
        sys.stdout.write(report.as_json(args.kind, command, args.seed, args.games, shares, rated, wins).decode() + "\n")
        return 0
    for out in report.terminal(shares, rated, f"{args.kind}: {len(outcomes)} games, {args.games} a table"):
        console.print(out)
    console.print(f"{command}\n{time.perf_counter() - started:.1f} s", markup=False)
    if args.markdown:
        console.print(report.markdown(shares, rated), markup=False, soft_wrap=True)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bot-league", help="seeded games between bots in every seating: win rates and ratings",
                       description=__doc__.replace("``", ""), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=sorted(SEATS), help="the game")
    p.add_argument("--games", type=int, default=1000, help="games a table (default 1000)")
    p.add_argument("--seats", type=int, default=None, help="seats a table (default 2; solitaire 1)")
    p.add_argument("--bots", default=None, help="the bots, comma-separated (default: every bot of the kind)")
    p.add_argument("--solo", default=None, help="seat this bot alone against each other bot's K-1 seats")
    p.add_argument("--mode", choices=("standard", "tournament"), default="standard", help="the card game's mode")
    p.add_argument("--max-rounds", type=int, default=None, help="Monopoly: end each game after that many rounds")
    p.add_argument("--nodes", type=int, default=None, help="the search budget of the bots that search (default theirs)")
    p.add_argument("--seed", default="0", help="base seed, decimal or hex (default 0)")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    p.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    p.add_argument("--json", action="store_true", help="print the results as JSON only")
    p.add_argument("--png", default=None, help="draw the ratings into this PNG file")
    p.set_defaults(func=_defaults)


def _defaults(args: argparse.Namespace) -> int:
    if args.seats is None:
        args.seats = 1 if args.kind == "solitaire" else 2
    if args.bots is None:
        args.bots = ",".join(league_games.BOTS[args.kind])
    return main(args)
