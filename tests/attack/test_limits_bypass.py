"""Ways around issue 31's per-address limits, attacked with the service's default limits (an outside review).

The limiter's clock is held still, so no token comes back while a test sends: a test counts budgets, never speed.
"""

from __future__ import annotations

from service.api.settings import Settings
from tests.attack.conftest import inproc, settings
from tests.attack.test_bot_budget import settled

DEFAULTS = Settings()
NOW = 1_800_000_000_000
ADDRESS = {"x-forwarded-for": "10.31.0.1"}


def limited(tmp_path):
    return inproc(settings(tmp_path, rate_limits=True, proxies_count=1))


async def test_games_of_bots_alone_do_not_append_past_the_address_budget(tmp_path):
    """Anonymous, from one address, within the games limit's burst: solitaires, each seated with the greedy bot
    (a bot's seat is not counted). The server played every one to its end, 947 events with no command sent (about
    5,700 a minute). Now each bot's move in a game of bots alone takes a token from the command bucket of the address
    that created the game, so the events those games hold stay within what the address may append by its own
    commands (plus the create and seat events of each game): docs/limits.md's bound. At one token a minute (the default
    burst), so that a drained bucket's key outlives the test in the store under the held clock (test_bot_budget.py)."""
    games = 10
    async with inproc(settings(tmp_path, rate_limits=True, proxies_count=1, address_commands_per_minute=1)) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        ids = []
        for _ in range(games):
            r = await api.post("/games", json={"kind": "solitaire"}, headers=ADDRESS)
            assert r.status_code == 201, r.text
            ids.append(r.json()["game_id"])
            r = await api.post(f"/games/{ids[-1]}/seats", json={"bot": "greedy"}, headers=ADDRESS)
            assert r.status_code == 201, r.text
        total = await settled(api, ids)
        per_game_setup = 6  # created, seated, started, ended, seed revealed, and one more to spare
        assert total <= DEFAULTS.address_commands_burst + games * per_game_setup, total


async def test_a_registration_refused_for_its_public_key_takes_no_token(tmp_path):
    """docs/limits.md: "a body refused (400, 403) takes no token". A key of small order is refused 400 — after
    ``POST /players`` had taken the address's token, so a client (or a NAT's worth of them) whose page sends a bad
    key spent the address's registrations for everyone behind it."""
    small_order = "01" + "00" * 31  # the identity point: every signature checks out under it
    async with limited(tmp_path) as api:
        api.app.ctx.limiter.clock = lambda: NOW
        for _ in range(DEFAULTS.players_burst):
            r = await api.post("/players", json={"name": "Ann", "public_key": small_order}, headers=ADDRESS)
            assert r.status_code == 400, r.text
        r = await api.post("/players", json={"name": "Ann"}, headers=ADDRESS)
        assert r.status_code == 201, r.text
