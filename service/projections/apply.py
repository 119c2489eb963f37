"""Bringing games' read models up to date, game by game: what the projector (``projector.py``) does for the games the
partition logs name, and what ``rebuild`` and the tests call directly.

Each game's read models move from its checkpoint with one compare-and-set write (``Store.project_game``); the read
models outside the game's slot are idempotent upserts around it (``_record_outside``); and a game whose appends told
its players something has its outbox relayed (``tell_players``, service/store/told.py) before its log entries are
acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from service.events.envelope import Envelope
from service.store.store import Store, StoreUnavailable

from . import audit, leaderboard, ratings, results, scores, solitaire_stats, standings

log = logging.getLogger(__name__)

MAX_EVENTS = 2000
"""Events read and applied in one compare-and-set write (a longer game takes several)."""


@dataclass
class Stats:
    entries: int = 0  # log entries acknowledged
    skipped: int = 0  # of which their range was already applied (by us earlier, or by another projector)
    reclaimed: int = 0  # entries taken over from another consumer
    applies: int = 0  # compare-and-set writes that went through
    events: int = 0  # events applied
    conflicts: int = 0  # writes refused because another projector moved the checkpoint first
    results: int = 0  # players' results upserted
    errors: int = 0  # games that failed to apply (their entries stay pending and are retried)
    trimmed: int = 0  # partition log entries let go, every group past them (service/store/logtrim.py)
    last_error: BaseException | None = field(default=None, repr=False)

    def add(self, other: Stats) -> None:
        for name in ("entries", "skipped", "reclaimed", "applies", "events", "conflicts", "results", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.last_error = other.last_error or self.last_error


class ProjectionFailed(Exception):
    """Some games could not be projected; their log entries are still pending."""


async def project_game(
    store: Store, game_id: str, upto: int | None = None, *, max_events: int = MAX_EVENTS, stats: Stats | None = None
) -> int:
    """Apply ``game_id``'s stream from its checkpoint until that reaches ``upto`` (``None``: the stream's end).

    Answers the checkpoint reached. Safe to run anywhere at any time: every write is a compare-and-set.
    """
    stats = stats if stats is not None else Stats()
    while True:
        applied, model = await scores.load(store, game_id)
        if upto is not None and applied >= upto:
            return applied
        envelopes = await store.read(game_id, after=applied, count=max_events)
        if not envelopes:
            return applied
        new, lines = _models(model, envelopes)
        await _record_outside(store, game_id, model, new, envelopes, stats)
        done = await store.project_game(game_id, applied, new.version, scores.encode(new), lines)
        if not done.applied:
            stats.conflicts += 1
            continue
        await _record_outside(store, game_id, model, new, envelopes, None)
        stats.applies += 1
        stats.events += len(envelopes)
        if len(envelopes) < max_events and (upto is None or new.version >= upto):
            return new.version


async def _record_outside(
    store: Store, game_id: str, model: scores.Scores | None, new: scores.Scores, envelopes: list[Envelope], stats: Stats | None
) -> None:
    """The read models outside the game's slot (results, leaderboard, ratings, solitaire statistics, standings), which cannot
    share its compare-and-set: idempotent upserts, made before the checkpoint moves (a crash between the two writes
    repeats them, changing nothing) and once more after it moved (``stats`` None) — a rebuild that dropped them in
    between would otherwise leave a checkpoint past a result that no longer exists, and nothing would write it again."""
    if new.status == "finished" and (model is None or model.status != "finished"):
        added = await results.record(store, new)
        if stats is not None:
            stats.results += added
        await leaderboard.record_game(store, new)
    await ratings.record(store, new)  # every apply of a finished game: its entry follows the game's last event
    await solitaire_stats.record(store, model, new)  # from the deal on: a game counts as started, not only finished
    if standings.changes(new, envelopes):
        await standings.record(store, game_id, new.version)


def _models(model: scores.Scores | None, envelopes: list[Envelope]) -> tuple[scores.Scores, list[str]]:
    """The scores after ``envelopes`` and their audit lines, each event's public part decoded once for both."""
    kind = scores.kind_of(model, envelopes)
    events = scores.decode_public(kind, envelopes)
    return scores.fold(model, envelopes, events), audit.lines(kind, envelopes, events)


BATCH_GAMES = 64
"""Games brought up to date together: their checkpoints, their new events and their writes each in one round trip."""
BATCH_EVENTS = 500
"""Events read per game in such a batch; a game with more goes on alone (``project_game``)."""


