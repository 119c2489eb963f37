"""Tournaments over rounds (docs/tournaments.md, "Tournaments over rounds"; RULES.md §4): created by the organiser (the
admin) with a committed seed, entered by registered players with their client seeds (or named by the organiser),
started — entry closes and the tournament's seed is combined — and then played round by round: each round's tables
are drawn when the previous round has finished (``round_tables.py``), from the seed and the standings alone.

The record is written once (``Store.put_tournament``, as a tournament of tables is); what changes as it goes — entrants,
the start, each round's draw — lives in the tournament's state hash, each field written once
(``service/store/rounds.py``). The server seed and the tournament's seed stay in the store until every round has
finished: the bundle publishes them, and anyone re-derives every draw and deal from them.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

import msgspec
from sanic import Blueprint, HTTPResponse, Request

from service.rules import rounds as rules

from . import schemas as s
from .auth import Caller
from .errors import ApiError
from .games import now_ms
from .kinds import KINDS, config_for
from .openapi import doc, extend, named
from .routes import _answer, _caller, _decode
from .round_records import Entrant, RoundsAnswer, RoundsRecord, Started, decode_record, encode, entrants_of, is_rounds
from .round_tables import advance, summary
from .signed import registered_key, sound_key
from .tournament_common import load_raw, volatile_refusal

bp = Blueprint("rounds")

TURN_SECONDS = 120
"""A round's table's turn clock unless the options say otherwise: a seat nobody plays would stall the round."""
FILLERS = {"free-parking": "greedy", "monopoly": "strategic"}
"""The bot that fills a short table unless the organiser names another."""


class Enter(s.Request):
    """Enter a tournament open to entry with your player token (``client_seed``: your share of its seed; ``public_key``:
    the key your seats are keyed with, else the one you registered), or — the organiser — enter a registered
    ``player_id`` (their client seed is then derived from the tournament's committed seed)."""

    client_seed: s.ClientSeed | None = None
    public_key: s.PublicKeyHex | None = None
    player_id: s.PlayerId | None = None


class EntrantAnswer(msgspec.Struct, kw_only=True):
    tournament_id: str
    player_id: str
    name: str
    client_seed: str
    seed_from: str


extend(s.CreateTournament, {"anyOf": [
    {"properties": {"format": {"enum": ["tables"]}, "kind": {"enum": ["free-parking"]},
                    "options": named("TablesTournamentOptions", s.TOURNAMENT_OPTIONS)},
     "required": ["tables"]},
    {"properties": {"format": {"enum": ["rounds"]}, "kind": {"enum": ["free-parking"]},
                    "options": KINDS["free-parking"].options_ref(), "bot": {"enum": list(KINDS["free-parking"].bots)}},
     "required": ["format", "rounds", "table_size", "entrants"]},
    {"properties": {"format": {"enum": ["rounds"]}, "kind": {"enum": ["monopoly"]},
                    "bot": {"enum": list(KINDS["monopoly"].bots)},
                    "options": named("MonopolyRoundsOptions", {
                        **KINDS["monopoly"].options_schema(), "required": ["max_rounds"],
                        "properties": {**KINDS["monopoly"].options_schema()["properties"],
                                       "max_rounds": {"type": "integer", "minimum": 1, "maximum": 10_000}}})},
     "required": ["format", "rounds", "table_size", "entrants", "options"]},
]})
"""Each format and kind tied to its own fields and options, for clients (and fuzzers) reading the document."""


def _checked(body: s.CreateTournament) -> tuple[dict[str, Any], int, int]:
    """The tables' options, rounds and table size of a ``rounds`` body, every rule of the format checked (400)."""
    if body.tables is not msgspec.UNSET:
        raise ApiError(400, "invalid_request", "A tournament over rounds draws its tables: send `rounds` and "
                       "`table_size`, not `tables`", format="rounds")
    if body.rounds is msgspec.UNSET or body.table_size is msgspec.UNSET or body.entrants is msgspec.UNSET:
        raise ApiError(400, "invalid_request", "A tournament over rounds needs `rounds`, `table_size` and `entrants` "
                       "(player ids, or \"open\")")
    if body.duplicate and body.kind != "free-parking":
        raise ApiError(400, "invalid_request", "Duplicate deals are the card game's: Monopoly's dice are drawn as play "
                       "goes, so one seed does not give every table the same luck", format="rounds")
    if body.kind == "monopoly" and not body.options.get("max_rounds"):
        raise ApiError(400, "invalid_request", "A Monopoly tournament's tables need `options.max_rounds`: a round "
                       "ends when its every table has, and an uncapped game may go on for hours")
    options = {"turn_seconds": TURN_SECONDS, **body.options}
    config_for(body.kind, body.table_size, options)  # a bad size or option: 400, and nothing written
    if body.bot is not msgspec.UNSET and body.bot not in KINDS[body.kind].bots:
        raise ApiError(400, "invalid_request", f"A {body.kind} table is filled with one of its bots: "
                       f"{', '.join(KINDS[body.kind].bots)}", bot=body.bot)
    return options, body.rounds, body.table_size


async def create(request: Request, body: s.CreateTournament) -> HTTPResponse:
    """``POST /tournaments`` with ``format: "rounds"`` (the admin; ``tournaments.create`` checked who asks)."""
    options, rounds_count, table_size = _checked(body)
    store = request.app.ctx.store
    named = [] if body.entrants == "open" else list(dict.fromkeys(body.entrants))
    players = {}
    for player_id in named:
        info = await store.player(player_id)
        if info is None:
            raise ApiError(400, "invalid_request", f"No registered player has the id {player_id!r}", player_id=player_id)
        players[player_id] = info
    refusal = volatile_refusal(request)
    if refusal is not None:
        raise refusal
    server_seed = secrets.token_bytes(32)
    record = RoundsRecord(
        tournament_id="t_" + secrets.token_hex(8), name=body.name, kind=body.kind, options=options, rounds=rounds_count,
        table_size=table_size, duplicate=body.duplicate, open=body.entrants == "open",
        bot=body.bot if body.bot is not msgspec.UNSET else FILLERS[body.kind], created_at=now_ms(),
        server_seed=server_seed.hex(), seed_commitment=rules.commitment(server_seed))
    for player_id, info in players.items():  # before the record: a tournament is never seen without its named entrants
        await store.tournament_enter(record.tournament_id, player_id, encode(_named(record, player_id, info)))
    await store.put_tournament(record.tournament_id, encode(record))
    await store.tournament_playing(record.tournament_id, True)
    return _answer(await summary(request.app, record), 201)


def _named(record: RoundsRecord, player_id: str, info: dict[str, Any]) -> Entrant:
    """An entrant the organiser named: their client seed derived from the committed server seed, as a bot's is."""
    seed = rules.entrant_seed(bytes.fromhex(record.server_seed), player_id)
    return Entrant(player_id=player_id, name=info.get("name", ""), client_seed=seed.hex(), seed_from="server",
                   public_key=info.get("public_key") or None, account=info.get("account", "person"), entered_at=now_ms())


async def load(request: Request, tournament_id: str) -> RoundsRecord:
    raw = await load_raw(request, tournament_id)
    if not is_rounds(raw):
        raise ApiError(409, "not_rounds", "This tournament is one round of tables: it has no entries, start or rounds",
                       tournament_id=tournament_id)
    return decode_record(raw)


@bp.post("/tournaments/<tournament_id:str>/entries")
@doc("post", "/tournaments/<tournament_id:str>/entries", "Enter a tournament over rounds (or, the organiser, enter a player)",
     body=Enter, answers={201: EntrantAnswer}, errors=(400, 401, 403, 404, 409, 413, 503), auth="required")
async def enter(request: Request, tournament_id: str) -> HTTPResponse:
    """A registered player enters a tournament open to entry, with their client seed; the admin enters a registered
    `player_id` into any tournament (their seed derived). 409 `already_entered`, `entry_closed` once it started, or
    `entry_full` at the most entrants (256)."""
    who = await _caller(request)
    if who.anonymous:
        raise ApiError(401, "unauthorized", "Enter with a registered player's token (POST /players), or as the organiser")
    body = _decode(request, Enter)
    record = await load(request, tournament_id)
    store = request.app.ctx.store
    entrant = await _entrant_for(request, record, who, body)
    outcome = await store.tournament_enter(tournament_id, entrant.player_id, encode(entrant))
    if outcome == "closed":
        raise ApiError(409, "entry_closed", "The tournament has started: entry is closed", tournament_id=tournament_id)
    if outcome == "already":
        raise ApiError(409, "already_entered", "This player has entered already", player_id=entrant.player_id)
    if outcome == "full":
        raise ApiError(409, "entry_full", "The tournament has as many entrants as it takes", tournament_id=tournament_id)
    return _answer(EntrantAnswer(tournament_id=tournament_id, player_id=entrant.player_id, name=entrant.name,
                                 client_seed=entrant.client_seed, seed_from=entrant.seed_from), 201)


async def _entrant_for(request: Request, record: RoundsRecord, who: Caller, body: Enter) -> Entrant:
    store = request.app.ctx.store
    if who.admin:
        if body.client_seed is not None or body.public_key is not None:
            raise ApiError(403, "forbidden", "A client seed or a key is the player's own to send: the organiser enters a "
                           "`player_id` alone (their seed is derived, their key the one they registered)")
        if body.player_id is None:
            raise ApiError(400, "invalid_request", "The organiser enters a registered player: name their `player_id`",
                           player_id=None)
        info = await store.player(body.player_id)
        if info is None:
            raise ApiError(400, "invalid_request", f"No registered player has the id {body.player_id!r}",
                           player_id=body.player_id)
        return _named(record, body.player_id, info)
    if who.player_id is None or who.guest_of is not None:
        raise ApiError(401 if who.anonymous else 403, "unauthorized" if who.anonymous else "forbidden",
                       "Enter with a registered player's token (POST /players)")
    if body.player_id is not None and body.player_id != who.player_id:
        raise ApiError(403, "forbidden", "A player enters themselves; the organiser enters others")
    if not record.open:
        raise ApiError(403, "forbidden", "This tournament's entrants are named by its organiser")
    public_key = sound_key(body.public_key) or await registered_key(store, who)
    seed, seed_from = (body.client_seed, "player") if body.client_seed else (
        rules.entrant_seed(bytes.fromhex(record.server_seed), who.player_id).hex(), "server")
    return Entrant(player_id=who.player_id, name=who.name or "", client_seed=seed, seed_from=seed_from,  # type: ignore[arg-type]
                   public_key=public_key, account=who.account, entered_at=now_ms())


@bp.post("/tournaments/<tournament_id:str>/start")
@doc("post", "/tournaments/<tournament_id:str>/start", "Close entry and start a tournament over rounds (the organiser)",
     answers={200: RoundsAnswer}, errors=(401, 403, 404, 409, 503), auth="required")
async def start(request: Request, tournament_id: str) -> HTTPResponse:
    """Entry closes, the tournament's seed is combined from the committed one and every entrant's client seed, and round
    1 is drawn and seated. 409 `too_few_entrants` under two. Starting again answers the tournament as it is."""
    who = await _caller(request)
    if not who.admin:
        raise ApiError(401 if who.anonymous else 403, "unauthorized" if who.anonymous else "forbidden",
                       "Only the organiser (the admin) starts a tournament")
    record = await load(request, tournament_id)
    store = request.app.ctx.store
    entrants, started, _ = await entrants_of(store, tournament_id)
    if started is None:
        if len(entrants) < 2:
            raise ApiError(409, "too_few_entrants", f"{len(entrants)} entrant(s): a tournament needs two or more")
        await store.tournament_close(tournament_id)
        entrants, _, _ = await entrants_of(store, tournament_id)  # entry is closed: this list is the last
        seed = rules.tournament_seed(bytes.fromhex(record.server_seed),
                                     {p: bytes.fromhex(e.client_seed) for p, e in entrants.items()})
        await store.tournament_note(tournament_id, "started",
                                    encode(Started(entrants=sorted(entrants), seed=seed.hex(), at=now_ms())))
    await advance(request.app, record)
    return _answer(await summary(request.app, record))
