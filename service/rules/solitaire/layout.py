"""The solitaire's grid (RULES.md §2): four rows of thirteen slots, 48 cards and four gaps.

Pure functions on plain tuples, so the decider, the solver and the bots share one reading of the
rules and a layout can be hashed, compared and stored as it is.

Conventions, fixed here for every caller:

- A card is two characters, rank then suit: ranks ``A23456789TJQK``, suits ``CDHS`` (``"2H"``, ``"TD"``).
- A row is a 13-tuple; ``None`` is a gap. A layout is four rows.
- **Rows are 0-based (0..3); slots are 1-based (1..13)** in moves, commands and documents, because
  slot 1 is what the rules talk about ("a gap in slot 1 takes any two"). Inside a row tuple the
  slot ``s`` lives at index ``s - 1``.
"""

from __future__ import annotations

from typing import Final

from ..rng import shuffle

Card = str
Row = tuple[Card | None, ...]
Layout = tuple[Row, Row, Row, Row]
Move = tuple[Card, int, int]
"""``(card, row 0..3, slot 1..13)``: the card and the gap it goes to."""
Played = tuple[Card, int, int, int, int]
"""``(card, from row, from slot, to row, to slot)``: a move as it happened, with where the card left."""

RANKS: Final = "A23456789TJQK"
SUITS: Final = "CDHS"
ROWS: Final = 4
SLOTS: Final = 13
RUN_COMPLETE: Final = 12
"""A finished row: two to king, twelve cards."""
DECK: Final[tuple[Card, ...]] = tuple(r + s for s in SUITS for r in RANKS)
"""The unshuffled deck: clubs, diamonds, hearts, spades, each ace to king. Every shuffle starts from it."""
_ORDER: Final = {card: i for i, card in enumerate(DECK)}
DEAL_STREAM: Final = "deal"


def rank_of(card: Card) -> int:
    """1 for an ace .. 13 for a king."""
    return RANKS.index(card[0]) + 1


def suit_of(card: Card) -> str:
    return card[1]


def card_of(rank: int, suit: str) -> Card:
    return RANKS[rank - 1] + suit


def is_card(text: object) -> bool:
    """Whether ``text`` names a card of the deck (aces included: they exist, they are only out of play)."""
    return isinstance(text, str) and text in _ORDER


def deck_order(cards: list[Card] | tuple[Card, ...]) -> list[Card]:
    """``cards`` in the unshuffled deck's order: the fixed order a shuffle starts from."""
    return sorted(cards, key=_ORDER.__getitem__)


def deal_rows(cards: list[Card | None]) -> Layout:
    """52 slots, row by row, into four rows of thirteen."""
    return tuple(tuple(cards[r * SLOTS : (r + 1) * SLOTS]) for r in range(ROWS))  # type: ignore[return-value]


def deal(seed: bytes) -> Layout:
    """The opening layout: the deck shuffled on stream ``deal``, dealt row by row, the aces taken out."""
    cards = shuffle(seed, DEAL_STREAM, DECK)
    return deal_rows([None if c[0] == "A" else c for c in cards])


def cell(layout: Layout, row: int, slot: int) -> Card | None:
    """What lies at ``(row, slot)``, slot 1-based."""
    return layout[row][slot - 1]


def find(layout: Layout, card: Card) -> tuple[int, int] | None:
    """``(row, slot)`` of ``card``, or ``None`` if it is not on the board (an ace)."""
    for r, row in enumerate(layout):
        for i, c in enumerate(row):
            if c == card:
                return r, i + 1
    return None


def gaps(layout: Layout) -> list[tuple[int, int]]:
    """Every gap as ``(row, slot)``, row by row, left to right."""
    return [(r, i + 1) for r, row in enumerate(layout) for i, c in enumerate(row) if c is None]


def fillers(layout: Layout, row: int, slot: int) -> list[Card]:
    """The cards the gap at ``(row, slot)`` takes, in a fixed order (empty for a dead gap or a non-gap).

    Slot 1 takes the twos, and nothing else. Any other gap takes the successor of its left card
    (none after a king) and the predecessor of its right card (none before a two: aces are out).
    Slot 1 has no left neighbour and slot 13 no right one: rows do not wrap.
    """
    line = layout[row]
    if line[slot - 1] is not None:
        return []
    if slot == 1:
        return [card_of(2, s) for s in SUITS]
    out: list[Card] = []
    left = line[slot - 2]
    if left is not None and rank_of(left) < 13:
        out.append(card_of(rank_of(left) + 1, suit_of(left)))
    right = line[slot] if slot < SLOTS else None
    if right is not None and rank_of(right) > 2:
        below = card_of(rank_of(right) - 1, suit_of(right))
        if below not in out:
            out.append(below)
    return out


def fits(layout: Layout, card: Card, row: int, slot: int) -> bool:
    """Whether ``card`` may go to the gap at ``(row, slot)``."""
    return card in fillers(layout, row, slot)


