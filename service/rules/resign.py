"""``resign`` among a seat's legal commands, and what the bots may choose from.

In the card game and Monopoly ``legal_commands`` lists ``resign`` for every seat still in, on turn or not (RULES.md
§1 and §3, "Resigning"), so a non-empty list no longer means that a seat has something to do. Bots never resign
(RULES.md §4: a bot's rating must mean what its play earned), so a bot, the service's scheduler and the simulations
ask ``bot_legal``: the list less ``resign`` — exactly what ``legal_commands`` listed before there was one, so every
bot's choices, and its random draws, are what they were. Solitaire keeps it: its bots resign a deal they cannot win.
"""

from __future__ import annotations

from typing import Any

import msgspec

NEVER_RESIGN = frozenset({"free-parking", "monopoly"})
"""The kinds whose bots never resign."""


def is_resign(command: msgspec.Struct) -> bool:
    return type(command).__struct_config__.tag == "resign"


def playing_on(legal: list[Any]) -> list[Any]:
    """``legal`` less ``resign``: the commands that play the game on."""
    return [c for c in legal if not is_resign(c)]


def bot_legal(rules: Any, s: Any, seat: int) -> list[Any]:
    """What a bot at ``seat`` may choose from now: ``legal_commands``, less ``resign`` where bots never resign."""
    legal = rules.legal_commands(s, seat)
    return playing_on(legal) if rules.KIND in NEVER_RESIGN else legal
