"""What every game's first decision does alike: record its creation, once, with the seed committed."""

from __future__ import annotations

from typing import Any

from service.events.envelope import seed_commitment

from . import rng
from .errors import RuleViolation


def created(event: type, kind: str, state: Any, rules_version: int, *, key_id: str | None = None) -> Any:
    """The kind's ``game_created`` event for a game still ``new``: its config, the commitment to its seed (so the
    deal can be checked once the seed is revealed), the rules and RNG versions that replay it, and the key that signs
    its receipts."""
    if state.phase != "new":
        raise RuleViolation("already_created", "This game already exists")
    return event(
        kind=kind,
        config=state.config,
        seed_commitment=seed_commitment(state.seed),
        rules_version=rules_version,
        rng=rng.RNG_ID,
        key_id=key_id,
    )
