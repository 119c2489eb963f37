"""``python -m service solitaire-rates --deals N --budget B``: how often a solitaire deal is won, and by whom.

Deal *i* is played on ``sha256(base ‖ "game:" ‖ i)`` (``seeds.py``) with base ``--seed`` (default 0), so the
same command line prints the same table on any machine: every search is bounded by nodes, not by time.
Each deal is tried three ways:

- the greedy bot, playing the real game through the decider;
- the solver bot, likewise, searching ``--bot-budget`` nodes at a time and never reading the seed;
- the solver given the seed (``solver.solve``), ``--budget`` nodes in all: whether the deal can be won.
  A deal it gives up on within its budget is counted as not won, so its rate is a lower bound.

Win rates come with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from service.bots import Bot
from service.bots.solitaire import SOLVER_BUDGET, GreedyBot, SolverBot
from service.rules.solitaire import KIND
from service.rules.solitaire.layout import deal
from service.rules.solitaire.solver import solve
from service.sim import seeds
from service.sim.games import new_game, play
from service.sim.intervals import wilson


@dataclass(frozen=True)
class Task:
    """Everything one deal's three tries depend on."""

    index: int
    seed: bytes
    budget: int
    bot_budget: int


@dataclass(frozen=True)
class Tries:
    """How one deal went for each of the three."""

    greedy_won: bool
    bot_won: bool
    bot_nodes: int
    bot_exhausted: bool
    """Some search of the solver bot's game stopped on its budget."""
    solved: bool | None
    """The seeded solver: True won, False proven lost, None budget exhausted."""
    solve_nodes: int


@dataclass(frozen=True)
class Rate:
    """One row of the table."""

    who: str
    budget: str
    won: int
    deals: int
    nodes: float | None = None
    exhausted: int | None = None

    @property
    def share(self) -> float:
        return self.won / self.deals

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.won, self.deals)


def plan(deals: int, base: bytes, budget: int, bot_budget: int) -> list[Task]:
    return [Task(i, seeds.game_seed(base, i), budget, bot_budget) for i in range(deals)]


def play_out(task: Task, player: Bot) -> bool:
    """Whether ``player`` wins the deal, played command by command through the decider."""
    sim = new_game(KIND, 1, task.seed, f"rates-{task.index:05d}", [player.name])
    for _ in play(sim, [player.name], random.Random(task.index), players=[player]):
        pass
    return sim.game.state.phase == "won"


def try_deal(task: Task) -> Tries:
    """The deal's three tries; runs in a worker process when ``--jobs`` > 1."""
    greedy_won = play_out(task, GreedyBot())
    solver_bot = SolverBot(budget=task.bot_budget)
    bot_won = play_out(task, solver_bot)
    solution = solve(deal(task.seed), seed=task.seed, redeals_used=0, budget=task.budget)
    return Tries(
        greedy_won=greedy_won,
        bot_won=bot_won,
        bot_nodes=solver_bot.nodes,
        bot_exhausted=solver_bot.exhausted > 0,
        solved=solution.won,
        solve_nodes=solution.nodes,
    )


def run(tasks: list[Task], jobs: int) -> Iterator[Tries]:
    """Results in the order of ``tasks``; with ``jobs`` > 1 the deals are spread over that many processes."""
    if jobs <= 1 or len(tasks) < 2:
        yield from map(try_deal, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(try_deal, tasks, chunksize=max(1, min(8, len(tasks) // (jobs * 8))))


def rates(tries: list[Tries], budget: int, bot_budget: int) -> list[Rate]:
    n = len(tries)
    return [
        Rate("greedy bot", "—", sum(t.greedy_won for t in tries), n),
        Rate(
            "solver bot, no seed",
            f"{bot_budget:,} a search",
            sum(t.bot_won for t in tries),
            n,
            nodes=sum(t.bot_nodes for t in tries) / n,
            exhausted=sum(t.bot_exhausted for t in tries),
        ),
        Rate(
            "solver with the seed",
            f"{budget:,} a deal",
            sum(t.solved is True for t in tries),
            n,
            nodes=sum(t.solve_nodes for t in tries) / n,
            exhausted=sum(t.solved is None for t in tries),
        ),
    ]


HEADERS = ("player", "node budget", "won", "win rate", "95% interval", "mean nodes", "budget exhausted")


def cells(rate: Rate) -> tuple[str, ...]:
    low, high = rate.interval
    return (
        rate.who,
        rate.budget,
        f"{rate.won} / {rate.deals}",
        f"{rate.share:.1%}",
        f"{low:.1%} – {high:.1%}",
        "—" if rate.nodes is None else f"{rate.nodes:,.0f}",
        "—" if rate.exhausted is None else str(rate.exhausted),
    )


def table(rows: list[Rate], title: str) -> Table:
    out = Table(title=title, title_justify="left")
    for i, header in enumerate(HEADERS):
        out.add_column(header, justify="left" if i == 0 else "right")
    for rate in rows:
        out.add_row(*cells(rate))
    return out


def markdown(rows: list[Rate]) -> str:
    """The same table for docs/solitaire-odds.md."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|---" + "|--:" * (len(HEADERS) - 1) + "|"]
    lines += ["| " + " | ".join(cells(rate)) + " |" for rate in rows]
    return "\n".join(lines)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]dealing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("deals"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False, width=max(120, Console().width))
    if args.deals < 1 or args.budget < 1 or args.bot_budget < 1:
        console.print("error: --deals, --budget and --bot-budget must be at least 1", markup=False)
        return 2
    try:
        base = seeds.parse_base(args.seed)
    except ValueError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    tasks = plan(args.deals, base, args.budget, args.bot_budget)
    started = time.perf_counter()
    tries: list[Tries] = []
    with _progress(Console(stderr=True)) as bar:
        task = bar.add_task("deals", total=len(tasks))
        for result in run(tasks, args.jobs or os.cpu_count() or 1):
            tries.append(result)
            bar.advance(task)
    rows = rates(tries, args.budget, args.bot_budget)
    console.print(table(rows, f"solitaire: {len(tries)} deals, --seed {args.seed}"))
    console.print(f"{time.perf_counter() - started:.1f} s", markup=False)
    if args.markdown:
        console.print(markdown(rows), markup=False, soft_wrap=True)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    description = __doc__.replace("``", "")
    p = sub.add_parser(
        "solitaire-rates",
        help="win rates of the solitaire bots and solver over seeded deals",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--deals", type=int, default=1000, help="how many deals (default 1000)")
    p.add_argument("--budget", type=int, default=10_000, help="nodes for the solver with the seed (default 10000)")
    p.add_argument(
        "--bot-budget", type=int, default=SOLVER_BUDGET, help=f"nodes per search of the solver bot (default {SOLVER_BUDGET})"
    )
    p.add_argument("--seed", default="0", help="base seed, decimal or hex (default 0)")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.set_defaults(func=main)
