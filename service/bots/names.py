"""Names for server-seated bots: distinct at a table, so that prompts, logs and standings say who is who.

A bot is named for what it plays like ("Greedy Gus", "Random Rita"); the first name its table does not use yet is
its own, then the kind's name with a number ("greedy bot 9"), which no table of eight seats reaches.
"""

from __future__ import annotations

from collections.abc import Iterable

NAMES = {
    "greedy": ("Greedy Gus", "Greedy Gwen", "Greedy Gil", "Greedy Greta", "Greedy Gordon", "Greedy Gina", "Greedy Glen",
               "Greedy Grace"),
    "random": ("Random Rita", "Random Rex", "Random Rosa", "Random Ray", "Random Ruth", "Random Rick", "Random Rena",
               "Random Rod"),
    "strategic": ("Strategic Stan", "Strategic Sue", "Strategic Sid", "Strategic Sara", "Strategic Sam", "Strategic Sky",
                  "Strategic Seth", "Strategic Sofia"),
    "solver": ("Solver Sol", "Solver Sasha", "Solver Simon", "Solver Selma", "Solver Saul", "Solver Sadie", "Solver Scott",
               "Solver Stella"),
    "expert": ("Expert Eve", "Expert Ezra", "Expert Edie", "Expert Elliot", "Expert Esme", "Expert Emil", "Expert Etta",
               "Expert Evan"),
}


def bot_name(bot: str, taken: Iterable[str]) -> str:
    """The first name of ``bot``'s kind that no one at the table has (``taken``: the names seated already)."""
    used = {name.casefold() for name in taken}
    candidates = [*NAMES.get(bot, ()), *(f"{bot} bot {n}" for n in range(1, 100))]
    return next(name for name in candidates if name.casefold() not in used)
