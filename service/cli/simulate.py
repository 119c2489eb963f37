"""``python -m service simulate KIND --games N --seats K --export DIR``: bot games in memory, one export file each.

Every game is played to its end and written as ``DIR/<game_id>.ndjson`` with its seed in the header
(the game is over, so the seed is public), ready for ``python -m replays verify DIR``. The seeds come
from one base seed (``--seed``, see ``seeds.py``), so the same command line writes the same files.
``simulate monopoly`` without ``--export`` counts where turns end instead (``monopoly_simulate.py``).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from service.bots import BOTS
from service.events.export import dumps
from service.rules.engine import GAMES, export_header, seat_range
from service.sim.games import new_game, play

from service.sim import seeds

from . import monopoly_simulate


@dataclass(frozen=True)
class GameSpec:
    """Everything one game of the run depends on."""

    kind: str
    game_id: str
    seats: int
    bots: tuple[str, ...]
    seed: bytes
    bots_seed: int
    timeouts: float = 0.0


@dataclass(frozen=True)
class Outcome:
    game_id: str
    seats: int
    events: int
    winner: int | None
    winner_bot: str | None


def seat_counts(text: str) -> tuple[int, int]:
    """``--seats``: ``4``, or ``2-8`` to cycle through every count from 2 to 8 (checked against the kind later)."""
    lo, _, hi = text.partition("-")
    try:
        low, high = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seat count (4) or a range (2-8)") from None
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: seats go low to high, from 1")
    return low, high


def seats_of(kind: str, wanted: int | None) -> int:
    """``wanted`` seats, if the kind allows them; else (none asked) 4, or the nearest count the kind allows."""
    low, high = seat_range(kind)
    if wanted is None:
        return min(max(4, low), high)
    if not low <= wanted <= high:
        raise ValueError(f"a {kind} game has {low} to {high} seats, not {wanted}" if low < high else f"a {kind} game has {low} seat(s), not {wanted}")
    return wanted


def default_bots(kind: str, preferred: str) -> str:
    """``preferred`` (a comma list) where the kind has every one of those bots, else its best plain player: the
    greedy bot of the card games, Monopoly's strategic one."""
    if all(n in BOTS[kind] for n in preferred.split(",")):
        return preferred
    return next(n for n in ("greedy", "strategic", *BOTS[kind]) if n in BOTS[kind])


def bot_names(kind: str, text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in BOTS[kind]]
    if not names or unknown:
        raise ValueError(f"unknown bot {', '.join(unknown) or '(none given)'}; known: {', '.join(BOTS[kind])}")
    return names


def plan(
    kind: str, games: int, seats: tuple[int, int], bots: tuple[str, ...], base: bytes, timeouts: float = 0.0
) -> list[GameSpec]:
    """Game ``i``: its seats and bots by ``seeds.seating``, its seeds from ``base``."""
    specs = []
    for i in range(games):
        seated = seeds.seating(i, seats, bots)
        specs.append(
            GameSpec(
                kind=kind,
                game_id=f"sim-{len(seated)}-{i:04d}",
                seats=len(seated),
                bots=seated,
                seed=seeds.game_seed(base, i),
                bots_seed=seeds.bots_seed(base, i),
                timeouts=timeouts,
            )
        )
    return specs


def play_one(spec: GameSpec, out_dir: Path) -> Outcome:
    """Play ``spec`` to its end and write its export; runs in a worker process when ``--jobs`` > 1."""
    bots = list(spec.bots)
    sim = new_game(spec.kind, spec.seats, spec.seed, spec.game_id, bots)
    for _ in play(sim, bots, random.Random(spec.bots_seed), timeouts=spec.timeouts):
        pass
    game = sim.game
    (out_dir / f"{spec.game_id}.ndjson").write_bytes(dumps(export_header(game, with_seed=True), sim.envelopes))
    winner = game.state.winner
    # Standings follow the player, not the seat: after a trade of places another bot may sit in the winning seat.
    player = None if winner is None else game.state.seats[winner].player
    return Outcome(spec.game_id, spec.seats, game.version, winner, player.bot if player else None)


