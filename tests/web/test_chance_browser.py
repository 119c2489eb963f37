"""A person takes an out-of-turn chance a bot opened, in a real browser (issue 31): the greedy bot's first play is a
Free Parking errand at Violation (an admin-fixed seed, ``tests/api/chance_seeds.py``), Ann's page offers Officer Jones
on it, she clicks it, and the move log says she played it. The bots hold back for the chance (``human_chance_ms``),
so the button is there to click however slow the page; a bot that did not would end the bot's turn and, on the next
draw, could close it."""

from __future__ import annotations

import pytest

from tests.api.chance_seeds import officer_jones_seed
from tests.api.conftest import ADMIN_HEADERS
from tests.web.test_browser import open_page, register, version_after

pytestmark = [
    pytest.mark.parametrize("live_kind", ["embedded"]),
    pytest.mark.live_settings(human_chance_ms=600_000),  # ten minutes: the test never waits for the window to end
]


async def test_the_person_clicks_officer_jones_the_bot_opened_and_the_log_shows_it(live, browser):
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2, "seed": officer_jones_seed().hex()},
                        headers=ADMIN_HEADERS)  # fmt: skip
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    page = await open_page(browser, live)
    await register(page, "Ann")
    await page.goto(f"/#/games/{game_id}")
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")
    await page.wait_for_selector("#table[data-seat='0']")
    assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201  # seat 1 plays first

    jones = page.locator("#table button.cmd[data-type=officer_jones]")
    await jones.first.wait_for()  # the bot's Free Parking play opened it: Ann's turn it is not
    assert (await live.get(f"/games/{game_id}")).json()["turn"] == 1
    old = int(await page.get_attribute("#table", "data-version"))
    await jones.first.click()
    await version_after(page, old)

    played = page.locator("#move-log li", has_text="Ann plays Officer Jones on")
    await played.wait_for()
    assert "out of turn" in await played.inner_text()
    events = (await live.get(f"/games/{game_id}/events")).json()["events"]
    assert [e["actor"] for e in events if e["type"] == "officer_jones_played"] == ["seat:0"]
    assert page.errors == []
