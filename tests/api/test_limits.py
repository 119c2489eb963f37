"""Per-client limits on new players and games (docs/limits.md): a burst past the limit is 429 ``rate_limited`` with
``Retry-After`` and writes nothing; after the wait (on a clock the test moves, never a sleep) it is allowed again;
each address and each registered player has its own bucket; the admin is never limited."""

from __future__ import annotations

import pytest

from service.api.limits import Limit
from service.api.settings import Settings
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import assert_error
from tests.http import serving
from tests.stores import drop_namespace_at

NOW = 1_800_000_000_000
MINUTE = 60_000
GAME = {"kind": "free-parking", "seats": 2}


class Clock:
    """The limiter's time source, moved by the test."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> int:
        return self.now


@pytest.fixture(params=["embedded", "redis"])
async def limited(request, tmp_path):
    """A service with tight limits — games 3 at once then 1 a minute, players 2 then 1 — behind one proxy (so a test
    names the client's address in X-Forwarded-For); ``limited.clock`` is the limiter's clock."""
    settings = make_settings(request.param, tmp_path, rate_limits=True, games_burst=3, games_per_minute=1,
                             players_burst=2, players_per_minute=1, proxies_count=1)  # fmt: skip
    app = fresh_app(settings)
    try:
        async with serving(app) as client:
            client.app, client.clock = app, Clock()
            app.ctx.limiter.clock = client.clock
            yield client
    finally:
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)


def at(address: str, token: str | None = None) -> dict[str, str]:
    """Headers of a request from ``address`` (as the proxy in front says), with a token if given."""
    return {"x-forwarded-for": address, **(bearer(token) if token else {})}


async def create(api, headers: dict[str, str]):
    return await api.post("/games", json=GAME, headers=headers)


async def games(api) -> int:
    r = await api.get("/games", params={"limit": 200})
    assert r.status_code == 200
    return len(r.json()["games"])


async def players(api) -> int:
    store = api.app.ctx.store
    return len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:player:*")])


def assert_limited(r, limit: str, by: str, seconds: int) -> None:
    error = assert_error(r, 429, "rate_limited")
    assert r.headers["retry-after"] == str(seconds)
    assert error["detail"]["retry_after"] == seconds and error["detail"]["limit"] == limit and error["detail"]["by"] == by
    assert f"try again in {seconds} s" in error["message"]


async def test_a_burst_past_the_limit_is_429_creates_nothing_and_is_allowed_after_the_wait(limited):
    for _ in range(3):
        assert (await create(limited, at("10.0.0.1"))).status_code == 201
    r = await create(limited, at("10.0.0.1"))
    assert_limited(r, "games", "address", 60)
    assert "new games from this address" in r.json()["error"]["message"]
    assert await games(limited) == 3
    limited.clock.now += MINUTE - 1_500
    assert_limited(await create(limited, at("10.0.0.1")), "games", "address", 2)  # 1.5 s left: rounded up
    limited.clock.now += 1_500
    assert (await create(limited, at("10.0.0.1"))).status_code == 201
    assert_limited(await create(limited, at("10.0.0.1")), "games", "address", 60)
    assert await games(limited) == 4


async def test_each_address_has_a_bucket_of_its_own(limited):
    for _ in range(3):
        assert (await create(limited, at("10.0.0.1"))).status_code == 201
    assert (await create(limited, at("10.0.0.1"))).status_code == 429
    for _ in range(3):
        assert (await create(limited, at("10.0.0.2"))).status_code == 201
    assert await games(limited) == 6


async def test_an_ipv6_client_counts_as_its_56(limited):
    """A home connection is delegated a /56: its /64s (and their hosts) are one client; the next /56 is another."""
    for host in ("0:7::1", "0:7::2", "0:8::1"):
        assert (await create(limited, at(f"2001:db8:{host}"))).status_code == 201
    assert (await create(limited, at("2001:db8:0:ff::ffff"))).status_code == 429
    assert (await create(limited, at("2001:db8:0:100::1"))).status_code == 201


async def test_a_registered_player_has_a_bucket_that_follows_them_across_addresses(limited):
    ann = (await limited.post("/players", json={"name": "Ann"}, headers=at("10.1.0.1"))).json()["token"]
    bob = (await limited.post("/players", json={"name": "Bob"}, headers=at("10.1.0.2"))).json()["token"]
    for n in range(3):  # Ann, from a new address each time: her own bucket runs out
        assert (await create(limited, at(f"10.2.0.{n}", ann))).status_code == 201
    r = await create(limited, at("10.2.0.9", ann))
    assert_limited(r, "games", "player", 60)
    assert "by this player" in r.json()["error"]["message"]
    for _ in range(3):  # the address Ann was refused from gave back what it took: its bucket is whole
        assert (await create(limited, at("10.2.0.9"))).status_code == 201
    assert (await create(limited, at("10.3.0.1", bob))).status_code == 201  # Bob's bucket is his own
    assert await games(limited) == 7


async def test_the_limit_holds_across_workers_on_one_redis(tmp_path):
    """Two services on one Redis namespace, as two workers are: a client's games count in both."""
    settings = make_settings("redis", tmp_path, rate_limits=True, games_burst=3, games_per_minute=1, proxies_count=1)
    apps, clock = [fresh_app(settings), fresh_app(settings)], Clock()
    try:
        async with serving(apps[0]) as one, serving(apps[1]) as two:
            for app in apps:
                app.ctx.limiter.clock = clock
            for api in (one, two, one):
                assert (await create(api, at("10.9.0.1"))).status_code == 201
            for api in (one, two):
                assert_limited(await create(api, at("10.9.0.1")), "games", "address", 60)
            clock.now += MINUTE
            assert (await create(two, at("10.9.0.1"))).status_code == 201
            assert (await create(one, at("10.9.0.1"))).status_code == 429
    finally:
        await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_a_guest_token_is_no_bucket_of_its_own(limited):
    game = (await create(limited, at("10.4.0.1"))).json()["game_id"]
    guest = (await limited.post(f"/games/{game}/seats", json={"name": "Gus"}, headers=at("10.4.0.1"))).json()["token"]
    for _ in range(2):
        assert (await create(limited, at("10.4.0.1", guest))).status_code == 201
    assert_limited(await create(limited, at("10.4.0.1", guest)), "games", "address", 60)


async def test_the_admin_is_never_limited(limited):
    for _ in range(10):
        assert (await create(limited, {**at("10.5.0.1"), **ADMIN_HEADERS})).status_code == 201
        assert (await limited.post("/players", json={"name": "Ann"}, headers={**at("10.5.0.1"), **ADMIN_HEADERS})).status_code == 201
    assert (await create(limited, at("10.5.0.1"))).status_code == 201  # nor charged to the address it came from
    assert await games(limited) == 11


async def test_players_have_their_own_limit_and_a_refused_one_is_not_written(limited):
    for name in ("Ann", "Bob"):
        assert (await limited.post("/players", json={"name": name}, headers=at("10.6.0.1"))).status_code == 201
    r = await limited.post("/players", json={"name": "Cy"}, headers=at("10.6.0.1"))
    assert_limited(r, "players", "address", 60)
    assert "new players from this address" in r.json()["error"]["message"]
    assert await players(limited) == 2
    assert (await create(limited, at("10.6.0.1"))).status_code == 201  # games are counted apart
    limited.clock.now += MINUTE
    assert (await limited.post("/players", json={"name": "Cy"}, headers=at("10.6.0.1"))).status_code == 201
    assert await players(limited) == 3


async def test_only_a_request_that_would_create_a_game_is_counted(limited):
    for _ in range(5):
        assert (await limited.post("/games", json={**GAME, "seats": 99}, headers=at("10.7.0.1"))).status_code == 400
        assert (await limited.post("/games", json={**GAME, "seed": "0" * 64}, headers=at("10.7.0.1"))).status_code == 403
    for _ in range(3):
        assert (await create(limited, at("10.7.0.1"))).status_code == 201


async def test_without_a_trusted_proxy_the_peer_is_the_client(tmp_path):
    """X-Forwarded-For is anyone's to write: unless the service is told a proxy is in front, it is not read."""
    settings = make_settings("embedded", tmp_path, rate_limits=True, games_burst=2, games_per_minute=1)
    async with serving(fresh_app(settings)) as api:
        for n in range(2):
            assert (await create(api, at(f"10.8.0.{n}"))).status_code == 201
        assert_limited(await create(api, at("10.8.0.9")), "games", "address", 60)


async def test_a_join_refused_writes_no_token(api):
    """A guest's token is written only once the seat may be taken: a full game's 409 leaves nothing behind."""
    game = (await api.post("/games", json=GAME)).json()["game_id"]
    for name in ("Ann", "Bob"):
        assert (await api.post(f"/games/{game}/seats", json={"name": name})).status_code == 201
    store = api.app.ctx.store
    tokens = len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:token:*")])
    for _ in range(3):
        assert_error(await api.post(f"/games/{game}/seats", json={"name": "Cy"}), 409, "game_full")
    assert len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:token:*")]) == tokens


def test_the_service_limits_by_default_and_the_tests_do_not(tmp_path):
    service = Settings()
    assert service.rate_limits and (service.games_burst, service.games_per_minute) == (20, 60)
    assert (service.players_burst, service.players_per_minute) == (20, 6)
    assert (service.seats_burst, service.seats_per_minute) == (20, 60)
    assert (service.commands_burst, service.commands_per_minute) == (60, 600)
    assert (service.address_commands_burst, service.address_commands_per_minute) == (120, 600)
    assert not make_settings("embedded", tmp_path).rate_limits


async def test_one_player_cannot_append_to_a_game_without_bound(limited):
    """Every command a game accepts is an event kept for good, and some games have no end of them (a solitaire's
    move and undo): a player's commands are limited too — past the burst 429 ``rate_limited`` (``by: player``) with
    nothing appended, then again after the wait. Counted in the store, as the other limits."""
    limited.app.ctx.limiter.limits["commands"] = Limit(burst=4, per_minute=60)
    game_id = (await limited.post("/games", json={"kind": "solitaire"}, headers=at("10.9.0.1"))).json()["game_id"]
    token = (await limited.post(f"/games/{game_id}/seats", json={"name": "Sol"})).json()["token"]
    move = next(c for c in (await limited.get(f"/games/{game_id}", headers=bearer(token))).json()["legal"] if c["type"] == "move")
    for body in (move, {"type": "undo"}) * 2:
        r = await limited.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
        assert r.status_code == 200, r.text
    version = (await limited.get(f"/games/{game_id}")).json()["version"]
    r = await limited.post(f"/games/{game_id}/commands", json=move, headers=bearer(token))
    error = assert_error(r, 429, "rate_limited")
    assert error["detail"] == {"retry_after": 1, "limit": "commands", "by": "player", "burst": 4, "per_minute": 60}
    assert (await limited.get(f"/games/{game_id}")).json()["version"] == version
    limited.clock.now += 1000
    assert (await limited.post(f"/games/{game_id}/commands", json=move, headers=bearer(token))).status_code == 200
