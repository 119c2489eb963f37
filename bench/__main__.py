"""``python -m bench`` (``make bench``): every benchmark of issue 4, each against its building block in the same run.

Each measure is a ratio (the project's number over its building block's, measured in the same round, since absolute
times drift on a shared machine), repeated over rounds; the table shows the median, min and max beside the target.
Servers are started on free loopback ports — a private redis-server (never a shared one unless ``--redis-url`` says
so) — and stopped afterwards. ``--quick`` runs shorter and fewer rounds (a smoke test of the numbers).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rich.console import Console

from . import archive, bots, compaction, http, length, memory, rebuild, replay, replicated, stages
from .report import markdown, print_table

ALL = ["1", "1c", "1l", "1r", "1s", "2", "3", "3e", "4", "4b", "4j", "5", "6", "6c", "7", "8", "9", "9k", "10", "11", "11r", "12",
       "12s"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--quick", action="store_true", help="shorter runs, two rounds, fewer games (about two minutes)")
    p.add_argument("--rounds", type=int, help="rounds per ratio (default 3; 2 with --quick)")
    p.add_argument("--duration", type=float, help="seconds of measured load per HTTP run (default 3; 2 with --quick)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds of load before measuring, per HTTP run (default 1)")
    p.add_argument("--games", type=int, default=64, help="concurrent games of the HTTP load (default 64)")
    p.add_argument("--memory-games", type=int, help="live games for the memory benchmark (default 10,000; 2,000 with --quick)")
    p.add_argument("--only", default=",".join(ALL), help=f"comma-separated measures to run (default all: {','.join(ALL)})")
    p.add_argument("--redis-url", help="use this Redis instead of private redis-servers (keys under a namespace of their own, "
                                       "deleted afterwards; the memory benchmark then needs its own server and is skipped)")
    p.add_argument("--markdown", type=Path, help="also write the table as Markdown to this file")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (2 if args.quick else 3)
    args.duration = args.duration or (2.0 if args.quick else 3.0)
    args.memory_games = args.memory_games or (2_000 if args.quick else 10_000)
    args.only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = set(args.only) - set(ALL)
    if unknown:
        p.error(f"unknown measures {sorted(unknown)}; choose from {ALL}")

    console = Console(highlight=False, width=max(160, Console().width))
    nproc = os.cpu_count() or 1
    all_measures = {**http.measures(), **stages.measures(), **length.measures(), **replay.measures(), **rebuild.measures(),
                    **memory.measures(), **bots.measures(), **archive.measures(), **replicated.measures(),
                    **compaction.measures()}
    wanted = [all_measures[k] for k in ALL if k in args.only]
    started = time.perf_counter()

    def log(text: str) -> None:
        console.print(f"[dim]{time.perf_counter() - started:6.1f}s[/dim] {text}", highlight=False)

    suites = [
        ("HTTP load (1, 1l, 2, 6, 8, 9, 9k)", {"1", "1c", "1l", "2", "6", "6c", "8", "9", "9k"}, http.run),
        ("what replicated costs (1r)", {"1r"}, replicated.run),
        ("where a request's CPU goes (1s)", {"1s"}, stages.run),
        ("game length (3)", {"3", "3e"}, length.run),
        ("replays verify (4)", {"4", "4j"}, replay.run),
        ("replays verify re-deriving bots (4b)", {"4b"}, replay.bots_check),
        ("projection rebuild (5)", {"5"}, rebuild.run),
        ("memory (7)", {"7"}, memory.run),
        ("the expert bot (10)", {"10"}, bots.run),
        ("archive (11)", {"11", "11r"}, archive.run),
        ("the embedded journal, compacted (12)", {"12", "12s"}, compaction.run),
    ]
    for title, keys, run in suites:
        if not keys & set(args.only):
            continue
        log(f"[bold]{title}[/bold]")
        try:
            run(args, all_measures, log)
        except Exception as e:  # report it in the table; the other benchmarks still run
            for k in keys & set(args.only):
                all_measures[k].error = f"{type(e).__name__}: {e}"
            console.print_exception(max_frames=4)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    title = (f"Free Parking benchmarks — nproc {nproc}, load average {load:.1f} at the end, {args.rounds} rounds"
             f"{' (--quick)' if args.quick else ''}, {time.perf_counter() - started:.0f}s")
    print_table(wanted, title, console)
    if stages.BREAKDOWN.columns:
        console.print(stages.BREAKDOWN.table())
    if args.markdown:
        command = "make bench" + (f" ARGS='{' '.join(argv if argv is not None else sys.argv[1:])}'" if (argv or sys.argv[1:]) else "")
        text = markdown(wanted, f"{title}. Reproduce: `{command}`.")
        args.markdown.write_text(text + ("\n" + stages.BREAKDOWN.markdown() if stages.BREAKDOWN.columns else ""))
        console.print(f"Markdown table written to {args.markdown}")
    return 1 if any(m.verdict == "error" for m in wanted) else 0  # a missed target is a finding, not a failure


if __name__ == "__main__":
    sys.exit(main())
