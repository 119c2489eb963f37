"""What every game's first decisions do alike: record its creation, once, with the seed committed; seat a player with
their client seed; and, with the last seat, derive the game's seed from the server's and the seats' (``docs/rng.md``)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from service.events.base import Player
from service.events.common import SeatTaken, SeedRevealed, Seeding, TakeSeat
from service.events.envelope import seed_commitment

from . import rng
from .errors import RuleViolation


class Seeded(msgspec.Struct, frozen=True, kw_only=True):
    """What every kind's state keeps of its seeding (docs/rng.md); ``seed`` (the server's) is the kind's own field."""

    seeding: Seeding = "legacy"
    """How the seed is made (its ``game_created`` says): ``combined`` games draw from ``game_seed`` (``rng_seed``)."""
    client_seeds: tuple[str | None, ...] = ()
    """Each seat's client seed as its ``seat_taken`` records it (hex; ``None`` for none), by the seat it was taken at."""
    game_seed: bytes | None = None
    """A ``combined`` game's seed, derived when the last seat is taken (``rng.game_seed``); ``None`` before, and in
    other games. ``seed`` stays the server's: it is what ``seed_commitment`` commits to and ``seed_revealed`` reveals."""

    @property
    def rng_seed(self) -> bytes:
        """The key of every random stream (shuffles, dice): ``game_seed`` in a ``combined`` game, else ``seed``."""
        return rng_seed(self)


SeedChosenBy = Literal["admin", "creator"]
"""Who chose a ``fixed`` game's seed: the ``admin`` (the only one who may fix the seed of a kind whose config records
no choice), or the game's ``creator`` where the kind lets a player choose the deal (a solitaire's "play deal N again",
``config.seed_chosen``; the admin may have been that creator too: the log does not say who created a game)."""


def seed_chosen_by(seeding: Seeding, config: Any) -> SeedChosenBy | None:
    """Who chose the seed of a game dealt from a seed given at creation (``None``: nobody did, the seed was drawn), as
    its state knows it: so a newcomer learns, before joining, that the deal was chosen and their client seed will
    change nothing (issue 29)."""
    if seeding != "fixed":
        return None
    return "creator" if getattr(config, "seed_chosen", False) else "admin"


def created(event: type, kind: str, state: Any, rules_version: int, seeding: Seeding = "legacy", *, key_id: str | None = None) -> Any:
    """The kind's ``game_created`` event for a game still ``new``: its config, the commitment to its seed (so the
    deal can be checked once the seed is revealed), the rules and RNG versions that replay it, how its seed is
    made (``seeding``: the ``create`` command's), and the key that signs its receipts."""
    if state.phase != "new":
        raise RuleViolation("already_created", "This game already exists")
    return event(
        kind=kind,
        config=state.config,
        seed_commitment=seed_commitment(state.seed),
        rules_version=rules_version,
        rng=rng.RNG_ID,
        key_id=key_id,
        seeding=seeding,
    )


def seat_taken(state: Any, seat: int, command: TakeSeat) -> SeatTaken:
    """``seat_taken`` for ``seat``: with the client seed the player sent; in a ``combined`` game a seat that sent none
    gets ``rng.client_seed_for(server seed, seat)``, so every seat of such a game has one, public from the start."""
    player: Player = command.player
    if command.client_seed is not None:
        return SeatTaken(seat=seat, player=player, client_seed=command.client_seed, client_seed_from="player")
    if state.seeding == "combined":
        derived = rng.client_seed_for(state.seed, seat).hex()
        return SeatTaken(seat=seat, player=player, client_seed=derived, client_seed_from="server")
    return SeatTaken(seat=seat, player=player)


def seeded(state: Any, event: SeatTaken, seats: int) -> dict[str, Any]:
    """What ``evolve`` changes for a seat taken: the seat's client seed, and — in a ``combined`` game whose every seat
    now has one — the derived game seed, which keys every random stream from then on (``State.rng_seed``)."""
    seeds = list(state.client_seeds) + [None] * (seats - len(state.client_seeds))
    seeds[event.seat] = event.client_seed
    changes: dict[str, Any] = {"client_seeds": tuple(seeds)}
    if state.seeding == "combined" and all(seed is not None for seed in seeds):
        changes["game_seed"] = rng.game_seed(state.seed, [bytes.fromhex(seed) for seed in seeds])  # type: ignore[arg-type]
    return changes


def client_seed_note(e: SeatTaken) -> str:
    """The audit line's word on a seat's client seed: whose it is, and its first 16 hex digits (all of it is public)."""
    if e.client_seed is None:
        return ""
    whose = "brought by the player" if e.client_seed_from == "player" else "derived from the server seed"
    return f", client seed {e.client_seed[:16]}… ({whose})"


def rng_seed(state: Any) -> bytes:
    """The key of the game's random streams: the derived game seed in a ``combined`` game, else the seed as given."""
    if state.seeding != "combined":
        return state.seed
    if state.game_seed is None:  # a combined game draws nothing before its last seat is taken
        raise RuleViolation("seed_not_derived", "The game's seed is derived when the last seat is taken, not before")
    return state.game_seed


def reveal_seed(batch: Any) -> None:
    """A game that ends publishes its server seed (``seed_revealed``), so anyone can re-check the deal — except a
    duplicate tournament round's table: every table of the round is dealt from that seed, so a table that finished
    first would show the others their cards. Its tournament reveals it once every table of the round has finished."""
    if batch.state.seeding != "duplicate":
        batch.emit(SeedRevealed(seed=batch.state.seed.hex()))
