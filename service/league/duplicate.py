"""``python -m service.league.duplicate``: what duplicate deals are for, measured (issue 34; docs/tournaments.md,
"Duplicate deals, measured").

An *event* is a tournament over rounds (``service.sim.tournament``: the service's own draws and standings, in memory)
of ``--players`` entrants, ``--experts`` of them played by ``--strong`` (default ``expert``) and the rest by ``--weak``
(default ``greedy``), at tables of ``--table-size``, for ``--rounds`` rounds of the card game in tournament mode.
Event *i* is played twice from one seed, ``sha256(base ‖ "game:" ‖ i)`` (``service.sim.seeds``, as the league deals
game *i*): once *plain* (each table its own deal, standings by place points) and once *duplicate* (every table of a
round the round's deal, standings by matchpoints). Which entrants are the strong ones is drawn from
``sha256(base ‖ "bots:" ‖ i)``. The same seed, the same draw of round 1, the same bots: only the format differs, so
the two formats are compared event by event (paired).

For each format it reports how often the winner — the entrant ranked 1 — is a strong bot: an event whose first place
is shared by *k* entrants counts each of them 1/k (so a first shared by a strong and a weak bot counts half), and the
events with a shared first are also counted apart. The share has a 95% Wilson interval (``service.sim.intervals``,
as the league's win shares; on a count that may hold halves). Also the strong bots' mean rank (an equal player's:
(players + 1) / 2), and the difference between the formats over the same events: the mean paired difference with a
95% interval (normal approximation), how many events the formats disagree on, and McNemar's exact test on those
where one format's winner was strong and the other's weak.

Every event depends on (``--seed``, its index) and the options alone — the expert's search is bounded by nodes, not
time — so ``--first I --events 1`` replays event I of any run, whatever ``--jobs``; each event's digest (of its draws,
results and standings) is in ``--json``. ``--minutes M`` starts no new event after M minutes: the events played are
always 0 … N − 1 from ``--first``, and the command line printed at the end (with ``--events N``) plays them again.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import shlex
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from service.bots import BOTS
from service.sim import seeds
from service.sim.intervals import Z95, wilson
from service.sim.tournament import simulate_tournament

KIND = "free-parking"
OPTIONS = {"mode": "tournament"}
FORMATS = ("plain", "duplicate")


@dataclass(frozen=True)
class Event:
    """One event: everything its two tournaments depend on."""

    index: int
    seed: bytes
    entrants: tuple[tuple[str, str], ...]
    """(player id, bot) in player-id order."""
    rounds: int
    table_size: int


@dataclass(frozen=True)
class Line:
    player_id: str
    bot: str
    rank: int
    points: float
    score: int


@dataclass(frozen=True)
class Finish:
    """One format of one event: its standings, and a digest of everything played (draws, results, standings)."""

    index: int
    format: str
    strong: str
    standings: tuple[Line, ...]
    digest: str

    @property
    def first(self) -> list[Line]:
        return [line for line in self.standings if line.rank == 1]

    @property
    def credit(self) -> float:
        """The strong bots' share of first place: 1 alone first, 0 not first, 1/k each of k sharing it."""
        first = self.first
        return sum(line.bot == self.strong for line in first) / len(first)

    @property
    def strong_rank(self) -> float:
        ranks = [line.rank for line in self.standings if line.bot == self.strong]
        return sum(ranks) / len(ranks)


def plan(base: bytes, index: int, players: int, experts: int, strong: str, weak: str, rounds: int,
         table_size: int) -> Event:
    """Event ``index`` of a run from ``base``: its seed, and which of ``p00`` … its strong bots play."""
    ids = [f"p{n:02d}" for n in range(players)]
    chosen = set(random.Random(seeds.bots_seed(base, index)).sample(ids, experts))
    entrants = tuple((p, strong if p in chosen else weak) for p in ids)
    return Event(index, seeds.game_seed(base, index), entrants, rounds, table_size)


def play_event(event: Event, fmt: str, strong: str) -> Finish:
    """Play one format of ``event`` to its end; runs in a worker process when ``--jobs`` > 1."""
    bots = dict(event.entrants)
    played = simulate_tournament(KIND, bots, event.rounds, event.table_size, event.seed,
                                 duplicate=fmt == "duplicate", options=dict(OPTIONS))
    lines = tuple(Line(s.player_id, bots[s.player_id], s.rank, s.points, s.score) for s in played.standings)
    digest = hashlib.sha256(msgspec.json.encode(played)).hexdigest()[:16]
    return Finish(event.index, fmt, strong, lines, digest)


