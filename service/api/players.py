"""The routes about players: registering one, a player's results, ratings and solitaire statistics, the leaderboard
and the ratings tables."""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from service.projections import read_leaderboard, read_results, read_stats
from service.projections.ratings import read_game_changes, read_kind, read_player_ratings
from service.rules.engine import GAMES
from service.rules.ratings import RATED_KINDS

from . import schemas as s
from .auth import Caller, TokenRecord, is_admin, issue, new_id
from .errors import ApiError
from .games import now_ms
from .openapi import doc
from .signed import sound_key
from .routes import _answer, _arg, _decode, _int_arg, _int_query

bp = Blueprint("players")


@bp.post("/players")
@doc("post", "/players", "Register a player", body=s.RegisterPlayer, answers={201: s.PlayerCreated}, errors=(400, 413, 429, 503), auth="none")
async def register(request: Request) -> HTTPResponse:
    """Limited per client address (docs/limits.md): it takes no token, registering is what gives one. ``account``
    ``bot`` registers a bot account; the record and the token both keep it, for good."""
    body = _decode(request, s.RegisterPlayer)
    admin = is_admin(request, request.app.ctx.settings.admin_token)
    public_key = sound_key(body.public_key)  # a refused key takes no token: only what would be created is counted
    await request.app.ctx.limiter.charge("players", request, Caller(admin=admin))
    player_id = new_id("p")
    record = {"name": body.name, "created_at": str(now_ms()), "account": body.account}
    if public_key is not None:
        record["public_key"] = public_key
    await request.app.ctx.store.put_player(player_id, record)
    token = await issue(request.app.ctx.store, TokenRecord(kind="player", player_id=player_id, name=body.name,
                                                           account=body.account))
    return _answer(s.PlayerCreated(player_id, body.name, token, body.account), 201)


@bp.get("/players/<player_id:str>")
@doc("get", "/players/<player_id:str>", "A registered player and their results (a read model: finished games only)",
     answers={200: s.PlayerAnswer}, errors=(404, 503), auth="none")
async def player(request: Request, player_id: str) -> HTTPResponse:
    store = request.app.ctx.store
    info = await store.player(player_id)
    if info is None:
        raise ApiError(404, "not_found", f"No player has the id {player_id!r}", id=player_id)
    results, _ = await read_results(store, player_id)
    ratings = {kind: s.KindRating(rating=r.shown, mu=r.mu, sigma=r.sigma, games=r.games)
               for kind, r in (await read_player_ratings(store, player_id)).items()}
    account = "bot" if info.get("account") == "bot" else "person"  # a record from before bot accounts: a person
    return _answer(s.PlayerAnswer(player_id, info["name"], results, ratings, account))


@bp.get("/players/<player_id:str>/stats")
@doc("get", "/players/<player_id:str>/stats", "A registered player's solitaire statistics (a read model: games from their deal)",
     answers={200: s.StatsAnswer}, errors=(404, 503), auth="none")
async def player_stats(request: Request, player_id: str) -> HTTPResponse:
    """Started, finished, won, the win rate over games started, best and median time (first move to last), with games
    on a seed the player chose and games with an undone redeal counted apart from dealt ones; ``as_of`` is the latest
    deal or end counted (the projector may not have reached the newest yet)."""
    store = request.app.ctx.store
    info = await store.player(player_id)
    if info is None:
        raise ApiError(404, "not_found", f"No player has the id {player_id!r}", id=player_id)
    return _answer(s.StatsAnswer(player_id=player_id, name=info["name"], solitaire=await read_stats(store, player_id)))


LEADERS_LIMIT = (1, 200, 50)


@bp.get("/leaderboard")
@doc("get", "/leaderboard", "Registered players ranked across finished games: by wins, then points", answers={200: s.Leaderboard},
     errors=(400, 503), auth="none",
     query={"kind": ({"enum": sorted(GAMES)}, "one game kind (default: every kind together)"),
            "limit": _int_query(*LEADERS_LIMIT, "1–200, default 50")})
async def leaderboard(request: Request) -> HTTPResponse:
    kind = _arg(request, "kind")
    if kind is not None and kind not in GAMES:
        raise ApiError(400, "invalid_request", f"?kind must be one of {', '.join(sorted(GAMES))}", kind=kind)
    limit = _int_arg(request, "limit", LEADERS_LIMIT[2], *LEADERS_LIMIT[:2])
    return _answer(s.Leaderboard(kind=kind, players=await read_leaderboard(request.app.ctx.store, kind, limit)))


RATINGS_LIMIT = (1, 200, 50)


@bp.get("/ratings")
@doc("get", "/ratings", "One kind's ratings (OpenSkill Plackett-Luce, shown as mu - 3 sigma): registered players and "
     "each bot kind as one player (player_id bot:<kind>)", answers={200: s.RatingsAnswer}, errors=(400, 503),
     auth="none",
     query={"kind": ({"enum": sorted(RATED_KINDS)}, "a rated kind (default free-parking; a solitaire is never rated)"),
            "limit": _int_query(*RATINGS_LIMIT, "1–200, default 50")})
async def ratings(request: Request) -> HTTPResponse:
    """Rated games only (RULES.md §4), folded in the order they finished: ``python -m replays ratings --json`` on
    the games' exports prints the same table, to the last digit."""
    kind = _arg(request, "kind")
    kind = "free-parking" if kind is None else kind  # a blank ?kind= is refused, not read as absent
    if kind not in RATED_KINDS:
        raise ApiError(400, "invalid_request", f"?kind must be one of {', '.join(sorted(RATED_KINDS))}", kind=kind)
    limit = _int_arg(request, "limit", RATINGS_LIMIT[2], *RATINGS_LIMIT[:2])
    table = await read_kind(request.app.ctx.store, kind)
    return _answer(s.RatingsAnswer(kind=kind, players=table.ranked(kind, limit)))


@bp.get("/games/<game_id:str>/ratings")
@doc("get", "/games/<game_id:str>/ratings", "What a finished game did to its players' ratings (before and after it)",
     answers={200: s.GameRatingsAnswer}, errors=(404, 503), auth="none")
async def game_ratings(request: Request, game_id: str) -> HTTPResponse:
    """The game-over box's "Expert Eve 12.4 → 13.1": a read model, so ``rated`` stays false until the projector has
    reached the game's end (and for good in a game that is not rated)."""
    meta = await request.app.ctx.store.meta(game_id)
    if meta is None:
        raise ApiError(404, "not_found", f"No game has the id {game_id!r}", id=game_id)
    kind = meta.get("kind", "")
    changes = await read_game_changes(request.app.ctx.store, kind, game_id) if kind in RATED_KINDS else None
    return _answer(s.GameRatingsAnswer(game_id=game_id, kind=kind, rated=changes is not None, changes=changes or []))
