"""Resigning a card game against bots in the browser (docs/rules-free-parking.md, "Resigning"): the "Resign…" button
asks first and "Keep playing" sends nothing; "Yes, resign" puts the seat out, the move log says "Ann resigns", and
the game goes on between the bots (three seats) or ends at once with the one seat left winning (two)."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
# the ``browser`` fixture and page helpers; where test_browser skips (no Chromium), this module skips with it
from tests.web.test_browser import open_page, register, version_after  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def seated_against_bots(live, browser, seats: int):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Ann")
    await page.select_option("#create-form select[name=kind]", "free-parking")
    await page.fill("#create-form input[name=seats]", str(seats))
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#add-bot")
    await page.select_option("#bot", "greedy")
    await page.click("#fill-bots")
    await page.wait_for_selector("#table[data-seat='0'] .hand.own")
    game_id = page.url.rsplit("/", 1)[-1]

    async def view() -> dict:
        return (await live.get(f"/games/{game_id}", headers=bearer(token))).json()

    return page, view


async def resign(page) -> None:
    await page.click("#table #resign")
    await page.wait_for_selector("#resign-confirm")
    assert "cannot be undone" in await page.inner_text("#resign-confirm")
    await page.click("#resign-yes")
    await page.locator("#move-log li", has_text="Ann resigns").wait_for(timeout=20_000)


async def test_resigning_asks_first_and_the_game_goes_on_between_the_bots(live, browser):  # noqa: F811
    page, view = await seated_against_bots(live, browser, 3)
    await page.click("#table #resign")
    await page.wait_for_selector("#resign-confirm")
    await page.click("#resign-no")  # keep playing: nothing is sent
    await page.wait_for_selector("#table #resign")
    assert not (await view())["players"][0]["resigned"]
    await resign(page)
    v = await view()
    assert v["players"][0]["resigned"] and v["players"][0]["forfeited"] and v["legal"] == []
    await page.wait_for_selector("#table .player[data-seat='0'].resigned")
    assert await page.locator("#table #resign").count() == 0  # nothing left to resign
    if v["status"] == "playing":  # the two bots play on, without Ann
        await version_after(page, v["version"])
        later = await view()
        assert later["version"] > v["version"] and later["turn"] != 0


async def test_resigning_with_one_seat_left_ends_the_game_and_the_bot_wins(live, browser):  # noqa: F811
    page, view = await seated_against_bots(live, browser, 2)
    await resign(page)
    v = await view()
    assert v["status"] == "finished" and v["winner"] == 1
    await page.locator("#table .badge.done", has_text="Winner:").wait_for()
    assert not page.errors, page.errors


async def test_resigning_monopoly_against_a_bot_is_bankruptcy_to_the_bank_and_the_bot_wins(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Ann")
    await page.select_option("#create-form select[name=kind]", "monopoly")
    await page.fill("#create-form input[name=seats]", "2")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#add-bot")
    await page.click("#fill-bots")
    await page.wait_for_selector("#table .mono-board")
    game_id = page.url.rsplit("/", 1)[-1]
    await page.click("#table #resign")
    assert "bankruptcy to the bank" in await page.inner_text("#resign-confirm")
    await page.click("#resign-yes")
    await page.locator("#move-log li", has_text="Ann resigns: bankrupt to the bank").wait_for(timeout=20_000)
    v = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()
    assert v["seats"][0]["resigned"] and v["seats"][0]["bankrupt"]
    assert v["status"] == "finished" and v["winner"] == 1 and v["end_reason"] == "last_player"
    await page.wait_for_selector("#table .mono-player .resigned-tag")
    assert not page.errors, page.errors
