"""The routes of API.md. Handlers decode at the edge, ask ``Games``, and answer with msgspec structs."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from sanic import Blueprint, HTTPResponse, Request

from service.bots import params_of
from service.bots.sight import SIGHTED
from service.events.base import Player, recorded
from service.events.envelope import redacted, seed_commitment
from service.events.keylist import Listing
from service.events.receipt import Receipt
from service.rules.engine import GAMES, Game

from . import schemas as s
from .auth import Caller, TokenRecord, caller, issue, new_id, require
from .bot_budget import bots_meta
from .errors import ApiError, bad_body
from .games import Games, SeatOf, Unseated
from .kinds import KINDS, config_for, default_seats, other_kind, server_command
from .lobby import summaries
from .openapi import doc
from .signed import registered_key, sound_key

bp = Blueprint("api")
_json = msgspec.json.Encoder()


def _answer(body: Any, status: int = 200) -> HTTPResponse:
    return HTTPResponse(_json.encode(body), status=status, content_type="application/json")


def _decode(request: Request, schema: type, code: str = "invalid_request") -> Any:
    try:
        return msgspec.json.decode(request.body or b"{}", type=schema)
    except (msgspec.DecodeError, RecursionError) as e:  # RecursionError: JSON nested deeper than the decoder goes
        raise bad_body(e, code) from None


def _games(request: Request) -> Games:
    return request.app.ctx.games


async def _caller(request: Request) -> Caller:
    return await caller(request, request.app.ctx.store, request.app.ctx.settings.admin_token)


def _seat_of(game: Game, who: Caller) -> int | None:
    if who.player_id is None:
        return None
    return next((i for i, st in enumerate(game.state.seats) if st.player and st.player.player_id == who.player_id), None)


def _seat_for(who: Caller) -> SeatOf:
    """The caller's seat in whichever state a command is decided on; a caller without one there is ``Unseated``."""

    def seat_of(game: Game) -> int:
        seat = _seat_of(game, who)
        if seat is None:
            raise Unseated()
        return seat

    return seat_of


def _actor_key(who: Caller) -> str:
    """What scopes a caller's command ids: their token's player (a registered player, or the guest of one game), never
    their seat, which a trade of places changes (API.md). The admin has no seat, so sends no commands."""
    return f"player:{who.player_id}" if who.player_id else "admin"


def _receipt(request: Request, game_id: str, version: int, head: str, at: int) -> Receipt | None:
    """The receipt of a game's log at ``version`` (signed once per version, whoever reads it); ``None``: receipts off."""
    receipts = request.app.ctx.receipts
    return receipts.of(game_id, version, head, at) if receipts is not None else None


def _view(request: Request, game: Game, who: Caller) -> Any:
    """The caller's view of ``game`` as it is now, with the receipt of its version."""
    view = game.view(_seat_of(game, who), reveal=who.admin)
    view.receipt = _receipt(request, game.game_id, game.version, game.head, game.last_at)
    return view


def _finished(game: Game) -> bool:
    return game.rules.status_of(game.state) == "finished"


def _sees_all(game: Game, who: Caller) -> bool:
    return who.admin or (_finished(game) and not withheld(game))


def withheld(game: Game) -> bool:
    """A duplicate round's table keeps its seed and every hidden card from everyone but the admin, finished or not:
    the other tables of its round are dealt the same cards (RULES.md §4); its tournament's bundle publishes them."""
    return game.state.seeding == "duplicate"


def refuse_unwatched(game: Game, who: Caller) -> None:
    """403 unless the caller may read ``game``'s play at all: anyone may, but at a duplicate round's table only its own
    players and the admin. Every table of the round is dealt the same cards, so what one table plays face up (a card
    from a hand) tells an entrant at another, or anyone who passes it on, the cards their opponents hold."""
    if withheld(game) and not who.admin and _seat_of(game, who) is None:
        raise ApiError(403, "forbidden", "A duplicate round's table is watched by its own players (and the admin) "
                       "only: the round's other tables are dealt the same cards. Its tournament's bundle publishes it",
                       game_id=game.game_id)


