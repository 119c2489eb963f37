"""The header's "your turn" badge (service/web/yourturn.js): the signed-in player's own stream (GET
/players/me/stream) says where a move of theirs is awaited, and the page links every such table but the one open."""

from __future__ import annotations

import pytest

from tests.web.test_browser import open_page, register  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def test_the_badge_links_the_tables_that_wait_on_the_player(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Tess")
    games = []
    for _ in range(2):
        game_id = (await live.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
        assert (await live.post(f"/games/{game_id}/seats", json={}, headers={"authorization": f"Bearer {token}"})).status_code == 201
        assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
        games.append(game_id)
    for game_id in games:
        await page.wait_for_selector(f"#your-turn a[data-game='{game_id}']", timeout=60_000)
    assert (await page.text_content("#your-turn")).startswith("Your turn: ")

    await page.goto(f"/#/games/{games[0]}")  # at one table: the badge names the other only
    await page.wait_for_selector(f"#your-turn a[data-game='{games[0]}']", state="detached")
    assert await page.is_visible(f"#your-turn a[data-game='{games[1]}']")
    await page.click(f"#your-turn a[data-game='{games[1]}']")
    await page.wait_for_function(f"location.hash === '#/games/{games[1]}'")
    await page.wait_for_selector(f"#your-turn a[data-game='{games[0]}']")
    assert not page.errors
