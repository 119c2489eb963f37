"""A bot account's own rate limits (docs/limits.md, "Bot accounts"): its commands, games and seats take tokens from
buckets of their own, per account and per address, with limits of their own; the server's bots at its tables (no
person there) take theirs from its address's bot budget; a person's limits and buckets are as they were.

The limiter's clock is held by the test, at one token a minute: no token comes back while a test runs, and a
bucket's key lives for minutes in the store (its TTL runs on the store's own clock)."""

from __future__ import annotations

import hashlib

import pytest

from service.api.bot_budget import BUCKET_META
from service.api.limits import Limit, limits_of
from service.api.settings import Settings
from tests.api.conftest import make_settings, served
from tests.api.helpers import assert_error, wait_for
from tests.api.test_limits import MINUTE, Clock, assert_limited, at

LIMITS = {"bot_commands_burst": 4, "bot_commands_per_minute": 1, "bot_address_commands_burst": 6,
          "bot_address_commands_per_minute": 1, "bot_games_burst": 2, "bot_games_per_minute": 1, "bot_seats_burst": 2,
          "bot_seats_per_minute": 1, "commands_burst": 5, "commands_per_minute": 1, "address_commands_burst": 10,
          "address_commands_per_minute": 1}


@pytest.fixture(params=["embedded", "redis"])
async def limited(request, tmp_path):
    """A service behind one proxy (a test names the client's address in X-Forwarded-For), with tight limits for bot
    accounts and for people (``LIMITS``); ``limited.clock`` is the limiter's clock."""
    async with served(make_settings(request.param, tmp_path, rate_limits=True, proxies_count=1, **LIMITS)) as api:
        api.clock = Clock()
        api.app.ctx.limiter.clock = api.clock
        yield api


async def register(api, name: str, address: str, account: str = "person") -> str:
    r = await api.post("/players", json={"name": name, "account": account}, headers=at(address))
    assert r.status_code == 201, r.text
    return r.json()["token"]


async def solitaire(api, token: str, address: str) -> tuple[str, dict]:
    """A solitaire the player created and sat down at: its id, and a move it can make and undo."""
    r = await api.post("/games", json={"kind": "solitaire"}, headers=at(address, token))
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={}, headers=at(address, token))).status_code == 201
    legal = (await api.get(f"/games/{game_id}", headers=at(address, token))).json()["legal"]
    return game_id, next(c for c in legal if c["type"] == "move")


async def send(api, game_id: str, token: str, address: str, n: int, move: dict) -> None:
    """``n`` commands, a move and its undo by turns, each accepted."""
    for i in range(n):
        body = move if i % 2 == 0 else {"type": "undo"}
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=at(address, token))
        assert r.status_code == 200, r.text


async def test_a_bot_account_past_its_command_budget_is_429_and_a_persons_budget_is_unchanged(limited):
    robo, ann = await register(limited, "Robo", "10.40.0.1", "bot"), await register(limited, "Ann", "10.40.0.1")
    robo_game, robo_move = await solitaire(limited, robo, "10.40.0.1")
    await send(limited, robo_game, robo, "10.40.0.1", 4, robo_move)
    version = (await limited.get(f"/games/{robo_game}")).json()["version"]
    r = await limited.post(f"/games/{robo_game}/commands", json=robo_move, headers=at("10.40.0.1", robo))
    error = assert_error(r, 429, "rate_limited")
    assert r.headers["retry-after"] == "60"
    assert error["detail"] == {"retry_after": 60, "limit": "bot_commands", "by": "player", "burst": 4, "per_minute": 1}
    assert "by this bot account" in error["message"]
    assert (await limited.get(f"/games/{robo_game}")).json()["version"] == version  # nothing appended
    ann_game, ann_move = await solitaire(limited, ann, "10.40.0.1")  # the same address: her budget is a person's
    await send(limited, ann_game, ann, "10.40.0.1", 5, ann_move)
    assert_limited(await limited.post(f"/games/{ann_game}/commands", json=ann_move, headers=at("10.40.0.1", ann)),
                   "commands", "player", 60)
    limited.clock.now += MINUTE
    await send(limited, robo_game, robo, "10.40.0.1", 1, robo_move)


