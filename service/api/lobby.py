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


class _Seated(msgspec.Struct):
    """What the listing reads of a ``seat_taken``: the player's public name, bot kind and account, nothing else."""

    player: s.SeatedPlayer


async def summaries(store: Store, listed: list[tuple[str, dict[str, str]]]) -> list[s.GameSummary]:
    """A summary of each ``(game_id, meta)``, with who sat at it: the ``seat_taken`` events that follow the game's
    ``game_created`` (a game deals once its last seat is taken, so its first ``taken`` events after the first are
    those), all games in one round trip. A record written before the metadata kept ``seeding`` has it read from that
    same ``game_created``: the listing never guesses how a seed is made. An archived game's log is in the archive:
    it is read only for a ``seeding`` its record lacks, and is listed without its players."""
    wanted = [(game_id, meta) for game_id, meta in listed if "seeding" not in meta or meta.get("archived") != "1"]
    reads = await store.read_many([(game_id, 0, 1 + int(meta.get("taken", 0))) for game_id, meta in wanted])
    read = dict(zip([game_id for game_id, _ in wanted], reads, strict=True))
    out = []
    for game_id, meta in listed:
        envs = read.get(game_id, [])
        seeding: Any = meta.get("seeding") or (msgspec.json.decode(envs[0].public, type=_Created).seeding if envs else "legacy")
        config = _config(meta)
        turn_seconds, forfeit_after = turn_clock(config) if config is not None else (None, None)
        players = None if meta.get("archived") == "1" else _players(envs)
        out.append(s.GameSummary(game_id, meta["kind"], int(meta["seats"]), int(meta.get("taken", 0)), meta["status"],
                                 int(meta["created_at"]), turn_seconds, forfeit_after, seeding, seed_chosen_by(seeding, config),
                                 players))
    return out


def _players(envs: list[Any]) -> list[s.SeatedPlayer]:
    """Each seat taken; a server bot's seat records its kind, not an account, and is shown as a bot all the same."""
    seated = [msgspec.json.decode(env.public, type=_Seated).player for env in envs if env.type == "seat_taken"]
    return [msgspec.structs.replace(p, account="bot") if p.bot else p for p in seated]


def _config(meta: dict[str, str]) -> Any:
    """The game's config, as its view reads it: none for a record without one (a listing never fails on one game's)."""
    rules = GAMES.get(meta["kind"])
    if rules is None or "config" not in meta:
        return None
    return msgspec.json.decode(meta["config"], type=rules.CONFIG)
