"""A tournament over rounds as it plays (docs/tournaments.md): each round drawn when the one before has finished, its
tables made and seated, and the standings — all derived from the tournament's seed and its tables' logs, so that any
worker, at any moment, derives the same, and a worker that stops part-way leaves nothing another cannot finish.

``advance`` is called at the start, by every worker's ``RoundsAdvancer`` (a periodic task, as the queue's matcher is),
and by every read of the tournament: it makes whatever is missing — the next draw (written once: the first stands),
a table's game (its id is fixed by the round and table), a seat (in the draw's order; a seat already taken is left) —
and stops at the first table still playing.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import msgspec
from sanic import Sanic

from service.bots import params_of
from service.bots.sight import SIGHTED
from service.events.base import Player, recorded
from service.rules import rounds as rules
from service.rules.rounds.bundle import EntrantLine
from service.rules.rounds.standings import Standing, TableResult
from service.store.keys import round_table_id
from service.store.outage import Outage

from .errors import ApiError
from .round_records import (
    DrawRecord,
    RoundsAnswer,
    RoundsRecord,
    RoundSummary,
    RoundTable,
    SeatSummary,
    decode_record,
    draws_of,
    encode,
    entrants_of,
    is_rounds,
)

log = logging.getLogger("free_parking.tournaments")


async def advance(app: Sanic, record: RoundsRecord) -> None:
    """Draw, make and seat whatever the tournament is owed now; the last round finished, it is no longer playing."""
    store = app.ctx.store
    entrants, started, state = await entrants_of(store, record.tournament_id)
    if started is None:
        return
    seed, draws = bytes.fromhex(started.seed), draws_of(state)
    names = {p: entrants[p].name for p in started.entrants}
    while True:
        if draws:
            await _seat_round(app, record, entrants, draws[-1], len(draws), seed)
            if any(r is None for r in await round_results(store, draws[-1], len(draws))):
                return
            if len(draws) == record.rounds:
                await store.tournament_playing(record.tournament_id, False)
                return
        done = [await round_results(store, d, n) for n, d in enumerate(draws, 1)]
        table = rules.standings(names, done, duplicate=record.duplicate)  # type: ignore[arg-type]
        r = len(draws) + 1
        draw = rules.draw_round(seed, r, started.entrants, record.table_size, rules.ranks_of(table) if draws else None,
                                rules.met_of([d.draw for d in draws]))
        wanted = DrawRecord(draw=draw, games=[round_table_id(record.tournament_id, r, t.table) for t in draw.tables])
        stood = await store.tournament_note(record.tournament_id, f"draw:{r}", encode(wanted))
        draws.append(msgspec.json.decode(stood, type=DrawRecord))


RESULTS_KEPT = 4096
"""Finished tables' results kept in each worker: a finished game never changes, and without them every read of the
standings would read every table's whole log again (a cheap way for anyone to make a worker busy)."""
_results: dict[tuple[str, int, str], TableResult] = {}


async def round_results(store: Any, drawn: DrawRecord, round_no: int) -> list[TableResult | None]:
    """Each table's result (``None`` while it plays), from its log: the store's, or the archive's once archived."""
    out: list[TableResult | None] = []
    for table, game_id in zip(drawn.draw.tables, drawn.games, strict=True):
        key = (store.keys.ns, round_no, game_id)  # one worker may serve several stores (the tests' apps)
        if key not in _results:
            meta = await store.meta(game_id) or {}
            result = rules.table_result(round_no, table, game_id, await store.read(game_id)) \
                if meta.get("status") == "finished" else None
            if result is None:
                out.append(None)
                continue
            if len(_results) >= RESULTS_KEPT:
                _results.pop(next(iter(_results)))
            _results[key] = result
        out.append(_results[key])
    return out


async def _seat_round(app: Sanic, record: RoundsRecord, entrants: dict[str, Any], drawn: DrawRecord, round_no: int,
                      seed: bytes) -> None:
    games = app.ctx.games
    for table, game_id in zip(drawn.draw.tables, drawn.games, strict=True):
        players = _players(record, entrants, table, game_id)
        reserved = frozenset(p.player_id for p in players if p.player_id)
        meta = await app.ctx.store.meta(game_id)
        if meta is None:
            await _make(app, record, table, game_id, round_no, seed, reserved)
        elif int(meta.get("taken", 0)) >= len(players):  # every seat taken: the advancer's every pass reads no more
            continue
        game = await games.fresh(game_id)
        for seat, player in enumerate(players):
            if game.state.seats[seat].player is not None:
                continue
            try:
                game, _ = await games.seat(game_id, player, reserved)
            except ApiError as e:
                if e.code != "already_seated":  # another worker seated them a moment ago
                    raise
                game = await games.fresh(game_id)


