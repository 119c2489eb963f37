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
from rich.markup import escape
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


# --- monopoly -------------------------------------------------------------------------------------------

_HOTEL = 5


def _site(square: int, board: list[Any]) -> str:
    return board[square].name


def _buildings(level: int) -> str:
    if level == _HOTEL:
        return "hotel"
    return f"{level} house{'s' if level != 1 else ''}" if level else "-"


def _owner(seat: int | None) -> str:
    return "bank" if seat is None else f"seat {seat}"


def _holdings(h: Any, board: list[Any]) -> str:
    parts = [f"${h.cash}"] if h.cash else []
    parts += [_site(q, board) for q in h.squares] + [f"jail card {c}" for c in h.jail_cards]
    return ", ".join(parts) or "nothing"


@renderer("monopoly")
def monopoly(v: Any) -> RenderableType:
    head = Text()
    head.append(f"{v.kind} · {v.status} · version {v.version}\n", style="bold")
    rounds = f"round {v.round}" + (f" of {v.max_rounds}" if v.max_rounds else "")
    doing = "to roll" if v.step == "roll" else "moving"
    dice = f"dice {v.dice[0]}+{v.dice[1]}" if v.dice else "no dice rolled yet"
    head.append(
        f"{rounds} · seat {v.turn_seat} {doing} · {dice}" + (f" · doubles in a row {v.doubles}" if v.doubles else "")
    )
    if v.winner is not None:
        head.append(f"\nwinner: seat {v.winner} ({v.end_reason})", style="bold green")
    return Group(
        head,
        _monopoly_players(v),
        _monopoly_board(v),
        Text(f"bank: {v.houses} houses · {v.hotels} hotels"),
        *_monopoly_waits(v),
    )


def _monopoly_players(v: Any) -> Table:
    table = Table(show_lines=False, expand=False, pad_edge=False)
    for col, justify in (
        ("seat", "right"),
        ("player", "left"),
        ("cash", "right"),
        ("position", "left"),
        ("jail", "left"),
        ("jail cards", "left"),
        ("worth", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)
    for p in v.seats:
        turn = p.seat == v.turn_seat and v.status == "playing"
        who = escape((p.name or "(empty)") + (f" [{p.bot}]" if p.bot else ""))  # a bot's name in brackets is no markup
        jail = f"in jail (tries {p.jail_tries})" if p.in_jail else "-"
        row = [
            ("▶ " if turn else "") + str(p.seat),
            who,
            f"${p.cash}",
            _site(p.position, v.board),
            jail,
            " ".join(p.jail_cards) or "-",
            f"${p.worth}",
        ]
        if p.bankrupt:
            row[3], row[4] = "bankrupt", "-"
        table.add_row(*row, style="bold" if turn else ("dim" if p.bankrupt else None))
    return table


def _monopoly_board(v: Any) -> Table:
    table = Table(show_lines=False, expand=False, pad_edge=False)
    for col, justify in (
        ("square", "right"),
        ("property", "left"),
        ("group", "left"),
        ("price", "right"),
        ("owner", "left"),
        ("buildings", "left"),
        ("mortgaged", "left"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)
    for site in v.board:
        if not site.price:
            continue
        owned = site.owner is not None
        row = [
            str(site.square),
            site.name,
            site.group or "-",
            f"${site.price}",
            _owner(site.owner),
            _buildings(site.level),
            "yes" if site.mortgaged else "-",
        ]
        table.add_row(*row, style=None if owned else "dim")
    return table


def _monopoly_waits(v: Any) -> list[Text]:
    out = []
    if v.offer is not None:
        o = v.offer
        what = (
            f"buy {_site(o.square, v.board)} for ${o.price} or decline" if o.kind == "buy" else "choose the Income Tax"
        )
        out.append(Text(f"offer: seat {o.seat} to {what} by {iso(o.deadline_at)}"))
    if v.auction is not None:
        a = v.auction
        lot = a.lot if isinstance(a.lot, str) else _site(a.lot, v.board)
        high = f"high bid ${a.high_bid} by seat {a.high_seat}" if a.high_seat is not None else "no bid yet"
        passed = f" · passed {', '.join(map(str, a.passed))}" if a.passed else ""
        after = f" · {a.lots_after} more lots after it" if a.lots_after else ""
        out.append(
            Text(
                f"auction: {lot} among seats {', '.join(map(str, a.bidders))} · {high} · next bid at least "
                f"${a.min_bid}{passed} · closes {iso(a.deadline_at)}{after}"
            )
        )
    if v.shortage is not None:
        w = v.shortage
        claims = (
            "; ".join(f"seat {c.seat}: {', '.join(_site(q, v.board) for q in c.sites)}" for c in w.claims) or "none"
        )
        waiting = f"awaiting {', '.join(map(str, w.awaited)) or 'nobody'} by {iso(w.deadline_at)}"
        out.append(Text(f"shortage of {w.kind}s: bank holds {w.bank} · claims {claims} · {waiting}"))
    for d in v.debts:
        out.append(
            Text(f"debt: seat {d.seat} owes {_owner(d.creditor)} ${d.amount} ({d.reason}) by {iso(d.deadline_at)}")
        )
    for t in v.trades:
        out.append(
            Text(
                f"trade {t.trade}: seat {t.seat} gives {_holdings(t.give, v.board)} to seat {t.to} for "
                f"{_holdings(t.get, v.board)}, answer by {iso(t.deadline_at)}"
            )
        )
    p = v.pending
    if p is None:
        out.append(Text("pending: nothing"))
    else:
        seats = ", ".join(map(str, p.seats)) or str(p.seat)
        out.append(
            Text(f"pending: {p.kind}, awaiting seat{'s' if len(p.seats) > 1 else ''} {seats} by {iso(p.deadline_at)}")
        )
    return out
