"""``python -m service play``: bots play one seeded game in memory, audited (``make run`` serves HTTP instead).

It prints the game's full audit (every secret spelled out: the game is over), the final scores and
the winner, then verifies the game's own export the way anyone holding the file would.
"""

from __future__ import annotations

import argparse
import random

from rich.console import Console
from rich.table import Table

from replays.verify import Verdict, verify
from service.events.export import dumps, load
from service.rules.engine import GAMES, Game, audit_lines, export_header
from service.rules.solitaire.layout import render
from service.sim.games import Simulation, new_game, play

from service.sim import seeds
from .simulate import bot_names, default_bots, seats_of


def play_game(kind: str, seats: int, bots: tuple[str, ...], base: bytes, timeouts: float) -> Simulation:
    names = [bots[i % len(bots)] for i in range(seats)]
    seed = seeds.game_seed(base, 0)
    sim = new_game(kind, seats, seed, f"play-{seed.hex()[:8]}", names)
    for _ in play(sim, names, random.Random(seeds.bots_seed(base, 0)), timeouts=timeouts):
        pass
    return sim


def own_verdict(sim: Simulation) -> Verdict:
    """Write the export to bytes and verify what was written, not the objects in memory."""
    header, envelopes = load(dumps(export_header(sim.game, with_seed=True), sim.envelopes))
    return verify(header, envelopes)


def scores(game: Game) -> Table:
    view = game.view(None, reveal=True)
    table = Table(title="final scores", title_justify="left")
    for column in ("seat", "player", "points", "meter", "point cards"):
        table.add_column(column, justify="right" if column in ("seat", "points", "meter") else "left")
    for p in view.players:
        won = p.seat == view.winner
        table.add_row(
            str(p.seat),
            (p.name or "—") + ("  ★ winner" if won else ""),
            str(p.points),
            str(p.meter),
            " ".join(c.id for c in p.point_cards),
            style="bold green" if won else None,
        )
    return table


def show(sim: Simulation, seed_option: str, verdict: Verdict, console: Console) -> None:
    game = sim.game
    seats = game.state.config.seats
    console.rule(f"[bold]{game.rules.KIND}[/] · {game.game_id} · {seats} seats · {len(sim.envelopes)} events")
    for text in audit_lines(game.rules, sim.envelopes, reveal=True):
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    console.print()
    if game.rules.KIND == "solitaire":
        console.print(render(game.state.layout), markup=False, highlight=False)
        outcome = "won" if game.state.phase == "won" else f"lost ({game.state.lost_reason})"
        console.print(outcome, style="bold green" if game.state.phase == "won" else "bold yellow", markup=False)
    else:
        _show_winner(game, console)
    console.print(verdict.summary(), style="green" if verdict.ok else "bold red", markup=False, highlight=False)
    console.print(f"play this game again with --seed {seed_option}", style="dim", markup=False)


def _show_winner(game: Game, console: Console) -> None:
    console.print(scores(game))
    winner = game.state.winner
    if winner is None:
        console.print("no winner", style="bold yellow")
    else:
        player = game.view(None, reveal=True).players[winner]
        text = f"winner: seat {winner} ({player.name}) with {player.points} points"
        console.print(text, style="bold green", markup=False)


def main(args: argparse.Namespace) -> int:
    console = Console(soft_wrap=True)
    try:
        bots = bot_names(args.kind, args.bots or default_bots(args.kind, "greedy,random"))
        base = seeds.parse_base(args.seed)
        seats = seats_of(args.kind, args.seats)
    except ValueError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    sim = play_game(args.kind, seats, bots, base, args.timeouts)
    verdict = own_verdict(sim)
    show(sim, args.seed or f"0x{base.hex()}", verdict, console)
    return 0 if verdict.ok else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="bots play one game in memory; print its audit, the scores and its verdict")
    add_arguments(p)
    p.set_defaults(func=main)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", choices=sorted(GAMES), default="free-parking", help="the game (default free-parking)")
    p.add_argument("--seats", type=int, help="seats (default 4, or what the kind allows: a solitaire has 1)")
    p.add_argument("--bots", help="bots seated in turn (default greedy,random, or greedy where the kind has no random)")
    p.add_argument("--seed", help="base seed, decimal or hex (default: random, printed so the game can be replayed)")
    p.add_argument(
        "--timeouts", type=float, default=0.1, help="share of waits left to the server's deadline (default 0.1)"
    )