async def _make(app: Sanic, record: RoundsRecord, table: rules.DrawnTable, game_id: str, round_no: int, seed: bytes,
                reserved: frozenset[str]) -> None:
    """The table's game, dealt from the round's seed (duplicate: every table the same) or its own, derived either way."""
    deal = rules.round_seed(seed, round_no) if record.duplicate else rules.table_seed(seed, round_no, table.table)
    meta = {"rounds": record.tournament_id, "round": str(round_no), "table": str(table.table),
            "reserved": msgspec.json.encode(sorted(reserved)).decode()}
    try:
        await app.ctx.games.create(record.kind, record.table_size, record.options, deal, game_id=game_id, meta=meta,
                                   seeding="duplicate" if record.duplicate else "tournament")
    except ApiError:
        if await app.ctx.store.meta(game_id) is None:  # not another worker's creation of it: a real refusal
            raise


def _players(record: RoundsRecord, entrants: dict[str, Any], table: rules.DrawnTable, game_id: str) -> list[Player]:
    """The table's players in seat order: each entrant as registered (keyed with their key), a bot where none sits —
    with an id fixed by the table and seat, so two workers seating it seat one bot."""
    out, shared = [], _shared_keys(entrants)
    for seat, player_id in enumerate(table.seats):
        if player_id is None:
            out.append(Player(name=f"{record.bot} bot", player_id=f"b_{game_id}_{seat}", bot=record.bot,
                              bot_version=SIGHTED, bot_params=params_of(record.kind, record.bot)))
        else:
            e = entrants[player_id]
            key = None if e.public_key in shared else e.public_key
            out.append(Player(name=e.name, player_id=player_id, public_key=key, account=recorded(e.account)))
    return out


def _shared_keys(entrants: dict[str, Any]) -> set[str]:
    """The public keys more than one entrant entered with (a public key is public: anyone may send another's). A key
    keys one seat per game, so the second of two such entrants drawn to one table could never be seated there: the
    table waited for ever and the seats after it were taken one early. Such a key keys neither entrant's seats; the
    entrants are fixed at the start, so every worker decides alike."""
    counts = Counter(e.public_key for e in entrants.values() if e.public_key)
    return {key for key, n in counts.items() if n > 1}


async def standings_now(store: Any, record: RoundsRecord) -> tuple[list[Standing], int, bool]:
    """The standings after every round that has finished, how many have, and whether the tournament has started."""
    entrants, started, state = await entrants_of(store, record.tournament_id)
    if started is None:
        return rules.standings({p: e.name for p, e in entrants.items()}, [], duplicate=record.duplicate), 0, False
    done = []
    for n, drawn in enumerate(draws_of(state), 1):
        results = await round_results(store, drawn, n)
        if any(r is None for r in results):
            break
        done.append(results)
    names = {p: entrants[p].name for p in started.entrants}
    return rules.standings(names, done, duplicate=record.duplicate), len(done), True  # type: ignore[arg-type]


async def summary(app: Sanic, record: RoundsRecord) -> RoundsAnswer:
    store = app.ctx.store
    entrants, started, state = await entrants_of(store, record.tournament_id)
    drawn = []
    for n, d in enumerate(draws_of(state), 1):
        tables = []
        for table, game_id in zip(d.draw.tables, d.games, strict=True):
            status = (await store.meta(game_id) or {}).get("status", "waiting")
            seats = [SeatSummary(seat=i, player_id=p, name=entrants[p].name if p else f"{record.bot} bot", bot=p is None)
                     for i, p in enumerate(table.seats)]
            tables.append(RoundTable(table=table.table, game_id=game_id, status=status, seats=seats))
        drawn.append(RoundSummary(round=n, status="finished" if all(t.status == "finished" for t in tables) else "playing",
                                  tables=tables))
    finished = len(drawn) == record.rounds and drawn[-1].status == "finished"
    return RoundsAnswer(
        tournament_id=record.tournament_id, name=record.name, kind=record.kind, options=record.options,
        rounds=record.rounds, table_size=record.table_size, duplicate=record.duplicate,
        entry="open" if record.open else "named", bot=record.bot, created_at=record.created_at,
        seed_commitment=record.seed_commitment,
        status="finished" if finished else "playing" if started is not None else "entry",
        entrants=[EntrantLine(player_id=p, name=e.name, client_seed=e.client_seed, seed_from=e.seed_from)
                  for p, e in sorted(entrants.items())],
        drawn=drawn)


class RoundsAdvancer:
    """Every worker's periodic look at the tournaments still playing: each round drawn as soon as the one before ends."""

    def __init__(self, app: Sanic, interval_ms: int = 1000) -> None:
        self.app, self.interval_ms = app, interval_ms
        self.outage = Outage(log, "tournaments")

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.pass_once()
                self.outage.ok()
            except Exception as e:  # noqa: BLE001 - an outage or a bug must not end the worker's advancing
                self.outage.failed(e)
            try:
                await asyncio.wait_for(stop.wait(), self.interval_ms / 1000)
            except TimeoutError:
                pass

    async def pass_once(self) -> None:
        store = self.app.ctx.store
        for tournament_id in await store.tournaments_playing():
            raw = await store.tournament(tournament_id)
            if raw is not None and is_rounds(raw):
                await advance(self.app, decode_record(raw))