def run(events: Iterable[Event], strong: str, jobs: int, deadline: float | None = None) -> Iterator[Finish]:
    """Each event's two finishes, plain then duplicate, as they end; no event is started past ``deadline``
    (``time.monotonic``). With ``jobs`` > 1 the two formats of an event are played in parallel, ``jobs`` games at a
    time; the events started are always the first ones of ``events``, every one of them finished."""
    def late() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    if jobs <= 1:
        for event in events:
            if late():
                return
            for fmt in FORMATS:
                yield play_event(event, fmt, strong)
        return
    pending: set[Future] = set()
    queue = iter(events)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        while True:
            while len(pending) < jobs and not late():
                event = next(queue, None)
                if event is None:
                    break
                pending |= {pool.submit(play_event, event, fmt, strong) for fmt in FORMATS}
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


# --- what the finishes say -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormatSummary:
    format: str
    events: int
    strong_alone: int
    """Events a strong bot finished first alone (or first shared by strong bots only)."""
    weak_alone: int
    shared: int
    """Events whose first place is shared by more than one entrant (whatever their bots)."""
    mixed: int
    """Events whose first place is shared by strong and weak bots: they count as a fraction."""
    credit: float
    """The strong bots' firsts, a shared first counting 1/k each."""
    interval: tuple[float, float]
    strong_rank: float
    strong_rank_interval: tuple[float, float]

    @property
    def share(self) -> float:
        return self.credit / self.events


@dataclass(frozen=True)
class Paired:
    events: int
    difference: float
    """Mean over events of (duplicate's credit − plain's)."""
    interval: tuple[float, float]
    disagree: int
    """Events whose strong bots' credit differs between the formats."""
    only_duplicate: int
    """Events a strong bot won (credit 1) with duplicate deals and a weak one (credit 0) without."""
    only_plain: int
    mcnemar_p: float
    rank_difference: float
    """Mean over events of (duplicate's mean strong rank − plain's): below 0, the strong rank better in duplicate."""
    rank_interval: tuple[float, float]


@dataclass(frozen=True)
class Summary:
    players: int
    experts: int
    formats: tuple[FormatSummary, ...]
    paired: Paired

    @property
    def events(self) -> int:
        return self.paired.events

    @property
    def fair(self) -> float:
        """An equal player's chance of first: what the strong bots' share would be if skill did not show."""
        return self.experts / self.players


def mean_interval(values: list[float]) -> tuple[float, tuple[float, float]]:
    """The mean and a 95% interval by the normal approximation (a single value: no spread known, the interval is
    the whole real line's)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, (-math.inf, math.inf)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)


def mcnemar(b: int, c: int) -> float:
    """The exact two-sided McNemar test: the chance of a split of ``b + c`` discordant events as uneven as ``b``
    against ``c`` if either format were as likely to be the one a strong bot won."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def summarise(finishes: Iterable[Finish]) -> Summary:
    """The report of a run's finishes: only events both of whose formats finished count."""
    by: dict[int, dict[str, Finish]] = {}
    for f in finishes:
        by.setdefault(f.index, {})[f.format] = f
    pairs = [by[i] for i in sorted(by) if all(fmt in by[i] for fmt in FORMATS)]
    if not pairs:
        raise ValueError("no event finished in both formats")
    first = pairs[0]["plain"]
    players, experts = len(first.standings), sum(line.bot == first.strong for line in first.standings)
    out = []
    for fmt in FORMATS:
        played = [p[fmt] for p in pairs]
        credit = sum(f.credit for f in played)
        rank, rank_interval = mean_interval([f.strong_rank for f in played])
        out.append(FormatSummary(
            format=fmt, events=len(played),
            strong_alone=sum(f.credit == 1 for f in played), weak_alone=sum(f.credit == 0 for f in played),
            shared=sum(len(f.first) > 1 for f in played), mixed=sum(0 < f.credit < 1 for f in played),
            credit=credit, interval=wilson(credit, len(played)), strong_rank=rank, strong_rank_interval=rank_interval))  # type: ignore[arg-type]
    diffs = [p["duplicate"].credit - p["plain"].credit for p in pairs]
    difference, interval = mean_interval(diffs)
    rank_difference, rank_interval = mean_interval([p["duplicate"].strong_rank - p["plain"].strong_rank for p in pairs])
    b = sum(p["duplicate"].credit == 1 and p["plain"].credit == 0 for p in pairs)
    c = sum(p["plain"].credit == 1 and p["duplicate"].credit == 0 for p in pairs)
    paired = Paired(events=len(pairs), difference=difference, interval=interval, disagree=sum(d != 0 for d in diffs),
                    only_duplicate=b, only_plain=c, mcnemar_p=mcnemar(b, c), rank_difference=rank_difference,
                    rank_interval=rank_interval)
    return Summary(players=players, experts=experts, formats=tuple(out), paired=paired)


