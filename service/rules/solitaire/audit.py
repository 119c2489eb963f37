"""One line of plain words per event, for audit logs (``summary``: raw card ids, rows from 0, as API.md's audit lines),
and the move log's words (``Log``: the page's card names and rows from 1). Nothing is hidden in a solitaire's events."""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import solitaire as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from .. import close
from ..setup import client_seed_note
from ..words import Seats
from . import layout as grid
from .state import REDEALS, STUCK_FROM


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


# --- the move log: the player by name, cards and rows as the page shows them ---------------------------------------

_SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_words(card: str) -> str:
    """A card as the page shows it: ``2C`` → ``2♣``, ``TH`` → ``10♥``, ``KS`` → ``K♠``."""
    return ("10" if card[0] == "T" else card[0]) + _SUITS.get(card[1], card[1])


def place_words(place: ev.Place) -> str:
    """Rows counted from 1 as on the page (the events count them from 0); slots are counted from 1 in both."""
    return f"row {place.row + 1}, slot {place.slot}"


class Log:
    """The words of ``GET /games/{id}/log`` for a solitaire: what the player did in the page's words (``2♣``, rows
    from 1), what an undo took back, and when a position left nothing to do but undo or resign (stuck)."""

    def __init__(self) -> None:
        self.seats = Seats()
        self.seq = 0  # the log is read from seq 1, one event a line: an undo names the step it takes back by seq
        self.steps: dict[int, str] = {}  # seq of a move or redeal → its words, for the undo that takes it back
        self.rules_version = 0
        self.layout: list[list[str | None]] = []
        self.redeals_used = 0

    def line(self, e: msgspec.Struct, following: list[msgspec.Struct], timed_out: bool = False) -> str:
        """``timed_out`` never comes: a solitaire has no deadline (the idle close says so itself)."""
        self.seq += 1
        n = self.seats.name(0)
        text = self._line(e, n)
        self._follow(e)
        if isinstance(e, ev.CardMoved | ev.Redealt | ev.Undone) and self._stuck():
            text += ": stuck — no card fits any gap and no redeal is left; undo or resign"
        self.seats.see(e)
        return text

    def _line(self, e: msgspec.Struct, n: str) -> str:  # noqa: PLR0911 — one case per event kind
        if isinstance(e, ev.GameCreated):
            self.rules_version = e.rules_version
            return "a solitaire deal" + (", the player's chosen deal" if e.config.seed_chosen else "")
        if isinstance(e, SeatTaken):
            bot = f" ({e.player.bot} bot)" if e.player.bot else ""
            return f"{e.player.name}{bot} sits down to play"
        if isinstance(e, ev.LayoutDealt):
            return "the cards are dealt: 4 rows of 13, the aces taken out"
        if isinstance(e, ev.CardMoved):
            self.steps[self.seq] = f"the move of {card_words(e.card)} to {place_words(e.to)}"
            return f"{n} moves {card_words(e.card)} from {place_words(e.from_)} to {place_words(e.to)}"
        if isinstance(e, ev.Redealt):
            self.steps[self.seq] = f"redeal {e.k}"
            return f"{n} redeals ({e.k} of 2): the cards not in a run are shuffled and dealt again"
        if isinstance(e, ev.Undone):
            what = self.steps.get(e.undoes, "the move" if e.step == "card_moved" else "the redeal")
            return f"{n} undoes {what}"
        if isinstance(e, ev.GameWon):
            used = f"{e.redeals_used} redeal{'s' if e.redeals_used != 1 else ''}"
            return f"{n} wins: every row runs 2 to king ({used} used)"
        if isinstance(e, ev.GameLost):
            runs = f"{sum(e.runs)} of 48 cards in their runs"
            return f"{n} resigns with {runs}" if e.reason == "resigned" else f"{n} loses: no move and no redeal left, {runs}"
        return summary(e)

    def _follow(self, e: msgspec.Struct) -> None:
        """The layout and the redeals used, as the game stands after ``e``: what ``stuck`` is read from."""
        if isinstance(e, ev.LayoutDealt | ev.Redealt | ev.Undone):
            self.layout = [list(row) for row in e.layout]
        if isinstance(e, ev.Redealt):
            self.redeals_used += 1
        elif isinstance(e, ev.Undone) and e.step == "redealt":
            self.redeals_used -= 1
        elif isinstance(e, ev.CardMoved) and self.layout:
            self.layout[e.from_.row][e.from_.slot - 1] = None
            self.layout[e.to.row][e.to.slot - 1] = e.card

    def _stuck(self) -> bool:
        """As ``State.stuck``: no move and no redeal left, under a rules version where that is not yet lost."""
        board = tuple(tuple(row) for row in self.layout)
        return (self.rules_version >= STUCK_FROM and bool(board) and self.redeals_used >= REDEALS
                and not grid.won(board) and not grid.legal_moves(board))  # type: ignore[arg-type]

    def notice(self, e: msgspec.Struct, me: int) -> str | None:
        """A solitaire's one player did everything in its log themself: nothing to tell them."""
        return None
