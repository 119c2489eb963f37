"""One address appending without bound (issue 31), attacked with the service's default limits.

- **Every guest seat is a new player**, and the command limit counted per player, per worker, in memory, while
  joining a seat was not limited at all: an outside review's 20 guest solitaires from one address appended 3,400 to
  5,800 events a minute (2.7 to 5.2 GiB of journal a day) and never saw a 429.
- **Each worker counted alone**, so with W workers a player had W times the limit.

Now seats taken are limited per address (and per registered player), and commands per player and per address, all
counted in the store (docs/limits.md). The limiter's clock is held still, so no token comes back while a test sends:
what is refused is the budget, never the test's speed. The bursts are the defaults; the rates after them are one a
minute (``STILL``), because a bucket's key expires in the store's own time when the bucket would be full again —
taken tokens × the interval, 100 ms a token at the default 600 a minute — and a slow request (a cluster's, a loaded
machine's) outlived it, so the bucket came back full under the held clock (61 of 60 sent, once).
"""

from __future__ import annotations

import pytest

from service.api.settings import Settings
from tests.api.conftest import fresh_app, make_settings
from tests.attack.conftest import ADMIN, ADMIN_HEADERS, bearer, inproc, settings
from tests.http import serving
from tests.stores import drop_namespace_at

DEFAULTS = Settings()
NOW = 1_800_000_000_000
STILL = {"seats_per_minute": 1, "commands_per_minute": 1, "address_commands_per_minute": 1}


def at(address: str, token: str | None = None) -> dict[str, str]:
    """Headers of a request from ``address`` (as the one trusted proxy says), with a token if given."""
    return {"x-forwarded-for": address, **(bearer(token) if token else {})}


def limited(tmp_path):
    """An in-process service with the default limits, behind one proxy; the admin (never limited) makes the games."""
    return inproc(settings(tmp_path, rate_limits=True, proxies_count=1, **STILL))


async def guest_solitaire(api, address: str, name: str) -> tuple[str, str, dict]:
    """A solitaire the admin made, joined as a guest from ``address``: its id, the guest's token, a legal move."""
    game_id = (await api.post("/games", json={"kind": "solitaire"}, headers=ADMIN_HEADERS)).json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={"name": name}, headers=at(address))
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    legal = (await api.get(f"/games/{game_id}", headers=bearer(token))).json()["legal"]
    return game_id, token, next(c for c in legal if c["type"] == "move")


async def send_round_robin(apis, guests, address: str, count: int) -> tuple[int, object]:
    """Send up to ``count`` commands (each guest's move, then its undo, and so on), one guest and one service after
    another; stop at the first not accepted. Answers how many were, and the answer that was not (``None``: all were),
    having checked that it appended nothing to its game."""
    apis = apis if isinstance(apis, list) else [apis]
    for n in range(count):
        api, (game_id, token, move) = apis[n % len(apis)], guests[n % len(guests)]
        body = move if (n // len(guests)) % 2 == 0 else {"type": "undo"}
        before = (await api.get(f"/games/{game_id}")).json()["version"]
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=at(address, token))
        if r.status_code != 200:
            assert (await api.get(f"/games/{game_id}")).json()["version"] == before  # a refused command appends nothing
            return n, r
    return count, None


def refused(r, by: str, limit: str) -> bool:
    if r.status_code != 429:
        return False
    detail = r.json()["error"]["detail"]
    return (detail["limit"], detail["by"]) == (limit, by) and int(r.headers["retry-after"]) >= 1