# --- the report ----------------------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _range(low: float, high: float, pct: bool = True) -> str:
    if math.isinf(low) or math.isinf(high):
        return "—"
    return f"{_pct(low)} – {_pct(high)}" if pct else f"{low:.2f} – {high:.2f}"


def _signed(x: float, pct: bool = True) -> str:
    return (f"{x * 100:+.1f} pts" if pct else f"{x:+.2f}").replace("-", "−")


def headers(strong: str, weak: str) -> tuple[str, ...]:
    return ("format", "events", f"{strong} 1st", "1st shared", f"{weak} 1st", f"{strong} 1st share", "95% interval",
            "an equal player's", f"{strong} mean rank", "95% interval")


def rows(s: Summary) -> list[tuple[str, ...]]:
    out = []
    for f in s.formats:
        credit = f"{f.credit:g}" if f.mixed else str(f.strong_alone)
        out.append((f.format, str(f.events), credit, str(f.shared), str(f.weak_alone), _pct(f.share), _range(*f.interval),
                    _pct(s.fair), f"{f.strong_rank:.2f}", _range(*f.strong_rank_interval, pct=False)))
    return out


def paired_rows(s: Summary, strong: str, weak: str) -> list[tuple[str, str]]:
    p = s.paired
    return [
        (f"{strong} first, duplicate − plain", f"{_signed(p.difference)} (95%: {_signed(p.interval[0])} to "
                                                f"{_signed(p.interval[1])})"),
        (f"{strong} mean rank, duplicate − plain", f"{_signed(p.rank_difference, False)} (95%: "
                                                     f"{_signed(p.rank_interval[0], False)} to "
                                                     f"{_signed(p.rank_interval[1], False)})"),
        ("events the formats disagree on", f"{p.disagree} of {p.events}"),
        (f"… {strong} first only with duplicate deals / only without",
         f"{p.only_duplicate} / {p.only_plain} (McNemar exact p = {p.mcnemar_p:.2g})"),
    ]


def terminal(s: Summary, strong: str, weak: str, title: str) -> tuple[Table, Table]:
    out = Table(title=title, title_justify="left")
    for i, header in enumerate(headers(strong, weak)):
        out.add_column(header, justify="left" if i == 0 else "right")
    for row in rows(s):
        out.add_row(*row)
    paired = Table(title="paired: the same events in both formats", title_justify="left")
    paired.add_column("")
    paired.add_column("", justify="right")
    for row in paired_rows(s, strong, weak):
        paired.add_row(*row)
    return out, paired


def markdown(s: Summary, strong: str, weak: str) -> str:
    hs = headers(strong, weak)
    lines = ["| " + " | ".join(hs) + " |", "|---" + "|--:" * (len(hs) - 1) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows(s)]
    lines += ["", "| paired (the same events) | |", "|---|--:|"]
    lines += [f"| {a} | {b} |" for a, b in paired_rows(s, strong, weak)]
    return "\n".join(lines)


def command_line(args: argparse.Namespace, events: int) -> str:
    """The command that plays the same events again (``--jobs`` and the output flags aside: they change nothing)."""
    parts = ["python", "-m", "service.league.duplicate", "--events", str(events), "--players", str(args.players),
             "--experts", str(args.experts), "--rounds", str(args.rounds), "--table-size", str(args.table_size),
             "--seed", args.seed]
    if args.first:
        parts += ["--first", str(args.first)]
    if (args.strong, args.weak) != ("expert", "greedy"):
        parts += ["--strong", args.strong, "--weak", args.weak]
    return shlex.join(parts)


