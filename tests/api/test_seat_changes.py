"""A player's seat can change (Trade Places): who the caller is at a game comes from the state a command is decided
on, never from a cache that may predate the trade, and command ids follow the caller's token, not the seat.

A worker whose cache is behind is made here by putting the game's pre-trade state back into the service's cache,
as a second worker that served the game before the trade would hold it; ``tests/drills/test_two_workers.py`` runs
the same attack against two real worker processes.
"""

from __future__ import annotations

from service.rules.engine import Game
from tests.api.conftest import bearer
from tests.api.helpers import assert_error, log_of, seeded_game, trade_places, trade_places_seed, view

SEED = trade_places_seed()


async def post(api, game_id, token, body):
    return await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))


def stale_copy(game: Game) -> Game:
    """The game as a worker that last read it now would hold it, whatever happens to it afterwards."""
    copy = Game(game.rules, game.game_id, game.seed, game.state, game.head, game.last_at)
    copy.created_at = game.created_at
    return copy


async def test_a_cache_from_before_a_trade_never_lends_a_player_the_seat_they_left(api):
    """Bob (seat 1) draws Trade Places on Ann; she accepts, then he does: Bob is at seat 0, Ann at seat 1, and seat 1
    plays next. A worker still holding the game from before the trade must not let Bob play seat 1's hand (his old
    one, whose cards he knows): it is refused as not his turn, and nothing is appended."""
    game_id, tokens = await seeded_game(api, 2, SEED)
    ann, bob = tokens
    games = api.app.ctx.games
    before_trade: dict = {}

    async def remember() -> None:
        before_trade["game"] = stale_copy(await games.fresh(game_id))
        before_trade["hand"] = (await view(api, game_id, bob))["you"]["hand"]

    await trade_places(api, game_id, tokens, before_accept=remember)
    log = await log_of(api, game_id)
    games.cache[game_id] = before_trade["game"]
    assert games.cache[game_id].state.seats[1].player.name == "Player 1"  # the cache still seats Bob at seat 1
    r = await post(api, game_id, bob, {"type": "discard", "card": before_trade["hand"][0]["id"]})
    assert_error(r, 422, "not_your_turn")
    assert await log_of(api, game_id) == log

    games.cache[game_id] = before_trade["game"]
    v = await view(api, game_id, bob)
    assert v["seat"] == 0 and v["players"][0]["name"] == "Player 1"
    assert not {c["id"] for c in v["you"]["hand"]} & {c["id"] for c in before_trade["hand"]}

    games.cache[game_id] = before_trade["game"]  # Ann, now at seat 1, plays it: her turn, from her new seat
    mine = (await view(api, game_id, ann))["you"]["hand"]
    games.cache[game_id] = before_trade["game"]
    r = await post(api, game_id, ann, {"type": "discard", "card": mine[0]["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["actor"] == "seat:1" and r.json()["view"]["seat"] == 1


async def test_a_command_resent_after_a_trade_of_places_gets_its_first_answer(api):
    """Command ids belong to the caller's token: Bob's commands sent from seat 1, resent (same id, same body) once he
    sits at seat 0, answer what they answered the first time — with or without the version they were pinned to —
    and append nothing; the same id with another body is still refused."""
    game_id, (ann, bob) = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, bob)
    discard = {"type": "discard", "card": v["you"]["hand"][0]["id"], "command_id": "bob-1", "expected_version": v["version"]}
    draw = {"type": "draw_second_chance", "command_id": "bob-2"}
    first = [await post(api, game_id, bob, body) for body in (discard, draw)]
    assert [r.status_code for r in first] == [200, 200], [r.text for r in first]
    r = await post(api, game_id, ann, {"type": "accept", "command_id": "bob-1"})  # Ann's ids are her own: no clash
    assert r.status_code == 200, r.text
    r = await post(api, game_id, bob, {"type": "accept", "command_id": "bob-3"})  # the drawer's own answer
    assert r.status_code == 200, r.text
    assert any(e["type"] == "places_traded" for e in r.json()["events"])
    log = await log_of(api, game_id)
    for body, answer in zip((discard, draw), first, strict=True):
        again = await post(api, game_id, bob, body)
        assert again.status_code == 200, again.text
        assert again.json()["events"] == answer.json()["events"]
        assert again.json()["view"]["seat"] == 0  # the view is of the seat Bob holds now
    assert_error(await post(api, game_id, bob, {**draw, "type": "end_turn"}), 409, "command_id_reused")
    assert await log_of(api, game_id) == log


async def test_a_cache_from_before_a_trade_never_hands_a_player_the_record_of_the_seat_they_left(api):
    """A seat's record (`export?as=`) is its holder's: after the trade, Bob gets seat 0's record and is refused seat
    1's — his old hand's, now Ann's — even from a worker still holding the game from before the trade."""
    game_id, tokens = await seeded_game(api, 2, SEED)
    ann, bob = tokens
    games = api.app.ctx.games
    before_trade: dict = {}

    async def remember() -> None:
        before_trade["game"] = stale_copy(await games.fresh(game_id))

    await trade_places(api, game_id, tokens, before_accept=remember)
    for token, mine, theirs in ((bob, 0, 1), (ann, 1, 0)):
        games.cache[game_id] = before_trade["game"]
        r = await api.get(f"/games/{game_id}/export", params={"as": theirs}, headers=bearer(token))
        assert_error(r, 403, "forbidden")
        games.cache[game_id] = before_trade["game"]
        r = await api.get(f"/games/{game_id}/export", params={"as": mine}, headers=bearer(token))
        assert r.status_code == 200, r.text
        assert f'"viewer":"seat {mine}"' in r.text.splitlines()[0]
