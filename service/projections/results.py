"""Each registered player's results: games played and won, total points, per kind, with every game's result inside.

A finished game adds one ``GameResult`` per registered player (``results_of``, pure). A player's key lives in
no game's slot, so it cannot share the game's compare-and-set script: each result is an idempotent upsert keyed
by the game id (``Store.project_result``), made before the game's checkpoint moves. A result written twice —
two projectors, a retry after a crash between the two writes, a replay — is stored and counted once.

``ns:proj:results:<player_id>`` is a hash: ``g:<game_id>`` (the ``GameResult`` as JSON), ``c:<game_id>``
(what it added to the counters) and the counters ``played:<kind>``, ``won:<kind>``, ``points:<kind>``.
Games that never finish are not counted.
"""

from __future__ import annotations

import msgspec

from service.events.base import Player
from service.store.store import Store

from .scores import Scores


def registered(player: Player | None) -> bool:
    """Whether statistics count this player: the one place that decides it."""
    if player is None:
        return False
    flag = getattr(player, "registered", None)
    if flag is not None:
        return bool(flag)
    return player.player_id is not None and player.bot is None


class GameResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    game_id: str
    kind: str
    seat: int  # the seat the player ended in (after any trade of places)
    name: str
    points: int
    won: bool
    players: int  # seats in the game
    version: int  # the seq of the event that ended the game
    finished_at: int  # ms


class KindTotals(msgspec.Struct, kw_only=True):
    played: int = 0
    won: int = 0
    points: int = 0


class PlayerResults(msgspec.Struct, kw_only=True):
    player_id: str
    played: int = 0
    won: int = 0
    points: int = 0
    kinds: dict[str, KindTotals] = {}
    games: dict[str, GameResult] = {}


_encoder = msgspec.json.Encoder()
_result = msgspec.json.Decoder(GameResult)


def results_of(scores: Scores) -> list[tuple[str, GameResult]]:
    """``(player_id, result)`` for every registered player of a finished game; none before it ends.

    A player seated more than once counts once, with their best seat (the winning one if any). A solitaire on a seed
    its creator chose is left out: its line may be known, so its win would say nothing on a leaderboard; so is one in
    which a redeal was undone, whose player has seen that redeal (RULES.md §2: "counted apart, like a chosen-seed
    game"). The solitaire statistics count both, apart: ``solitaire_stats.py``.
    """
    if scores.status != "finished" or scores.finished_version is None:
        return []
    if scores.solitaire is not None and (scores.solitaire.seed_chosen or scores.solitaire.redeal_undone):
        return []
    best: dict[str, GameResult] = {}
    for seat in scores.seats:
        if not registered(seat.player):
            continue
        result = GameResult(
            game_id=scores.game_id,
            kind=scores.kind,
            seat=seat.seat,
            name=seat.player.name,
            points=seat.points,
            won=seat.seat == scores.winner,
            players=len(scores.seats),
            version=scores.finished_version,
            finished_at=scores.finished_at or 0,
        )
        pid = seat.player.player_id
        if pid not in best or (result.won, result.points) > (best[pid].won, best[pid].points):
            best[pid] = result
    return list(best.items())


def counters(result: GameResult) -> dict[str, int]:
    """What one game adds to a player's counters."""
    return {f"played:{result.kind}": 1, f"won:{result.kind}": int(result.won), f"points:{result.kind}": result.points}


def upsert(model: PlayerResults | None, player_id: str, result: GameResult) -> PlayerResults:
    """The pure form of the store's upsert (for reference and tests): a game at an equal or older version is ignored."""
    out = msgspec.convert(msgspec.to_builtins(model), PlayerResults) if model else PlayerResults(player_id=player_id)
    old = out.games.get(result.game_id)
    if old is not None and old.version >= result.version:
        return out
    for game, sign in ((old, -1), (result, 1)):
        if game is None:
            continue
        totals = out.kinds.setdefault(game.kind, KindTotals())
        totals.played += sign
        totals.won += sign * int(game.won)
        totals.points += sign * game.points
    out.games[result.game_id] = result
    out.kinds = {k: t for k, t in sorted(out.kinds.items()) if t.played}
    _total(out)
    return out


async def record(store: Store, scores: Scores) -> int:
    """Upsert the results of a finished game for each of its registered players; answers how many were new."""
    written = 0
    for player_id, result in results_of(scores):
        entry = _encoder.encode(result)
        done = await store.project_result(player_id, result.game_id, result.version, entry, counters(result))
        written += done.applied
    return written


async def read_results(store: Store, player_id: str) -> tuple[PlayerResults | None, dict[str, int]]:
    """A player's results, and the version of each game they reflect (``None, {}``: no finished game yet)."""
    raw = await store._read(store.r.hgetall(store.keys.projection("results", player_id)))
    if not raw:
        return None, {}
    out = PlayerResults(player_id=player_id)
    for k, v in raw.items():
        field = k.decode()
        if field.startswith("g:"):
            result = _result.decode(v)
            out.games[result.game_id] = result
        elif not field.startswith("c:") and field != "seq":
            what, _, kind = field.partition(":")
            setattr(out.kinds.setdefault(kind, KindTotals()), what, int(v))
    out.kinds = {k: t for k, t in sorted(out.kinds.items()) if t.played}
    out.games = dict(sorted(out.games.items(), key=lambda kv: (kv[1].finished_at, kv[0])))
    _total(out)
    return out, {gid: r.version for gid, r in out.games.items()}


def _total(out: PlayerResults) -> None:
    out.played = sum(t.played for t in out.kinds.values())
    out.won = sum(t.won for t in out.kinds.values())
    out.points = sum(t.points for t in out.kinds.values())