async def test_guest_seats_from_one_address_are_limited_and_a_refused_one_writes_no_token(tmp_path):
    async with limited(tmp_path) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        games = [(await api.post("/games", json={"kind": "free-parking", "seats": 8}, headers=ADMIN_HEADERS)).json()["game_id"]
                 for _ in range(DEFAULTS.seats_burst // 8 + 2)]
        seats = [g for g in games for _ in range(8)]
        for n, game_id in enumerate(seats[: DEFAULTS.seats_burst]):
            assert (await api.post(f"/games/{game_id}/seats", json={"name": f"g{n}"}, headers=at("10.20.0.1"))).status_code == 201
        store = api.app.ctx.store
        tokens = len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:token:*")])
        r = await api.post(f"/games/{seats[DEFAULTS.seats_burst]}/seats", json={"name": "one more"}, headers=at("10.20.0.1"))
        assert refused(r, "address", "seats"), (r.status_code, r.text)
        assert len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:token:*")]) == tokens
        game_id = seats[DEFAULTS.seats_burst]
        assert (await api.post(f"/games/{game_id}/seats", json={"name": "next door"}, headers=at("10.20.0.2"))).status_code == 201
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": "random"}, headers=at("10.20.0.1"))).status_code == 201


async def test_guest_commands_from_one_address_are_limited_however_many_seats_it_takes(tmp_path):
    """Three guests on one address, each far under a player's own burst, share the address's budget."""
    async with limited(tmp_path) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        guests = [await guest_solitaire(api, "10.21.0.1", f"sol{n}") for n in range(3)]
        assert DEFAULTS.address_commands_burst < 3 * DEFAULTS.commands_burst  # no one guest runs out first
        sent, r = await send_round_robin(api, guests, "10.21.0.1", DEFAULTS.address_commands_burst + 1)
        assert sent == DEFAULTS.address_commands_burst and refused(r, "address", "commands"), (sent, r and r.text)
        other = await guest_solitaire(api, "10.21.0.2", "elsewhere")
        r = await api.post(f"/games/{other[0]}/commands", json=other[2], headers=at("10.21.0.2", other[1]))
        assert r.status_code == 200, r.text  # another address has a budget of its own


@pytest.mark.parametrize("kind", ["redis", "cluster"])
async def test_two_workers_on_one_redis_share_one_budget(kind, tmp_path, request):
    """Two services on one Redis namespace, as two workers are: a player's commands, and an address's, count in both
    (each worker counted alone before, so two workers gave twice the limit). On a Redis Cluster too, where a
    command's two buckets sit in different slots and are taken one after the other."""
    if kind == "cluster":
        request.getfixturevalue("redis_cluster")
    config = make_settings(kind, tmp_path, rate_limits=True, proxies_count=1, admin_token=ADMIN, **STILL)
    apps = [fresh_app(config), fresh_app(config)]
    try:
        async with serving(apps[0]) as one, serving(apps[1]) as two:
            for app in apps:
                app.ctx.limiter.clock = lambda: NOW
            alone = [await guest_solitaire(one, "10.22.0.1", "alone")]
            sent, r = await send_round_robin([one, two], alone, "10.22.0.1", DEFAULTS.commands_burst + 1)
            assert sent == DEFAULTS.commands_burst and refused(r, "player", "commands"), (sent, r and r.text)
            crowd = [await guest_solitaire(two, "10.22.0.2", f"sol{n}") for n in range(3)]
            sent, r = await send_round_robin([one, two], crowd, "10.22.0.2", DEFAULTS.address_commands_burst + 1)
            assert sent == DEFAULTS.address_commands_burst and refused(r, "address", "commands"), (sent, r and r.text)
    finally:
        await drop_namespace_at(config.redis_url, config.namespace)


async def test_a_refused_join_takes_no_token_of_the_seats_limit(tmp_path):
    """A join refused for what it asks (here a full table) is no seat taken: a registered player refused more often
    than the burst is still seated at the next free table, and answered 409, never 429, meanwhile."""
    async with limited(tmp_path) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        token = (await api.post("/players", json={"name": "Ann"}, headers=at("10.23.0.1"))).json()["token"]
        full = (await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=ADMIN_HEADERS)).json()["game_id"]
        for _ in range(2):
            assert (await api.post(f"/games/{full}/seats", json={"bot": "random"}, headers=ADMIN_HEADERS)).status_code == 201
        for _ in range(DEFAULTS.seats_burst + 2):
            r = await api.post(f"/games/{full}/seats", json={}, headers=at("10.23.0.1", token))
            assert r.status_code == 409 and r.json()["error"]["code"] == "game_full", r.text
        free = (await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=ADMIN_HEADERS)).json()["game_id"]
        assert (await api.post(f"/games/{free}/seats", json={}, headers=at("10.23.0.1", token))).status_code == 201
