"""The solitaire's greedy bot, written against the view: one move ahead, by a score of the board each move leads to.

It is the server's own ``greedy`` (service/bots/solitaire.py) rewritten for the bot kit: on every view it chooses
exactly what the server's greedy chooses at that moment (tests/client/test_examples.py checks it on seeded games).
A solitaire has no queue: the kit creates its own games. Run it against a local service:

    python -m free_parking_client play examples/greedy_solitaire.py:GreedySolitaire \\
        --url http://127.0.0.1:8000 --kind solitaire --games 20

The view (docs/solitaire-api.md): ``layout`` is four rows of thirteen slots, a card (``"5H"``: rank ``A23456789TJQK``
then suit) or ``null`` for a gap; ``redeals_left``; ``legal`` lists every move (``{"type": "move", "card", "to":
{"row", "slot"}}``, slots counted from 1), then ``redeal``, ``undo`` and ``resign``. A gap in slot 1 takes a two;
any other gap takes the card one rank above its left neighbour, or one below its right neighbour, in suit. Each row
wants a run: a two in slot 1, then its suit upwards.

The view shows the board, not how the game got there, and the greedy bot never goes back to a board the game has
been on: so this bot remembers every board it was asked about. The kit makes one bot per game and asks it at every
board of that game (only this bot moves in a solitaire).
"""

from __future__ import annotations

from free_parking_client import Bot

RANKS = "A23456789TJQK"
SLOTS = 13
RUN_COMPLETE = 12
"""A finished row: two to king."""
NEUTRAL_MOVES = 100
"""Moves a deal after which only moves that seat a card are taken: with the boards remembered, every game ends."""

# The score of a board (``worth``): what a redeal keeps first, then what makes the next card seatable.
SEATED = 100  # each card in a run: all a redeal keeps
GAP_AFTER_RUN = 50  # each gap right after a run: the run's next card can go there at once
DEAD_GAP = -40  # each gap nothing fits (after a king, or after another gap): lost until the next redeal
RUN_FREED = 10  # each row whose card right after its run fits a gap elsewhere: one move opens a live gap
BOND = 3  # each card right of the card one rank below it in suit: a stepping stone for a run
MOBILITY = 1  # each legal move: more moves, more ways on


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def successor(card: str | None) -> str | None:
    """The next card up in suit (``None`` after a king, and for an ace: aces are out of play)."""
    if card is None or card[0] in "AK":
        return None
    return RANKS[rank(card)] + card[1]


def run_length(row: tuple) -> int:
    """The row's run: a two in slot 1, then its suit one rank up, slot by slot."""
    n = 0
    while n < SLOTS and row[n] is not None and (row[n][0] == "2" if n == 0 else row[n] == successor(row[n - 1])):
        n += 1
    return n


def seated(board: tuple) -> int:
    return sum(run_length(row) for row in board)


def fillers(board: tuple, row: int, slot: int) -> list[str]:
    """The cards the gap at (row, slot) takes: the twos in slot 1; else its left card's successor and its right
    card's predecessor."""
    line = board[row]
    if slot == 1:
        return ["2" + suit for suit in "CDHS"]
    out = []
    left = line[slot - 2]
    if left is not None and left[0] != "K":
        out.append(successor(left))
    right = line[slot] if slot < SLOTS else None
    if right is not None and rank(right) > 2:
        below = RANKS[rank(right) - 2] + right[1]
        if below not in out:
            out.append(below)
    return out


def gaps(board: tuple) -> list[tuple[int, int]]:
    return [(r, i + 1) for r, line in enumerate(board) for i, card in enumerate(line) if card is None]


def worth(board: tuple) -> int:
    """The greedy bot's score of a board (the weights above)."""
    lengths = [run_length(row) for row in board]
    score = SEATED * sum(lengths)
    fitting: set[str] = set()
    for row, slot in gaps(board):
        fits = fillers(board, row, slot)
        fitting.update(fits)
        score += MOBILITY * len(fits)
        if not fits:
            score += DEAD_GAP
        elif slot == lengths[row] + 1:
            score += GAP_AFTER_RUN
    for line, n in zip(board, lengths):
        score += BOND * sum(1 for a, b in zip(line, line[1:]) if a is not None and b is not None and successor(a) == b)
        if n < RUN_COMPLETE and line[n] in fitting:
            score += RUN_FREED
    return score


def bonds_at(board: tuple, row: int, slot: int) -> int:
    """Bonds of the card at (row, slot): with its left neighbour (or a two in slot 1), and with its right one."""
    line = board[row]
    card = line[slot - 1]
    if card is None:
        return 0
    left = card[0] == "2" if slot == 1 else line[slot - 2] is not None and successor(line[slot - 2]) == card
    right = slot < SLOTS and line[slot] is not None and successor(card) == line[slot]
    return int(left) + int(right)


def find(board: tuple, card: str) -> tuple[int, int]:
    for r, line in enumerate(board):
        if card in line:
            return r, line.index(card) + 1
    raise ValueError(f"{card} is not on the board")


def moved(board: tuple, card: str, origin: tuple[int, int], row: int, slot: int) -> tuple:
    """The board after ``card`` leaves ``origin`` (now a gap) for the gap at (row, slot)."""
    rows = [list(line) for line in board]
    rows[origin[0]][origin[1] - 1] = None
    rows[row][slot - 1] = card
    return tuple(tuple(line) for line in rows)


class GreedySolitaire(Bot):
    def __init__(self) -> None:
        self.boards: set[tuple] = set()  # every board of this game it was asked about
        self.deals: dict[int, set[tuple]] = {}  # the boards of each deal, by the redeals left in it

    def act(self, view):
        v = view.raw
        board = tuple(tuple(row) for row in v["layout"])
        self.boards.add(board)
        this_deal = self.deals.setdefault(v["redeals_left"], set())
        this_deal.add(board)
        moves_this_deal = len(this_deal) - 1  # each move made a new board
        move = self.choose(board, view.legal, moves_this_deal)
        if move is not None:
            return move
        return {"type": "redeal"} if v["redeals_left"] > 0 else {"type": "resign"}

    def options(self, board: tuple, legal: list[dict]) -> list[tuple[dict, tuple, int]]:
        """The moves that unseat no card, each with the board it leads to and the cards it seats: most cards seated
        first, then most bonds made, then ``legal``'s order."""
        now = seated(board)
        scored = []
        for i, command in enumerate(c for c in legal if c["type"] == "move"):
            card, row, slot = command["card"], command["to"]["row"], command["to"]["slot"]
            origin = find(board, card)
            after = moved(board, card, origin, row, slot)
            gained = seated(after) - now
            if gained >= 0:
                bonds = bonds_at(after, row, slot) - bonds_at(board, *origin)
                scored.append((-gained, -bonds, i, command, after))
        scored.sort(key=lambda t: t[:3])
        return [(command, after, -minus_gained) for minus_gained, _, _, command, after in scored]

    def choose(self, board: tuple, legal: list[dict], moves_this_deal: int) -> dict | None:
        """The move to the board of most ``worth`` (the first on a tie) that goes to no board seen before: taken if
        it seats a card, or, in a deal's first ``NEUTRAL_MOVES`` moves, if the board's worth does not drop.
        ``None``: no such move (redeal, or with none left resign)."""
        best = None
        for command, after, gained in self.options(board, legal):
            if after in self.boards:
                continue
            score = worth(after)
            if best is None or score > best[0]:
                best = (score, command, gained)
        if best is not None and (best[2] > 0 or (moves_this_deal < NEUTRAL_MOVES and best[0] >= worth(board))):
            return best[1]
        return None
