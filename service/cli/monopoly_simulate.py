"""``python -m service simulate monopoly --games N --jail leave|stay``: where do Monopoly turns end, and how
do games end?

Bots play ``--games`` games (``--seats``, default 4; at most ``--rounds`` rounds each, default 100, or
``--uncapped``: until one player is left) under one jail policy: ``leave`` pays or uses a card at once, ``stay``
rolls for doubles. Every turn's end is counted by square, In Jail apart from Just Visiting, and printed as a
table (``--json`` for a program), with a bar chart if ``--plot`` names a PNG. Then how the games ended — won by
bankruptcies (``last_player``), on worth after the last round (``max_rounds``), or still going after
``--max-commands`` (``cut``) — with the median length of each. The same ``--seed`` gives the same counts, with
any number of ``--workers``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from service.bots.monopoly import BOTS
from service.sim.monopoly import IN_JAIL, JAIL, ROWS, Played, Tally, plan, row_name, run

from service.sim import seeds

DEFAULT_ROUNDS = 100
DEFAULT_MAX_COMMANDS = 200_000
ENDINGS = {"last_player": "won by bankruptcies", "max_rounds": "won on worth", "cut": "cut, still going"}


def rows(tally: Tally) -> list[dict]:
    """One row per place a turn can end, in board order (In Jail straight after Just Visiting)."""
    total = tally.turns or 1
    return [
        {
            "square": JAIL if r == IN_JAIL else r,
            "in_jail": r == IN_JAIL,
            "name": row_name(r),
            "count": tally.ends[r],
            "percent": 100 * tally.ends[r] / total,
        }
        for r in ROWS
    ]


def endings(tally: Tally) -> list[dict]:
    """How the games ended, most common first, each with its share and the median length of those games."""
    by_end: dict[str, list[Played]] = {}
    for game in tally.played:
        by_end.setdefault(game.end, []).append(game)
    order = Counter({end: len(games) for end, games in by_end.items()})
    return [
        {
            "end": end,
            "games": count,
            "percent": 100 * count / (tally.games or 1),
            "median_commands": statistics.median(g.commands for g in by_end[end]),
            "median_turns": statistics.median(g.turns for g in by_end[end]),
            "median_rounds": statistics.median(g.rounds for g in by_end[end]),
        }
        for end, count in order.most_common()
    ]


def as_json(tally: Tally, options: dict) -> str:
    return json.dumps(
        {
            "options": options,
            "games": tally.games,
            "turns": tally.turns,
            "commands": tally.commands,
            "events": tally.events,
            "rows": rows(tally),
            "endings": endings(tally),
        },
        indent=1,
    )


def table(tally: Tally, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("square", justify="right")
    t.add_column("name")
    t.add_column("count", justify="right")
    t.add_column("percent", justify="right")
    for row in rows(tally):
        t.add_row(str(row["square"]), row["name"], f"{row['count']:,}", f"{row['percent']:.2f}%")
    return t


def endings_table(tally: Tally, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("end", no_wrap=True)
    for name in ("games", "share", "median commands", "median turns", "median rounds"):
        t.add_column(name, justify="right")
    for e in endings(tally):
        t.add_row(
            ENDINGS.get(e["end"], e["end"]), f"{e['games']:,}", f"{e['percent']:.1f}%",
            f"{e['median_commands']:,.0f}", f"{e['median_turns']:,.0f}", f"{e['median_rounds']:,.0f}",
        )  # fmt: skip
    return t


def markdown(tally: Tally) -> str:
    lines = ["| square | name | turns ended | share |", "|--:|---|--:|--:|"]
    lines += [f"| {r['square']} | {r['name']} | {r['count']:,} | {r['percent']:.2f}% |" for r in rows(tally)]
    lines += ["", "| how the game ended | games | share | median commands | median turns | median rounds |"]
    lines += ["|---|--:|--:|--:|--:|--:|"]
    lines += [
        f"| {ENDINGS.get(e['end'], e['end'])} (`{e['end']}`) | {e['games']:,} | {e['percent']:.1f}% | "
        f"{e['median_commands']:,.0f} | {e['median_turns']:,.0f} | {e['median_rounds']:,.0f} |"
        for e in endings(tally)
    ]
    return "\n".join(lines)


def plot(tally: Tally, path: Path, title: str) -> None:
    """A bar per row, in board order; the jail's two rows in their own colours."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = rows(tally)
    colours = ["#c0392b" if r["in_jail"] else "#e67e22" if r["square"] == JAIL else "#2c7fb8" for r in data]
    fig, ax = plt.subplots(figsize=(14, 5.5), dpi=110)
    ax.bar(range(len(data)), [r["percent"] for r in data], color=colours)
    ax.set_xticks(range(len(data)), [f"{r['square']} {r['name']}" for r in data], rotation=75, ha="right", fontsize=7)
    ax.set_ylabel("share of turns ended there (%)")
    ax.set_title(title, fontsize=10)
    ax.axhline(100 / 40, color="grey", linewidth=0.8, linestyle="--")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    try:
        base = seeds.parse_base(args.seed)
        low, high = args.seats or (4, 4)
        if not 2 <= low <= high <= 8:
            raise ValueError("a monopoly game has 2 to 8 seats")
        bots = tuple(n.strip() for n in (args.bots or "strategic").split(",") if n.strip())
        unknown = [n for n in bots if n not in BOTS]
        if not bots or unknown:
            raise ValueError(f"unknown bot {', '.join(unknown) or '(none given)'}; known: {', '.join(BOTS)}")
        if args.games < 1 or args.rounds < 1 or args.max_commands < 1:
            raise ValueError("--games, --rounds and --max-commands must be at least 1")
    except ValueError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    seed_option = args.seed or f"0x{base.hex()}"
    rounds = None if args.uncapped else args.rounds
    specs = plan(args.games, (low, high), bots, args.jail, rounds, base, args.max_commands)
    workers = args.jobs or os.cpu_count() or 1
    total = Tally()
    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]monopoly"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), disable=args.json,
    ) as bar:  # fmt: skip
        task = bar.add_task("games", total=len(specs))
        for done, tally in run(specs, workers):
            total.add(tally)
            bar.advance(task, done)
    elapsed = time.perf_counter() - started
    seats = f"{low}" if low == high else f"{low}-{high}"
    title = f"Where turns end: {total.turns:,} turns, {total.games:,} games, {seats} seats, jail policy {args.jail}"
    cap = "uncapped" if rounds is None else f"at most {rounds} rounds"
    ends_title = f"How the games ended: {total.games:,} games, {seats} seats, {cap}, {args.max_commands:,} commands at most"
    options = {
        "games": args.games,
        "seats": seats,
        "rounds": rounds,
        "max_commands": args.max_commands,
        "jail": args.jail,
        "bots": list(bots),
        "seed": seed_option,
    }
    if args.plot:
        plot(total, Path(args.plot), title)
    if args.json:
        print(as_json(total, options))
        return 0
    console.print(table(total, title))
    console.print(endings_table(total, ends_title))
    console.print(
        f"{total.turns:,} turns ({total.commands:,} commands, {total.events:,} events) in {elapsed:.1f} s "
        f"with {workers} worker(s): {total.turns / max(elapsed, 1e-9):,.0f} turns/s",
        markup=False,
        soft_wrap=True,
    )
    console.print(f"--seed {seed_option} counts the same turns again", markup=False, soft_wrap=True)
    if args.plot:
        console.print(f"chart written to {args.plot}", markup=False, soft_wrap=True)
    if args.markdown:
        print(markdown(total))
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options only ``simulate monopoly`` reads (``--games``, ``--seats``, ``--seed``, ``--bots`` and
    ``--jobs``/``--workers`` are shared with the other kinds)."""
    p.add_argument(
        "--jail",
        choices=("leave", "stay"),
        default="leave",
        help="monopoly: leave jail at once, or stay rolling for doubles",
    )
    p.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help=f"monopoly: rounds a game at most (default {DEFAULT_ROUNDS})"
    )
    p.add_argument("--uncapped", action="store_true", help="monopoly: no --rounds limit: play until one player is left")
    p.add_argument(
        "--max-commands",
        type=int,
        default=DEFAULT_MAX_COMMANDS,
        help=f"monopoly: stop a game still going after this many commands, counted as cut (default {DEFAULT_MAX_COMMANDS:,})",
    )
    p.add_argument("--json", action="store_true", help="monopoly: print the counts as JSON")
    p.add_argument("--plot", metavar="PATH.png", help="monopoly: save a bar chart of the counts")
    p.add_argument("--markdown", action="store_true", help="monopoly: also print the table as Markdown")