async def project_games(
    store: Store,
    upto: dict[str, int | None],
    *,
    max_events: int = MAX_EVENTS,
    stats: Stats | None = None,
    batch_games: int = BATCH_GAMES,
    batch_events: int = BATCH_EVENTS,
) -> dict[str, tuple[int, int] | Exception]:
    """``project_game`` of many games at once, in three round trips per ``BATCH_GAMES`` games whatever the number
    of games: their checkpoints in one pipeline, their new events in another, their compare-and-set writes in a
    third (the client's per-call cost, not Redis, is what a projector pass spends). A game whose write is refused
    (another projector moved it) or that has more events than one batch reads goes on through ``project_game``.

    Answers per game ``(writes, events)`` applied, or the exception that stopped it (its log entries stay pending).
    ``StoreUnavailable`` stops everything.
    """
    stats = stats if stats is not None else Stats()
    out: dict[str, tuple[int, int] | Exception] = {}
    ids = list(upto)
    for i in range(0, len(ids), batch_games):
        await _project_batch(store, ids[i : i + batch_games], upto, min(max_events, batch_events), max_events, stats, out)
    return out


async def _project_batch(
    store: Store,
    ids: list[str],
    upto: dict[str, int | None],
    batch_events: int,
    max_events: int,
    stats: Stats,
    out: dict[str, tuple[int, int] | Exception],
) -> None:
    checkpoints = await scores.load_many(store, ids)
    todo = [(g, applied, model) for g, (applied, model) in zip(ids, checkpoints, strict=True)
            if upto[g] is None or applied < upto[g]]  # type: ignore[operator]
    for g in ids:
        out[g] = (0, 0)
    reads = await store.read_many([(g, applied, batch_events) for g, applied, _ in todo])
    writes: list[tuple[str, int, int, bytes, list[str]]] = []
    alone: list[str] = []
    read_of: dict[str, int] = {}
    folded: dict[str, tuple[scores.Scores | None, scores.Scores, list[Envelope]]] = {}
    for (g, applied, model), envelopes in zip(todo, reads, strict=True):
        if not envelopes:
            continue
        try:
            new, lines = _models(model, envelopes)
            await _record_outside(store, g, model, new, envelopes, stats)  # before the checkpoint, as in project_game
        except StoreUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 (one bad game must not stop the others)
            out[g] = e
            continue
        writes.append((g, applied, new.version, scores.encode(new), lines))
        read_of[g] = len(envelopes)
        folded[g] = (model, new, envelopes)
        await asyncio.sleep(0)  # let the worker's requests in between games: a pass must not hold their latency up
    for (g, *_), done in zip(writes, await store.project_games(writes), strict=True):
        if isinstance(done, Exception):
            out[g] = done
        elif not done.applied:
            stats.conflicts += 1
            alone.append(g)
        else:
            try:
                await _record_outside(store, g, *folded[g], None)  # once more, as in project_game
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (as above: this game's error is its answer, the others go on)
                out[g] = e
                continue
            stats.applies += 1
            stats.events += read_of[g]
            out[g] = (1, read_of[g])
            target = upto[g]
            if read_of[g] >= batch_events and (target is None or done.version < target):
                alone.append(g)
            await asyncio.sleep(0)  # progress is visible (stats) and the worker's requests get in, game by game
    gate = asyncio.Semaphore(16)

    async def one(g: str) -> None:
        async with gate:
            mine = Stats()
            try:
                await project_game(store, g, upto[g], max_events=max_events, stats=mine)
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (as above: this game's error is its answer, the others go on)
                out[g] = e
                return
            finally:
                stats.add(mine)
            writes_before, events_before = out[g]  # type: ignore[misc]
            out[g] = (writes_before + mine.applies, events_before + mine.events)

    await asyncio.gather(*(one(g) for g in alone))


async def tell_players(store: Store, games: set[str]) -> dict[str, Exception]:
    """Relay the outboxes of ``games`` to their players' streams (``Store.tell_players``: a no-op where the appending
    worker did it already); answers the games that failed, with their error. ``StoreUnavailable`` stops everything."""
    gate = asyncio.Semaphore(16)

    async def one(game: str) -> Exception | None:
        async with gate:
            try:
                await store.tell_players(game)
            except StoreUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 (one game's error must not stop the others)
                return e
            return None

    failed = await asyncio.gather(*(one(g) for g in sorted(games)))
    return {g: e for g, e in zip(sorted(games), failed, strict=True) if e is not None}
