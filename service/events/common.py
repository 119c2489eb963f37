"""Events and commands every game shares: creation, seating, the seed's reveal, the server's timeout and close."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .base import Command, Event, Player

Seat = Annotated[int, msgspec.Meta(ge=0, le=7)]
Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?!\n)$")]
CardId = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Millis = Annotated[int, msgspec.Meta(ge=0, le=2**62)]
Seeding = Literal["legacy", "combined", "fixed", "duplicate", "tournament"]
"""How a game's seed was made (``docs/rng.md``): ``combined`` — derived, when the last seat is taken, from the committed
server seed and every seat's client seed; ``fixed`` — a seed the admin (or a solitaire player) chose, used as is;
``legacy`` — the server seed used as is, by a log from before client seeds (the default, so old logs read as they were);
``duplicate`` — a duplicate tournament round's seed, used as is by every table of the round (``service/rules/rounds``):
drawn from the tournament's committed seed and its entrants' client seeds, and revealed with the tournament's bundle
once every table of the round has finished, not by the game; ``tournament`` — a table of a tournament over rounds
without duplicate deals, dealt from a seed derived from the tournament's (``rounds.table_seed``)."""
ClientSeedFrom = Literal["player", "server"]


class GameCreatedBase(Event, kw_only=True):
    """The first event of every game; each kind subclasses it to give ``config`` its own schema."""

    kind: str
    seed_commitment: Hex64
    rules_version: int
    rng: str
    seeding: Seeding = "legacy"
    key_id: str | None = None  # the key that signs the game's receipts (GET /keys); absent: none did


class SeatTaken(Event, tag="seat_taken"):
    """A seat is taken. ``client_seed`` is the seat's contribution to the game's seed, public from the start:
    brought by the ``player`` who joined, or, where none was sent, derived from the ``server``'s seed
    (``rng.client_seed_for``). A ``combined`` game records one for every seat; a ``fixed`` one only a seed a player
    sent (it plays no part in the deal); a ``legacy`` log none."""

    seat: int
    player: Player
    client_seed: Hex64 | None = None
    client_seed_from: ClientSeedFrom | None = None


class GameClosed(Event, tag="game_closed"):
    """The game ends with no winner: nobody joined or moved in it for ``idle_ms`` (the service's idle time then)."""

    reason: Literal["idle"]
    idle_ms: int


class TurnClockStopped(Event, tag="turn_clock_stopped"):
    """The turn clock of ``seat`` stops while the game waits on another seat (an answer, a choice, an auction):
    ``left_ms`` is what was left of the turn then (0 if it had already run out). Rules version 3 of the card game and
    of Monopoly."""

    seat: int
    left_ms: int


class TurnClockRestarted(Event, tag="turn_clock_restarted"):
    """The wait that stopped ``seat``'s turn clock is over: the turn now runs out at ``deadline_at``, the time left
    when it stopped counted from now — the wait cost the seat none of its turn."""

    seat: int
    deadline_at: int


class SeedRevealed(Event, tag="seed_revealed"):
    """Published when the game ends: anyone may now re-check every shuffle against the commitment."""

    seed: Hex64


class Create(Command, tag="create"):
    """Server only: records the game's creation as its first event, how its seed is made (``seeding``), and the key
    that signs its receipts."""

    seeding: Seeding = "legacy"
    key_id: str | None = None


class TakeSeat(Command, tag="take_seat"):
    """Server only: the API seats a player (or bot) after checking who asks; ``client_seed`` is the one the player
    sent, if any (32 bytes as 64 lowercase hex digits)."""

    player: Player
    client_seed: Hex64 | None = None


class Timeout(Command, tag="timeout"):
    """Server only: a wait's deadline passed; the server answers on the waiting seat's behalf."""


class Resign(Command, tag="resign"):
    """A player leaves the game for good, at any moment their seat is still in (RULES.md §1 and §3 "Resigning";
    the solitaire's player gives up the deal). One command shared by every kind: one tag, one documented body."""


class Close(Command, tag="close"):
    """Server only: nobody joined or moved since ``since`` (the time of the game's last event) for ``idle_ms``; the
    rules accept it once ``at >= since + idle_ms``, so a replay re-decides it from the log alone. The fields default,
    so that a client's bare ``{"type": "close"}`` is refused as the server's (422 ``server_only``), not as malformed."""

    idle_ms: Millis = 0
    since: Millis = 0
