"""Golden logs: recorded games under ``replays/golden/`` that must verify, from the file alone, forever.

``RECIPES`` lists how each one was first played, under which rules version. ``write`` plays and writes only the
missing ones: an existing golden is a record of what its rules version did and is never rewritten (``python -m
service golden --write``; see ``golden/README.md``). Verifying a golden needs nothing here but ``DIR`` and
``files``: playing one needs the bots and the simulation, which ``write`` is handed and ``replays`` never imports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DIR = Path(__file__).parent / "golden"


@dataclass(frozen=True)
class Recipe:
    """One golden game: who sat where, the seed, how often the server's deadline answered for a seat, and the rules
    version it was played under (a recipe replays its own version, not whatever is current)."""

    name: str
    seats: int
    bots: tuple[str, ...]
    timeouts: float = 0.0
    turn_timeouts: float = 0.0
    """The share of turns with a turn clock (option ``turn_seconds``) left to the server's default."""
    kind: str = "free-parking"
    options: dict = field(default_factory=dict)
    rules_version: int = 1
    """The rules it was played under: a golden of each version stays, however the rules go on."""
    seeding: str = "legacy"
    """How its seed was made (``docs/rng.md``): ``combined`` mixes in ``client_seeds`` (seat, hex), the others derived."""
    client_seeds: tuple[tuple[int, str], ...] = ()

    @property
    def game_id(self) -> str:
        return f"golden-{self.name}"

    @property
    def seed(self) -> bytes:
        return hashlib.sha256(f"golden seed:{self.game_id}".encode()).digest()

    @property
    def bots_seed(self) -> int:
        return int.from_bytes(hashlib.sha256(f"golden bots:{self.game_id}".encode()).digest()[:8], "big")

    @property
    def path(self) -> Path:
        return DIR / f"{self.game_id}.ndjson"


RECIPES: tuple[Recipe, ...] = (
    Recipe("fp-2-greedy", 2, ("greedy", "greedy")),
    Recipe("fp-4-greedy-random-timeouts", 4, ("greedy", "random") * 2, timeouts=0.25),
    Recipe("fp-5-random", 5, ("random",) * 5, options={"response_seconds": 30}),
    Recipe("fp-8-greedy-timeouts", 8, ("greedy",) * 8, timeouts=0.5),
    Recipe("fp-3-tournament", 3, ("greedy", "random", "greedy"), timeouts=0.1, options={"mode": "tournament"}),
    Recipe("sol-greedy", 1, ("greedy",), kind="solitaire"),
    # rules version 2: the first of the deals golden-sol-v2-greedy-stuck-<n> that leaves the greedy bot stuck (no move,
    # no redeal): it resigns there, where version 1 lost the game at the move
    Recipe("sol-v2-greedy-stuck-4", 1, ("greedy",), kind="solitaire", rules_version=2),
    Recipe(
        "mono-4-strategic-random",
        4,
        ("strategic", "random") * 2,
        timeouts=0.1,
        kind="monopoly",
        options={"max_rounds": 35},
    ),
    # rules version 2; the suffix was searched for a game that reaches every ruling version 2 brought: the drawer
    # asked about their own trade (answered, talked out, and by the server's timeout), a named player's talk-out,
    # and a swap three whose draw needed a reshuffle that could not hand its three back
    Recipe("fp-v2-4-random-timeouts-21", 4, ("random",) * 4, timeouts=0.2, rules_version=2),
    Recipe("mono-4-v2-strategic", 4, ("strategic",) * 4, timeouts=0.1, kind="monopoly", rules_version=2),
    # client seeds (issue 15): seats 0 and 2 bring their own, seat 1's is derived from the server seed, and the game
    # seed derived from all three deals
    Recipe("fp-v2-3-combined-seeds", 3, ("greedy", "random", "greedy"), timeouts=0.1, rules_version=2, seeding="combined",
           client_seeds=((0, "a1" * 32), (2, "0123456789abcdef" * 4))),
    # rules version 3 (issue 31), under a 60 s turn clock with a fifth of the turns left to it: the suffix was searched
    # for a game whose clock stops for waits on other seats and restarts both after a seat's answer and after the
    # server's, with forfeits; Monopoly's bots never hold up a roll, so its version 3 golden records the clock as is
    Recipe("fp-v3-4-random-clock-4", 4, ("random",) * 4, timeouts=0.2, turn_timeouts=0.2, rules_version=3,
           options={"turn_seconds": 60}),
    Recipe("mono-4-v3-strategic-clock", 4, ("strategic",) * 4, timeouts=0.1, turn_timeouts=0.2, kind="monopoly",
           rules_version=3, options={"turn_seconds": 60}),
)


def files(directory: Path = DIR) -> list[Path]:
    return sorted(directory.glob("*.ndjson"))


def write(play: Callable[[Recipe], bytes], recipes: tuple[Recipe, ...] = RECIPES) -> list[tuple[Recipe, bool]]:
    """Write every golden that is missing, played by ``play`` (``service.sim.golden.play``: ``replays`` never imports
    what plays games); ``(recipe, written)`` for each, ``False`` when it was kept as it is."""
    DIR.mkdir(exist_ok=True)
    out = []
    for recipe in recipes:
        if recipe.path.exists():
            out.append((recipe, False))
            continue
        recipe.path.write_bytes(play(recipe))
        out.append((recipe, True))
    return out
