"""Ratings on the page (RULES.md §4): the game-over box shows each rated seat's rating before and after the game, as
GET /games/{id}/ratings says, and the lobby the player's rating per kind, as GET /players/{id} says."""

from __future__ import annotations

import pytest

from tests.api.test_ratings import _play_out
from tests.web.test_browser import open_page, register  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def test_the_game_over_box_shows_the_rating_change_and_the_lobby_the_rating(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Eve")
    player_id = await page.evaluate("JSON.parse(localStorage.getItem('fp.player')).player_id")
    game_id = (await live.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    assert (await live.post(f"/games/{game_id}/seats", json={}, headers={"authorization": f"Bearer {token}"})).status_code == 201
    assert (await live.post(f"/games/{game_id}/seats", json={"bot": "expert"})).status_code == 201
    await _play_out(live, game_id, [token])

    await page.goto(f"/#/games/{game_id}/watch")
    await page.wait_for_selector("#result[data-ratings=shown]", timeout=60_000)
    changes = (await live.get(f"/games/{game_id}/ratings")).json()["changes"]
    assert len(changes) == 2
    for c in changes:
        cell = (await page.text_content(f"#result td.rating[data-seat='{c['seat']}']")).strip()
        assert cell == f"{c['before']:.1f} → {c['after']:.1f}"
    assert {c["player_id"] for c in changes} == {player_id, "bot:expert"}

    rating = (await live.get(f"/players/{player_id}")).json()["ratings"]["free-parking"]
    await page.goto("/#/")
    line = await page.wait_for_selector("#my-rating .rating[data-kind='free-parking']")
    assert f"{rating['rating']:.1f}" in await line.text_content() and "(1 rated game)" in await line.text_content()
    assert not page.errors