def run(specs: list[GameSpec], out_dir: Path, jobs: int) -> Iterator[Outcome]:
    """Outcomes in the order of ``specs``; with ``jobs`` > 1 the games are spread over that many processes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if jobs <= 1 or len(specs) < 2:
        for spec in specs:
            yield play_one(spec, out_dir)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, min(16, len(specs) // (jobs * 8)))
        yield from pool.map(play_one, specs, [out_dir] * len(specs), chunksize=chunk)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def report(outcomes: list[Outcome], elapsed: float, out_dir: Path, seed_option: str, console: Console) -> None:
    """The run in numbers, then the wins per seat (and per bot, when bots were mixed)."""
    events = sum(o.events for o in outcomes)
    rate = max(elapsed, 1e-9)
    numbers = Table(title="simulation", show_header=False, title_justify="left")
    for label, value in [
        ("games", f"{len(outcomes)}"),
        ("events", f"{events}"),
        ("time", f"{elapsed:.2f} s"),
        ("games/s", f"{len(outcomes) / rate:.1f}"),
        ("events/s", f"{events / rate:,.0f}"),
        ("exported to", str(out_dir)),
    ]:
        numbers.add_row(label, value)
    console.print(numbers)
    console.print(f"--seed {seed_option} writes the same games again", markup=False, soft_wrap=True)
    seated = Counter(s for o in outcomes for s in range(o.seats))
    console.print(_wins("seat", Counter(o.winner for o in outcomes), seated))
    bots = Counter(o.winner_bot for o in outcomes)
    if len(bots) > 1:
        console.print(_wins("bot", bots, None))


def _wins(what: str, wins: Counter, played: Counter | None) -> Table:
    table = Table(title=f"wins per {what}", title_justify="left")
    table.add_column(what)
    table.add_column("wins", justify="right")
    table.add_column("share of games" if played is None else "share of games played in that seat", justify="right")
    total = sum(wins.values())
    for key in sorted(wins, key=lambda k: (k is None, k if isinstance(k, int) else 0, str(k))):
        name = "no winner" if key is None else str(key)
        share = wins[key] / (total if played is None or key is None else played[key] or 1)
        table.add_row(name, str(wins[key]), f"{share:.0%}")
    return table


def main(args: argparse.Namespace) -> int:
    if args.kind == "monopoly" and args.export is None:
        return monopoly_simulate.main(args)
    console = Console(highlight=False)
    if args.export is None:
        console.print("error: --export DIR is required (only monopoly counts squares without it)", markup=False)
        return 2
    try:
        bots = bot_names(args.kind, args.bots or default_bots(args.kind, "greedy"))
        base = seeds.parse_base(args.seed)
        seats = (seats_of(args.kind, args.seats[0]), seats_of(args.kind, args.seats[1])) if args.seats else (seats_of(args.kind, None),) * 2
    except ValueError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    if args.games < 1 or not 0 <= args.timeouts <= 1:
        console.print("error: --games must be at least 1 and --timeouts between 0 and 1", markup=False)
        return 2
    specs = plan(args.kind, args.games, seats, bots, base, args.timeouts)
    jobs = args.jobs or os.cpu_count() or 1
    out_dir = Path(args.export)
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    with _progress(Console(stderr=True)) as bar:
        task = bar.add_task("games", total=len(specs))
        for outcome in run(specs, out_dir, jobs):
            outcomes.append(outcome)
            bar.advance(task)
    report(outcomes, time.perf_counter() - started, out_dir, args.seed or f"0x{base.hex()}", console)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    description = __doc__.replace("``", "")
    p = sub.add_parser("simulate", help="play bot games in memory and export each one", description=description)
    p.add_argument("kind", choices=sorted(GAMES), help="the game")
    p.add_argument("--games", type=int, default=100, help="how many games (default 100)")
    p.add_argument("--seats", type=seat_counts, help="seats: 4, or a range like 2-8 (default 4, or what the kind allows)")
    p.add_argument("--export", metavar="DIR", help="write DIR/<game_id>.ndjson for every game (monopoly without it: where turns end)")
    p.add_argument("--bots", help="bots seated in turn, e.g. greedy,random (default greedy)")
    p.add_argument("--seed", help="base seed, decimal or hex (default: random, printed so the run can be repeated)")
    p.add_argument("--timeouts", type=float, default=0.0, help="share of waits left to the server's deadline (0-1)")
    p.add_argument("--jobs", "--workers", type=int, default=0, help="worker processes (default: one per CPU)")
    monopoly_simulate.add_arguments(p)
    p.set_defaults(func=main)
