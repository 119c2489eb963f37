"""What ``Games`` (``games.py``) answers and refuses with, and the clock it stamps: its small vocabulary, apart from the
logic that uses it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec

from service.events.envelope import Envelope
from service.rules.engine import Game, progressed_at

from .errors import ApiError

SeatOf = Callable[[Game], "int | None"]
"""The seat a command comes from in a game's state (``None``: the server's own), asked of the very state the command
is decided on, never of an older one; it raises ``Unseated`` for a caller who has no seat there."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class At(msgspec.Struct, frozen=True):
    """Where a game's log stood when a read was answered: what its receipt signs."""

    version: int
    head: str
    at: int


class Executed(msgspec.Struct, frozen=True):
    """A command's answer: its events (first answer, for a repeated command id) and the game after."""

    envelopes: list[Envelope]
    game: Any
    duplicate: bool = False


class Conflict(Exception):
    pass


class Unseated(ApiError):
    """A ``SeatOf`` finds no seat for the caller in the state at hand: 403, once the latest state says so too (a
    cache may predate their joining)."""

    def __init__(self) -> None:
        super().__init__(403, "forbidden", "This token has no seat at this game")


class Claimed(Exception):
    def __init__(self, holder: str) -> None:
        self.holder = holder


def reused() -> ApiError:
    return ApiError(409, "command_id_reused", "This command_id was used before with a different command")


class Repeat(Exception):
    def __init__(self, first: int, last: int) -> None:
        self.first, self.last = first, last


class Peek:
    """A game as it will be after ``envelopes``, for scheduling, without touching the cached one."""

    def __init__(self, game: Game, state: Any, envelopes: list[Envelope]) -> None:
        self.game_id, self.rules, self.state = game.game_id, game.rules, state
        self.version, self.last_at = envelopes[-1].seq, envelopes[-1].at
        self.progress_at = progressed_at(state, envelopes, game.progress_at)