def legal_moves(layout: Layout) -> list[Move]:
    """Every legal move, gap by gap (row by row, left to right), each gap's cards in ``fillers`` order."""
    return [(card, r, s) for r, s in gaps(layout) for card in fillers(layout, r, s)]


def apply_move(layout: Layout, move: Move) -> Layout:
    """The layout after ``move``: the card leaves its slot (now a gap) for the named gap.

    Legality is the caller's to check (``fits``); this only refuses what would break the board.
    """
    card, row, slot = move
    origin = find(layout, card)
    if origin is None or layout[row][slot - 1] is not None:
        raise ValueError(f"cannot move {card} to row {row} slot {slot}")
    rows = [list(line) for line in layout]
    rows[origin[0]][origin[1] - 1] = None
    rows[row][slot - 1] = card
    return tuple(tuple(line) for line in rows)  # type: ignore[return-value]


def played(layout: Layout, move: Move) -> Played:
    """``move`` with the slot its card leaves, read from the layout before it."""
    origin = find(layout, move[0])
    if origin is None:
        raise ValueError(f"{move[0]} is not on the board")
    return (move[0], origin[0], origin[1], move[1], move[2])


def run_length(row: Row) -> int:
    """The row's run: a two in slot 1, then the same suit one rank up, slot by slot."""
    first = row[0]
    if first is None or rank_of(first) != 2:
        return 0
    n = 1
    while n < SLOTS:
        card = row[n]
        if card is None or suit_of(card) != suit_of(first) or rank_of(card) != n + 2:
            break
        n += 1
    return n


def runs(layout: Layout) -> tuple[int, int, int, int]:
    return tuple(run_length(row) for row in layout)  # type: ignore[return-value]


def grows_run(layout: Layout, move: Move) -> bool:
    """Whether ``move`` lengthens some row's run (the hint's first preference)."""
    return sum(runs(apply_move(layout, move))) > sum(runs(layout))


def redeal_stream(k: int) -> str:
    return f"redeal:{k}"


def redeal(layout: Layout, seed: bytes, k: int) -> Layout:
    """Redeal number ``k`` (1, 2): runs stay; the rest is shuffled and dealt back after them.

    Every card outside a run is gathered and put in deck order (so the input does not depend on
    where the cards happened to lie), shuffled on stream ``redeal:<k>``, and dealt row by row: each
    row keeps its run, then one gap, then cards to slot 13. The counts always match (48 cards minus
    the runs fill 52 slots minus the runs minus four gaps); a complete row's gap is its slot 13.
    Undoing and redoing redeal ``k`` therefore deals the same cards again.
    """
    lengths = runs(layout)
    seated = {card for row, n in zip(layout, lengths) for card in row[:n]}
    gathered = deck_order([c for row in layout for c in row if c is not None and c not in seated])
    cards = iter(shuffle(seed, redeal_stream(k), gathered))
    rows: list[Row] = []
    for row, n in zip(layout, lengths):
        rest = SLOTS - n - 1
        rows.append(tuple(row[:n]) + (None,) + tuple(next(cards) for _ in range(rest)))
    return tuple(rows)  # type: ignore[return-value]


def won(layout: Layout) -> bool:
    """Every row reads two to king of one suit in slots 1–12; slot 13 is then necessarily the gap."""
    return all(run_length(row) == RUN_COMPLETE for row in layout)


def is_shuttle(layout: Layout, move: Move, previous: Played | None) -> bool:
    """Whether ``move`` puts the card just moved straight back where it came from.

    ``previous`` is the last move played (``played``); the card must still lie where it went.
    A card that fits from both sides could go back and forth for ever: the hint never offers that.
    """
    if previous is None:
        return False
    card, from_row, from_slot, to_row, to_slot = previous
    return move == (card, from_row, from_slot) and cell(layout, to_row, to_slot) == card


def parse(text: str) -> Layout:
    """A layout from four lines of thirteen tokens, ``..`` for a gap: the tests' and documents' notation."""
    lines = [line.split() for line in text.strip().splitlines()]
    if len(lines) != ROWS or any(len(line) != SLOTS for line in lines):
        raise ValueError("a layout is 4 lines of 13 tokens")
    return tuple(tuple(None if t == ".." else t for t in line) for line in lines)  # type: ignore[return-value]


def render(layout: Layout) -> str:
    """The inverse of ``parse``."""
    return "\n".join(" ".join(c or ".." for c in row) for row in layout)


def well_formed(layout: Layout) -> bool:
    """48 cards (no aces), each exactly once, and four gaps in four rows of thirteen."""
    if len(layout) != ROWS or any(len(row) != SLOTS for row in layout):
        return False
    cards = [c for row in layout for c in row if c is not None]
    return len(cards) == 48 and set(cards) == {c for c in DECK if c[0] != "A"}
