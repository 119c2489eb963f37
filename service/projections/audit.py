"""A game's public audit log (API.md: ``seq  at  actor  summary  hash[:12]``), one line per event, appended as it grows.

The lines are ``audit_lines`` of the events' public parts — what anyone may read; a reader allowed the secrets
(an admin, an export) builds the revealed lines from the log itself. Stored in ``ns:proj:audit:{pN}:<game_id>``,
a list whose length is always the game's checkpoint (it is written in the same script).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.events.audit import line
from service.events.envelope import Envelope
from service.store.store import Store
from service.rules.engine import audit_lines, rules_for


def lines(kind: str, envelopes: Sequence[Envelope], events: Sequence[Any] | None = None) -> list[str]:
    """The public audit lines of ``envelopes`` (a pure function of their public parts); ``events``, when given, are
    those public parts already decoded (the projector decodes each event once for every read model)."""
    rules = rules_for(kind)
    if events is None:
        return audit_lines(rules, list(envelopes), reveal=False)
    return [line(env, _summary(rules, event)) for env, event in zip(envelopes, events, strict=True)]


_SUMMARIES: dict[tuple[str, type], Any] = {}


def _summary(rules: Any, event: Any) -> str:
    """``rules.summary(event)``, its implementation for the event's type looked up once per kind and type (a rebuild
    writes a line for every event; ``singledispatch`` would look it up again each time). Per kind: the events every
    kind shares (``seat_taken``, ``resign``, ``game_closed``…) are told in each kind's own words — keyed by type alone,
    a solitaire's "played by" once wrote a card game's "seat 0 taken" in the same process."""
    key = (rules.KIND, type(event))
    fn = _SUMMARIES.get(key)
    if fn is None:
        dispatch = getattr(rules.summary, "dispatch", None)
        fn = _SUMMARIES[key] = dispatch(key[1]) if dispatch is not None else rules.summary
    return fn(event)


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
