"""``legal_commands``: exactly what the player may send now — every listed command is accepted, and no other is."""

from __future__ import annotations

import msgspec

from service.events import solitaire as ev

from .layout import legal_moves
from .state import State


def move_command(move: tuple[str, int, int]) -> ev.Move:
    """A ``layout.Move`` as the command that plays it."""
    card, row, slot = move
    return ev.Move(card=card, to=ev.Place(row=row, slot=slot))


def legal_commands(s: State, seat: int) -> list[msgspec.Struct]:
    """Every move (gap by gap), then a redeal if one is left, undo if a step stands, and resign. A stuck game has no
    move and no redeal, and a redeal stands (two were spent): exactly undo and resign."""
    if s.phase != "playing" or seat != 0 or s.layout is None:
        return []
    out: list[msgspec.Struct] = [move_command(m) for m in legal_moves(s.layout)]
    if s.redeals_left > 0:
        out.append(ev.Redeal())
    if s.history:
        out.append(ev.Undo())
    out.append(ev.Resign())
    return out
