"""One line of plain words per event, for audit logs. The solitaire has no hidden part, so ``secret_note`` is empty."""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import solitaire as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from .. import close
from ..setup import client_seed_note


@singledispatch
def summary(e: msgspec.Struct) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


@summary.register
def _(e: ev.GameCreated) -> str:
    chosen = ", seed chosen by the player" if e.config.seed_chosen else ""
    return f"solitaire created{chosen}, seed commitment {e.seed_commitment[:16]}…"


@summary.register
def _(e: SeatTaken) -> str:
    who = f"bot {e.player.bot}" if e.player.bot else e.player.name
    return f"played by {who}{client_seed_note(e)}"


@summary.register
def _(e: ev.LayoutDealt) -> str:
    return "dealt: " + " / ".join(_row(r) for r in e.layout)


@summary.register
def _(e: ev.CardMoved) -> str:
    return f"{e.card} moves from row {e.from_.row} slot {e.from_.slot} to row {e.to.row} slot {e.to.slot}"


@summary.register
def _(e: ev.Redealt) -> str:
    return f"redeal {e.k}: " + " / ".join(_row(r) for r in e.layout)


@summary.register
def _(e: ev.Undone) -> str:
    what = "move" if e.step == "card_moved" else "redeal"
    return f"undo: the {what} at seq {e.undoes} is taken back"


@summary.register
def _(e: ev.GameWon) -> str:
    return f"won, with {e.redeals_used} redeal{'s' if e.redeals_used != 1 else ''} used"


@summary.register
def _(e: ev.GameLost) -> str:
    why = "no move and no redeal left" if e.reason == "no_moves" else "resigned"
    return f"lost ({why}) with runs {', '.join(map(str, e.runs))}"


@summary.register
def _(e: GameClosed) -> str:
    return close.summary(e)


@summary.register
def _(e: SeedRevealed) -> str:
    return f"seed revealed: {e.seed}"


def _row(row: tuple[str | None, ...]) -> str:
    return " ".join(c or ".." for c in row)


def secret_note(e: msgspec.Struct) -> str:
    """Nothing is hidden in a solitaire's events."""
    return ""


def secret_seen_by(e: msgspec.Struct, seat: int) -> bool:
    """The solitaire has no hidden part: there is nothing for a seat's record to keep."""
    return False