async def test_the_bot_accounts_of_an_address_share_a_budget_of_their_own(limited):
    one, two = await register(limited, "Robo", "10.41.0.1", "bot"), await register(limited, "Rita", "10.41.0.1", "bot")
    ann = await register(limited, "Ann", "10.41.0.1")
    (g1, m1), (g2, m2) = await solitaire(limited, one, "10.41.0.1"), await solitaire(limited, two, "10.41.0.1")
    await send(limited, g1, one, "10.41.0.1", 4, m1)
    await send(limited, g2, two, "10.41.0.1", 2, m2)
    r = await limited.post(f"/games/{g2}/commands", json=m2, headers=at("10.41.0.1", two))
    assert_limited(r, "bot_commands", "address", 60)
    assert "commands of bot accounts from this address" in r.json()["error"]["message"]
    g3, m3 = await solitaire(limited, ann, "10.41.0.1")
    await send(limited, g3, ann, "10.41.0.1", 5, m3)  # the people of the address have their own budget
    await send(limited, g2, two, "10.41.0.2", 1, m2)  # from another address: Rita's own bucket still has tokens


async def test_a_bot_accounts_games_and_seats_have_limits_of_their_own(limited):
    robo, ann = await register(limited, "Robo", "10.42.0.1", "bot"), await register(limited, "Ann", "10.42.0.1")
    game = {"kind": "free-parking", "seats": 2}
    mine = []
    for _ in range(2):
        r = await limited.post("/games", json=game, headers=at("10.42.0.1", robo))
        assert r.status_code == 201, r.text
        mine.append(r.json()["game_id"])
    assert_limited(await limited.post("/games", json=game, headers=at("10.42.0.1", robo)), "bot_games", "address", 60)
    r = await limited.post("/games", json=game, headers=at("10.42.0.1", ann))  # a person's games: her own budget
    assert r.status_code == 201, r.text
    hers = r.json()["game_id"]
    for game_id in mine:
        assert (await limited.post(f"/games/{game_id}/seats", json={}, headers=at("10.42.0.1", robo))).status_code == 201
    assert_limited(await limited.post(f"/games/{hers}/seats", json={}, headers=at("10.42.0.1", robo)),
                   "bot_seats", "address", 60)
    assert (await limited.post(f"/games/{hers}/seats", json={}, headers=at("10.42.0.1", ann))).status_code == 201


async def test_the_server_bots_at_a_bot_accounts_table_take_from_its_bot_budget(limited):
    """A table of a bot account and a server bot has no person to pace it: the bot's moves take tokens from the bot
    accounts' bucket of the address that created the game, the one the account's own commands take theirs from."""
    limited.app.ctx.limiter.limits["bot_commands:addr"] = Limit(burst=1, per_minute=1)
    robo = await register(limited, "Robo", "10.43.0.1", "bot")
    r = await limited.post("/games", json={"kind": "free-parking", "seats": 2}, headers=at("10.43.0.1", robo))
    game_id = r.json()["game_id"]
    assert (await limited.post(f"/games/{game_id}/seats", json={}, headers=at("10.43.0.1", robo))).status_code == 201
    assert (await limited.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201  # plays first
    meta = await limited.app.ctx.store.meta(game_id)
    assert meta[BUCKET_META] == "bot_commands:addr:" + hashlib.sha256(b"10.43.0.1").hexdigest()[:32]

    async def bot_moved():
        events = (await limited.get(f"/games/{game_id}/events")).json()["events"]
        return any(e.get("actor") == "seat:1" for e in events)

    await wait_for(bot_moved, 30)
    r = await limited.post(f"/games/{game_id}/commands", json={"type": "end_turn"}, headers=at("10.43.0.1", robo))
    assert_limited(r, "bot_commands", "address", 60)  # the bot's move took the bucket's one token


def test_the_bot_budgets_defaults_are_the_documented_ones():
    service = Settings()
    assert (service.bot_commands_burst, service.bot_commands_per_minute) == (600, 6000)
    assert (service.bot_address_commands_burst, service.bot_address_commands_per_minute) == (1200, 12000)
    assert (service.bot_games_burst, service.bot_games_per_minute) == (40, 120)
    assert (service.bot_seats_burst, service.bot_seats_per_minute) == (40, 120)
    assert {"bot_games", "bot_seats", "bot_commands", "bot_commands:addr"} <= set(limits_of(service))
    assert limits_of(Settings(bot_commands_per_minute=0)).get("bot_commands") is None  # 0 a minute: that limit off
