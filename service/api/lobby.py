"""What ``GET /games`` says of each game it lists, read off the games' metadata (a page costs the records it lists):
its seats, its status, its turn clock and how its seed is made, all things a player weighs before joining."""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.common import Seeding
from service.rules.clock import turn_clock
from service.rules.engine import GAMES
from service.rules.setup import seed_chosen_by
from service.store.store import Store

from . import schemas as s


class _Created(msgspec.Struct):
    """What the listing reads of a ``game_created`` whose game's metadata predates its ``seeding`` (absent: legacy)."""

    seeding: Seeding = "legacy"


async def summaries(store: Store, listed: list[tuple[str, dict[str, str]]]) -> list[s.GameSummary]:
    """A summary of each ``(game_id, meta)``. A record written before the metadata kept ``seeding`` has it read from
    the game's first event instead (all such games in one round trip): the listing never guesses how a seed is made."""
    unrecorded = [game_id for game_id, meta in listed if "seeding" not in meta]
    firsts = await store.read_many([(game_id, 0, 1) for game_id in unrecorded])
    read = {game_id: msgspec.json.decode(envs[0].public, type=_Created).seeding if envs else "legacy"
            for game_id, envs in zip(unrecorded, firsts, strict=True)}
    out = []
    for game_id, meta in listed:
        seeding: Any = meta.get("seeding") or read[game_id]
        config = _config(meta)
        turn_seconds, forfeit_after = turn_clock(config) if config is not None else (None, None)
        out.append(s.GameSummary(game_id, meta["kind"], int(meta["seats"]), int(meta.get("taken", 0)), meta["status"],
                                 int(meta["created_at"]), turn_seconds, forfeit_after, seeding, seed_chosen_by(seeding, config)))
    return out


def _config(meta: dict[str, str]) -> Any:
    """The game's config, as its view reads it: none for a record without one (a listing never fails on one game's)."""
    rules = GAMES.get(meta["kind"])
    if rules is None or "config" not in meta:
        return None
    return msgspec.json.decode(meta["config"], type=rules.CONFIG)