def check(args: argparse.Namespace) -> str | None:
    known = BOTS[KIND]
    for bot in (args.strong, args.weak):
        if bot not in known:
            return f"{KIND} has no bot {bot}: its bots are {', '.join(known)}"
    if args.events is None and args.minutes is None:
        return "say how many events (--events N) or for how long (--minutes M)"
    if (args.events is not None and args.events < 1) or (args.minutes is not None and args.minutes <= 0):
        return "--events and --minutes must be above 0"
    if not 2 <= args.table_size <= 8:
        return f"a {KIND} table seats 2 to 8, not {args.table_size}"
    if args.players < 2 or args.rounds < 1 or args.first < 0:
        return "an event needs two players and a round at least, and --first is an index (0 or more)"
    if not 0 < args.experts < args.players:
        return f"--experts is how many of the {args.players} players are {args.strong}: 1 to {args.players - 1}"
    return None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m service.league.duplicate", description=__doc__.replace("``", ""),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=None, help="events to play (each in both formats)")
    p.add_argument("--minutes", type=float, default=None, help="start no new event after this many minutes")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--players", type=int, default=8, help="entrants an event (default 8)")
    p.add_argument("--experts", type=int, default=4, help="how many of them --strong plays (default 4; the rest --weak)")
    p.add_argument("--rounds", type=int, default=3, help="rounds an event (default 3)")
    p.add_argument("--table-size", type=int, default=4, help="seats a table (default 4)")
    p.add_argument("--strong", default="expert", help="the strong bot (default expert)")
    p.add_argument("--weak", default="greedy", help="the weak bot (default greedy)")
    p.add_argument("--seed", default="0", help="base seed, decimal or hex (default 0)")
    p.add_argument("--first", type=int, default=0, help="the first event's index (default 0): replays a run's events")
    p.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    p.add_argument("--json", default=None, help="write every event's standings and digest, and the summary, here")
    return p


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("[bold]playing"), BarColumn(), MofNCompleteColumn(), TextColumn("tournaments"),
                    TimeElapsedColumn(), console=console)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    problem = check(args)
    try:
        base = seeds.parse_base(args.seed)
    except ValueError as e:
        problem = problem or str(e)
    if problem:
        sys.stderr.write(f"error: {problem}\n")
        return 2
    console = Console(highlight=False, width=max(120, Console().width))
    indices = (range(args.first, args.first + args.events) if args.events is not None
               else itertools.count(args.first))
    events = (plan(base, i, args.players, args.experts, args.strong, args.weak, args.rounds, args.table_size)
              for i in indices)
    started, cpu = time.monotonic(), os.times()
    deadline = started + args.minutes * 60 if args.minutes is not None else None
    finishes: list[Finish] = []
    with _progress(Console(stderr=True)) as bar:
        task = bar.add_task("tournaments", total=2 * args.events if args.events is not None else None)
        for finish in run(events, args.strong, args.jobs, deadline):
            finishes.append(finish)
            bar.advance(task)
    wall, used = time.monotonic() - started, os.times()
    cpu_s = sum(getattr(used, f) - getattr(cpu, f) for f in ("user", "system", "children_user", "children_system"))
    summary = summarise(finishes)
    command = command_line(args, summary.events)
    title = (f"{KIND}, tournament mode: {summary.events} events of {args.players} players ({args.experts} "
             f"{args.strong}, {args.players - args.experts} {args.weak}), {args.rounds} rounds at tables of "
             f"{args.table_size}")
    for out in terminal(summary, args.strong, args.weak, title):
        console.print(out)
    console.print(f"{command}\n{wall:.1f} s wall, {cpu_s:.1f} s CPU, {args.jobs} job(s)", markup=False)
    if args.markdown:
        console.print(markdown(summary, args.strong, args.weak), markup=False, soft_wrap=True)
    if args.json:
        record = {"command": command, "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu_s, 1),
                  "summary": asdict(summary),
                  "events": [asdict(f) for f in sorted(finishes, key=lambda f: (f.index, FORMATS.index(f.format)))]}
        with open(args.json, "w") as out:
            json.dump(record, out, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
