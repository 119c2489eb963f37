"""The table at one point of an exported log, drawn for a terminal with rich.

An export is the full record, so the table is the admin's view (``view(None, reveal=True)``): every hand.
One renderer per game kind, registered by ``@renderer(kind)``; a new game adds one function here.
Each renderer takes the rules' own view of the state (never the state itself), so what it draws is what
the service shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from service.events.audit import iso
from service.rules.engine import Game

Renderer = Callable[[Any], RenderableType]
RENDERERS: dict[str, Renderer] = {}


def renderer(kind: str) -> Callable[[Renderer], Renderer]:
    def register(fn: Renderer) -> Renderer:
        RENDERERS[kind] = fn
        return fn

    return register


def render(game: Game) -> RenderableType:
    """The table of ``game`` at its current version, every hidden part shown."""
    kind = game.rules.KIND
    try:
        draw = RENDERERS[kind]
    except KeyError:
        return Text(f"(no renderer for {kind} games yet)")
    return draw(game.view(None, reveal=True))


# --- free-parking ---------------------------------------------------------------------------------------


def _card(c: Any) -> str:
    return c.id


@renderer("free-parking")
def free_parking(v: Any) -> RenderableType:
    head = Text()
    head.append(f"{v.kind} · {v.status} · {v.mode} · version {v.version}\n", style="bold")
    head.append(f"round {v.round} · dealer seat {v.dealer} · turn {v.turn_number}: seat {v.turn} to play · phase {v.phase}")
    if v.winner is not None:
        head.append(f"\nwinner: seat {v.winner}", style="bold green")
    table = Table(show_lines=False, expand=False, pad_edge=False)
    for col, justify in (("seat", "right"), ("player", "left"), ("meter", "right"), ("points", "right")):
        table.add_column(col, justify=justify, no_wrap=True)
    table.add_column("point cards", overflow="fold")
    table.add_column("hand", no_wrap=True)
    if v.mode != "standard":
        table.add_column("total", justify="right")
    for p in v.players:
        turn = p.seat == v.turn and v.status == "playing"
        who = p.name or "(empty)"
        if p.bot:
            who += f" [{p.bot}]"
        hand = " ".join(map(_card, p.hand)) if p.hand is not None else f"{p.hand_size} cards"
        row = [
            ("▶ " if turn else "") + str(p.seat),
            who,
            f"{p.meter}",
            f"{p.points}",
            " ".join(map(_card, p.point_cards)) or "-",
            hand or "-",
        ]
        if v.mode != "standard":
            row.append(str(p.total))
        table.add_row(*row, style="bold" if turn else None)
    d = v.decks
    decks = Text(
        f"decks: playing {d.playing} · discard {len(d.discard)}"
        + (f" (top {d.discard[-1].id})" if d.discard else "")
        + f" · second chance {d.second_chance} · second chance discard {len(d.second_chance_discard)}"
        + (f" (top {d.second_chance_discard[-1]})" if d.second_chance_discard else "")
    )
    return Group(head, table, decks, Text(_pending(v.pending)))


def _pending(p: Any) -> str:
    if p is None:
        return "pending: nothing"
    owed = {"respond": "respond", "target": "choose a target", "card": "choose a card", "position": "choose a position"}
    text = f"pending: seat {p.seat} to {owed.get(p.kind, p.kind)} by {iso(p.deadline_at)}"
    if p.action is not None:
        a = p.action
        text += f" — {a.kind} ({a.card}) by seat {a.by}" + (f" against seat {a.target}" if a.target is not None else "")
    if p.options:
        text += f"; options {', '.join(map(str, p.options))}"
    return text


# --- solitaire ------------------------------------------------------------------------------------------


@renderer("solitaire")
def solitaire(v: Any) -> RenderableType:
    status = v.status + (f" ({v.result}" + (f", {v.reason}" if v.reason else "") + ")" if v.result else "")
    head = Text(f"{v.kind} · {status} · version {v.version} · redeals left {v.redeals_left}", style="bold")
    if not v.layout:
        return Group(head, Text("(not dealt yet)"))
    grid = Table(show_header=True, pad_edge=False, box=None, padding=(0, 1))
    grid.add_column("row", justify="right", style="dim")
    for slot in range(1, len(v.layout[0]) + 1):
        grid.add_column(str(slot), justify="center", no_wrap=True)
    for r, row in enumerate(v.layout):
        run = v.runs[r] if r < len(v.runs) else 0
        cells: list[Text | str] = [str(r)]
        for i, card in enumerate(row):
            if card is None:
                cells.append(Text("··", style="dim"))
            else:
                cells.append(Text(card, style=("bold green" if i < run else _suit_style(card))))
        grid.add_row(*cells)
    runs = ", ".join(f"row {r} {n}" for r, n in enumerate(v.runs))
    return Group(head, grid, Text(f"runs (from slot 1, highlighted): {runs}"))


def _suit_style(card: str) -> str:
    return "red" if card[1] in "DH" else ""
