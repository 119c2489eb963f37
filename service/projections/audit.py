"""A game's public audit log (API.md: ``seq  at  actor  summary  hash[:12]``), one line per event, appended as it grows.

The lines are ``audit_lines`` of the events' public parts — what anyone may read; a reader allowed the secrets
(an admin, an export) builds the revealed lines from the log itself. Stored in ``ns:proj:audit:{pN}:<game_id>``,
a list whose length is always the game's checkpoint (it is written in the same script).
"""

from __future__ import annotations

from collections.abc import Sequence

from service.events.envelope import Envelope
from service.events.store import Store
from service.rules.engine import audit_lines, rules_for


def lines(kind: str, envelopes: Sequence[Envelope]) -> list[str]:
    """The public audit lines of ``envelopes`` (a pure function of their public parts)."""
    return audit_lines(rules_for(kind), list(envelopes), reveal=False)


async def read_audit(store: Store, game_id: str, after: int = 0, limit: int | None = None) -> tuple[list[str], int]:
    """The audit lines of events ``after`` < seq ≤ ``after + limit``, and the version the projection reflects.

    Both are read in one transaction, so the lines never run past the version answered.
    """
    pipe = store.r.pipeline(transaction=True)
    pipe.hget(store.keys.game_projection("scores", game_id), "applied")
    if limit is None or limit > 0:
        stop = -1 if limit is None else after + limit - 1
        pipe.lrange(store.keys.game_projection("audit", game_id), max(after, 0), stop)
    applied, *rows = await store._read(pipe.execute())
    return [r.decode() for r in (rows[0] if rows else [])], int(applied or 0)