def _shown(who: Caller) -> Any:
    """What a read of events asks of the game it reads: may the caller read it at all (403), and see every secret."""

    def sees_all(game: Game) -> bool:
        refuse_unwatched(game, who)
        return _sees_all(game, who)

    return sees_all


def _arg(request: Request, name: str) -> str | None:
    """A query parameter as sent: ``?limit=`` is a blank value (refused), not an absent one (the default)."""
    return request.get_args(keep_blank_values=True).get(name)


def _int_query(low: int, high: int, default: int | None, text: str) -> tuple[dict[str, Any], str]:
    """An integer query parameter's OpenAPI schema and description, with the bounds ``_int_arg`` enforces."""
    schema: dict[str, Any] = {"type": "integer", "minimum": low, "maximum": high}
    if default is not None:
        schema["default"] = default
    return schema, text


GAMES_LIMIT = (1, 200, 50)  # low, high, default of GET /games?limit
EVENTS_AFTER = (0, 1 << 62, 0)
EVENTS_LIMIT = (1, 5000, 500)
STATUSES = ("waiting", "playing", "finished")


def _int_arg(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = _arg(request, name)
    if raw is None:
        return default
    if not re.fullmatch(r"-?[0-9]{1,30}", raw):  # not int()'s "+5", " 5", "1_000" or other scripts' digits
        raise ApiError(400, "invalid_request", f"?{name} must be a whole number", name=name)
    value = int(raw)
    if not low <= value <= high:
        raise ApiError(400, "invalid_request", f"?{name} must be between {low} and {high}", name=name)
    return value



# --- games ----------------------------------------------------------------------------------------


@bp.post("/games")
@doc("post", "/games", "Create a game", body=s.CreateGame, answers={201: s.GameCreatedAnswer}, errors=(400, 401, 403, 413, 429, 503))
async def create_game(request: Request) -> HTTPResponse:
    """``seed`` fixes the deal: the admin's, or a solitaire player's own choice (nobody else sees that one table's
    hands); such a game is marked in its config (``seed_chosen``) and counted apart in the player's statistics.
    Limited per client address and per registered player (docs/limits.md); only a request that would create a
    game is counted."""
    body = _decode(request, s.CreateGame)
    who = await _caller(request)
    kind = KINDS.get(body.kind)
    seats = body.seats if body.seats is not msgspec.UNSET else default_seats(kind) if kind else 0
    config_for(body.kind, seats, body.options)  # a bad kind, seats or options: 400 before any question of the seed
    if body.seed is not None and not who.admin and not (kind and kind.chosen_seed):
        raise ApiError(403, "forbidden", "Only the admin may fix this game's seed: whoever knows it sees every hand")
    await request.app.ctx.limiter.charge("games", request, who)
    meta = bots_meta(request.app.ctx.limiter, request, who)  # its bots, alone at the table, play at this address's pace
    game = await _games(request).create(body.kind, seats, body.options, bytes.fromhex(body.seed) if body.seed else None,
                                        meta=meta)
    commitment = seed_commitment(game.seed)
    seeding = game.state.seeding
    return _answer(s.GameCreatedAnswer(game.game_id, body.kind, seats, commitment, game.version, game.head, seeding), 201)


@bp.get("/games")
@doc("get", "/games", "List games, newest first", answers={200: s.GameList}, errors=(400, 503), auth="none",
     query={"status": ({"enum": list(STATUSES)}, "waiting | playing | finished"), "kind": ("string", "a game kind"),
            "limit": _int_query(*GAMES_LIMIT, "1–200, default 50")})
async def list_games(request: Request) -> HTTPResponse:
    status = _arg(request, "status")
    if status is not None and status not in STATUSES:
        raise ApiError(400, "invalid_request", "?status must be waiting, playing or finished")
    kind = _arg(request, "kind")
    limit = _int_arg(request, "limit", GAMES_LIMIT[2], *GAMES_LIMIT[:2])
    if kind is not None and kind not in GAMES:
        return _answer(s.GameList([]))  # no game is of a kind the service does not have (and no key is read for it)
    store = request.app.ctx.store
    ids = await store.list_games(status, limit, kind or "")  # each kind and status has an index: a page reads `limit`
    listed = [
        (game_id, meta)
        for game_id, meta in zip(ids, await store.metas(ids), strict=True)
        # a listing races the games' own moves: show each as its metadata says now, and only where it still belongs
        if meta is not None and (kind is None or meta["kind"] == kind) and (status is None or meta["status"] == status)
    ]
    out = await summaries(store, listed)
    return _answer(s.GameList(out))


@bp.post("/games/<game_id:str>/seats")
@doc("post", "/games/<game_id:str>/seats", "Take a seat", body=s.JoinSeat, body_required=False, answers={201: s.SeatAnswer},
     errors=(400, 401, 404, 409, 413, 503))
async def join(request: Request, game_id: str) -> HTTPResponse:
    body = _decode(request, s.JoinSeat)
    who = await _caller(request)
    store = request.app.ctx.store
    registered = who.player_id is not None and who.guest_of is None
    if (body.name is None) == (body.bot is None) and not (registered and body.bot is None):
        raise ApiError(400, "invalid_request", "Send either a name or a bot (a registered player's token needs neither)")
    game = await _games(request).load(game_id)
    if body.bot is not None and body.bot not in KINDS[game.rules.KIND].bots:
        bots = ", ".join(KINDS[game.rules.KIND].bots) or "none"
        raise ApiError(400, "invalid_request", f"A {game.rules.KIND} game seats these bots: {bots}", bot=body.bot)
    if body.bot is not None and body.client_seed is not None:  # else whoever adds the bot would pick its seed
        raise ApiError(400, "invalid_request", "A bot brings no client seed: the server derives one from its committed "
                       "seed (docs/rng.md); send `client_seed` only for a person's seat", bot=body.bot)
    if body.bot is not None and body.public_key is not None:  # a bot's moves are the server's: nobody else may sign them
        raise ApiError(400, "invalid_request", "A bot's seat is never keyed: send `public_key` only for a person's seat", bot=body.bot)
    public_key = sound_key(body.public_key) or (await registered_key(store, who) if registered else None)
    meta = await store.meta(game_id) or {}
    if "rounds" in meta:  # its seats are the draw's, each taken in its order by the tournament (round_tables.py)
        raise ApiError(409, "seat_reserved", "A round's table is seated by its tournament, as drawn: its entrants "
                       "are seated for them", game_id=game_id, tournament_id=meta["rounds"])
    reserved = frozenset(msgspec.json.decode(meta.get("reserved", "[]"), type=list[str]))  # a tournament table's
    token: str | None = None
    if body.bot is not None:
        player = Player(name=f"{body.bot} bot", player_id=new_id("b"), bot=body.bot, bot_version=SIGHTED,
                        bot_params=params_of(game.rules.KIND, body.bot))  # named at its table (Games.seat)
    elif registered:
        player = Player(name=who.name or "", player_id=who.player_id, public_key=public_key, account=recorded(who.account))
        Games.check_seat(await _games(request).fresh(game_id), player, reserved)  # a refused join takes no seat token
        await request.app.ctx.limiter.charge("seats", request, who)
        token = request.headers["authorization"].partition(" ")[2].strip()
    else:
        assert body.name is not None
        player = Player(name=body.name, player_id=new_id("g"), guest=True, public_key=public_key)
        Games.check_seat(await _games(request).fresh(game_id), player, reserved)  # a refused join writes no token
        await request.app.ctx.limiter.charge("seats", request, who)  # each guest a new player, with commands of its own
        token = await issue(store, TokenRecord(kind="guest", player_id=player.player_id, name=body.name, game_id=game_id))
    game, seat = await _games(request).seat(game_id, player, reserved, tournament=meta.get("tournament"), client_seed=body.client_seed)
    return _answer(s.SeatAnswer(seat, token or "", player.player_id or ""), 201)


@bp.get("/games/<game_id:str>")
@doc("get", "/games/<game_id:str>", "The caller's view of a game", answers={200: s.GameView}, errors=(401, 403, 404, 503))
async def get_game(request: Request, game_id: str) -> HTTPResponse:
    who = await _caller(request)
    game = await _games(request).fresh(game_id)
    refuse_unwatched(game, who)
    return _answer(_view(request, game, who))


@bp.post("/games/<game_id:str>/commands")
@doc("post", "/games/<game_id:str>/commands", "Send a command as your seat", body=s.ClientCommand, answers={200: s.CommandAnswer},
     errors=(400, 401, 403, 404, 409, 413, 422, 503), auth="required")
async def command(request: Request, game_id: str) -> HTTPResponse:
    who = require(await _caller(request))
    await request.app.ctx.limiter.charge_command(request, who)  # every command a game accepts is an event kept for good
    games = _games(request)
    game = await games.load(game_id)
    cmd = _command(game, request.body or b"")  # the kind never changes: any cached state says it
    request.ctx.command = (game.rules.KIND, type(cmd).__struct_config__.tag)
    executed = await games.execute(
        game_id,
        cmd,
        _seat_for(who),
        actor_key=_actor_key(who),
        command_id=cmd.command_id,
        expected_version=cmd.expected_version,
    )
    game = executed.game
    reveal = _sees_all(game, who)
    events = executed.envelopes if reveal else [redacted(e) for e in executed.envelopes]
    last = executed.envelopes[-1]
    # the view is of the game now (it may have gone on since, by a bot's move); the receipt is of this command's batch
    receipt = _receipt(request, game_id, last.seq, last.hash, last.at)
    return _answer(s.CommandAnswer(last.seq, last.hash, events, _view(request, game, who), receipt))


def _command(game: Game, body: bytes) -> msgspec.Struct:
    """The body as a command of the game's kind (its server commands too: the rules refuse those, 422 ``server_only``);
    a command of another kind is 422 ``wrong_kind``, since it is well formed, only not for this game."""
    try:
        return game.codec.decode_command(body)
    except (msgspec.DecodeError, RecursionError) as e:
        error: Exception = e
    try:
        other = other_kind(body, game.rules.KIND)
    except (msgspec.DecodeError, RecursionError) as e:  # another kind's command, malformed: its own error says how
        error, other = e, None
    if other is not None:
        raise ApiError(422, "wrong_kind", f"This is a {game.rules.KIND} game, and that is a {other[0]} command", kind=game.rules.KIND)
    if (tag := server_command(body)) is not None:
        raise ApiError(422, "server_only", f"Only the server may send {tag}", type=tag)
    raise bad_body(error, "invalid_command")


@bp.get("/keys")
@doc("get", "/keys", "The public keys that sign receipts, with when each signs, and the hash-chained record of the "
     "listing (entries, head) that receipts v2 name", answers={200: Listing}, auth="none")
async def keys(request: Request) -> HTTPResponse:
    """Every key that ever signed (a rotated one stays listed, ``not_after`` its last day), so any receipt can be
    checked, and the chain of the listing's entries with its head (docs/fairness.md, Keys); empty when the service
    signs nothing."""
    receipts = request.app.ctx.receipts
    return _answer(receipts.keyring.listing() if receipts is not None else Listing(keys=[]))


@bp.get("/openapi.json")
async def openapi_json(request: Request) -> HTTPResponse:
    """The OpenAPI document at the root, where API.md promises it (sanic-ext also serves it under /docs)."""
    return _answer(request.app.ctx.openapi)


@bp.get("/healthz")
@doc("get", "/healthz", "Is the service up, and on which store", answers={200: s.Health, 503: s.Health}, auth="none")
async def health(request: Request) -> HTTPResponse:
    store = request.app.ctx.store
    ok = await store.ping()
    return _answer(s.Health(ok, store.name), 200 if ok else 503)

