"""A bot account on the page (issue 33): marked as a bot in the lobby's list of who sits where, at the card game's and
Monopoly's tables, and in the game-over box's standings with their ratings; a person beside it is not."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
from tests.api.test_bot_accounts import play_out
from tests.web.test_browser import open_page  # noqa: F401  (and the browser fixture's skip)

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def bot_account(live, name: str) -> dict:
    r = await live.post("/players", json={"name": name, "account": "bot"})
    assert r.status_code == 201, r.text
    return r.json()


async def game_with(live, kind: str, seats: int, robo: dict, *others: dict) -> str:
    """A ``kind`` game with the bot account in seat 0, then each of ``others`` (a guest's name or a server bot)."""
    game_id = (await live.post("/games", json={"kind": kind, "seats": seats})).json()["game_id"]
    assert (await live.post(f"/games/{game_id}/seats", json={}, headers=bearer(robo["token"]))).status_code == 201
    for body in others:
        assert (await live.post(f"/games/{game_id}/seats", json=body)).status_code == 201
    return game_id


async def test_the_lobby_and_the_tables_mark_a_bot_account(live, browser):  # noqa: F811
    robo = await bot_account(live, "Robo Lobby")
    game_id = await game_with(live, "free-parking", 3, robo, {"name": "Bob"})
    page = await open_page(browser, live)
    row = page.locator(f"#games [data-status=waiting] tr[data-game='{game_id}']")
    await row.locator(".at-table").wait_for()
    assert await row.locator(".at-table").inner_text() == "Robo Lobby (bot), Bob"

    assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    await page.goto(f"/#/games/{game_id}/watch")
    await page.locator("section.player[data-seat='0'] .bot-account").wait_for()
    assert await page.locator("section.player[data-seat='0'] h3 .tag").all_inner_texts() == ["bot"]
    assert await page.locator("section.player[data-seat='1'] h3 .tag").count() == 0  # Bob: a person
    assert await page.locator("section.player[data-seat='2'] h3 .tag").all_inner_texts() == ["bot: greedy"]

    mono = await game_with(live, "monopoly", 2, await bot_account(live, "Robo Mono"), {"bot": "strategic"})
    await page.goto(f"/#/games/{mono}/watch")
    await page.locator("[data-seat='0'] h3 .bot-account").wait_for()
    assert await page.locator("[data-seat='1'] h3 .tag").first.inner_text() == "bot: strategic"
    assert page.errors == []


async def test_the_standings_mark_a_bot_account_beside_its_rating(live, browser):  # noqa: F811
    robo = await bot_account(live, "Robo Rated")
    game_id = await game_with(live, "free-parking", 2, robo, {"bot": "greedy"})
    await play_out(live, game_id, [robo["token"]])
    page = await open_page(browser, live, f"#/games/{game_id}/watch")
    await page.locator("#result").wait_for()
    row = page.locator("#standings tbody tr", has_text="Robo Rated")  # its seat, after any Trade Places
    await row.locator(".bot-account").wait_for()
    assert await page.locator("#standings tbody tr", has_text="Greedy").locator(".bot-account").count() == 0
    await page.wait_for_selector("#result[data-ratings=shown]")  # the ratings read model reached the game's end
    assert "→" in await row.locator("td.rating").inner_text()
    assert page.errors == []
