"""Tournament standings: each table's ``TableStanding``, kept in its tournament's read model.

A table is a tournament-mode game whose metadata names its tournament. Its standing changes only when a seat is
taken, a round ends or the game is won, so only a batch of events holding one of those is folded again — from the
table's first event, with ``table_standing``, the very function an organiser's offline check runs on the exported
bundle. The tournament's key (``ns:proj:standings:{pN}:<tournament_id>``) is in the tournament's partition, which is
every table's, but the write is still the idempotent upsert of the players' results (``upsert.lua``, no counters):
field ``g:<game_id>`` holds the standing, ``c:<game_id>`` the version it was folded to, and a table already stored
at that version or later is left alone. It is written before the table's checkpoint moves, so a standing is never
behind its table's scores checkpoint: the version it reflects is the larger of the two.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.events.envelope import Envelope
from service.events.free_parking import FreeParkingConfig
from service.store.store import Store
from service.rules.free_parking.standings import TableStanding, table_standing

from . import scores as scores_model

CHANGES = frozenset({"seat_taken", "round_ended", "game_won", "game_closed"})
"""The events after which a table's standing differs."""

_encoder = msgspec.json.Encoder()
_standing = msgspec.json.Decoder(TableStanding)


def changes(model: scores_model.Scores, envelopes: Sequence[Envelope]) -> bool:
    """Whether applying ``envelopes`` (already folded into ``model``) may move a tournament table's standing."""
    return model.mode == "tournament" and any(env.type in CHANGES for env in envelopes)


async def record(store: Store, game_id: str, upto: int) -> int:
    """Fold the table's events up to ``upto`` into its standing and upsert it; answers 1 if it was new, else 0
    (not a tournament's table, or already stored at ``upto`` or later)."""
    meta = await store.meta(game_id)
    if meta is None or "tournament" not in meta or meta.get("kind") != "free-parking":
        return 0
    config = msgspec.json.decode(meta["config"], type=FreeParkingConfig)
    events = scores_model.decode_public("free-parking", await store.read(game_id, count=upto))
    standing = table_standing(game_id, config, events)
    done = await store.project_standing(meta["tournament"], game_id, upto, _encoder.encode(standing))
    return int(done.applied)


async def read_standings(store: Store, tournament_id: str, game_ids: Sequence[str]) -> list[tuple[TableStanding | None, int]]:
    """Each table's standing (``None`` before its first seat is taken) and the version of the table it reflects."""
    raw = await store._read(store.r.hgetall(store.keys.tournament_projection("standings", tournament_id)))
    fields = {k.decode(): v for k, v in raw.items()}
    checkpoints = await scores_model.load_many(store, game_ids)
    out: list[tuple[TableStanding | None, int]] = []
    for game_id, (applied, _) in zip(game_ids, checkpoints, strict=True):
        entry, folded = fields.get(f"g:{game_id}"), fields.get(f"c:{game_id}")
        stored = int(folded.split(b" ")[0]) if folded else 0
        out.append((_standing.decode(entry) if entry else None, max(stored, applied)))
    return out
