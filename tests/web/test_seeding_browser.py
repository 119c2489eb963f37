"""How a game's seed is made, on the page (issue 29): the lobby's row of a game and its table, before and after
joining, say "Fair deal" for a game drawn with every player's seed and warn "Fixed deal" for one whose seed the admin
chose; joining a fixed game from the lobby asks first (a refusal joins nothing), and its table gives the warning in
full above "Take a seat". At 375 px the lines fit the screen.

Every wait is on a selector or a condition."""

from __future__ import annotations

import asyncio

import pytest

from tests.api.conftest import ADMIN_HEADERS
from tests.web.test_browser import open_page, register

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

FAIR = "Fair deal: drawn from the server's committed seed and every player's own seed"
FIXED = "Fixed deal: the admin chose this seed — your seed will change nothing"
WIDTH = "() => document.scrollingElement.scrollWidth"


async def two_games(live) -> tuple[str, str]:
    """A drawn card game and one on a seed the admin fixed, both waiting for players."""
    drawn = (await live.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2, "seed": "5e" * 32}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return drawn, r.json()["game_id"]


@pytest.mark.parametrize("width", [1280, 375])
async def test_the_lobby_and_the_table_say_fair_or_fixed_and_a_fixed_join_asks_first(live, browser, width):
    drawn, fixed = await two_games(live)
    page = await open_page(browser, live, width=width)
    await register(page, "Newcomer")
    # the lobby: each row says how its deal is made, the fixed one as a warning beside its Join
    fair_tag = page.locator(f"#games tr[data-game='{drawn}'] .deal")
    fixed_tag = page.locator(f"#games tr[data-game='{fixed}'] .deal")
    await fixed_tag.wait_for()
    assert (await fair_tag.inner_text(), await fair_tag.get_attribute("class")) == ("Fair deal · drawn with every player's own seed", "deal fair")
    assert (await fixed_tag.inner_text(), await fixed_tag.get_attribute("class")) == ("Fixed deal · the admin chose it — your seed changes nothing", "deal fixed")
    assert await fixed_tag.get_attribute("title") == FIXED
    assert await page.evaluate(WIDTH) <= width + 2
    # joining the fixed game asks first: refused, nothing is joined; accepted, the seat is taken
    asked: list[str] = []
    answered = asyncio.Event()

    async def answer(dialog, accept: bool) -> None:
        asked.append(dialog.message)
        await (dialog.accept() if accept else dialog.dismiss())
        answered.set()

    page.once("dialog", lambda d: answer(d, False))
    await page.click(f"#games tr[data-game='{fixed}'] button.join")
    await answered.wait()  # the listener runs as a task of its own: the click may return before it has
    answered.clear()
    assert asked == [f"{FIXED}.\n\nJoin anyway?"]
    assert (await live.get(f"/games/{fixed}")).json()["players"][0]["name"] is None
    assert page.url.endswith("#/")
    page.once("dialog", lambda d: answer(d, True))
    await page.click(f"#games tr[data-game='{fixed}'] button.join")
    await answered.wait()
    await page.wait_for_url(f"**#/games/{fixed}")
    # the table, once joined, keeps the warning
    line = page.locator("#seeding.fixed")
    await line.wait_for()
    assert await line.inner_text() == FIXED and len(asked) == 2
    await page.wait_for_function("() => document.querySelector('#table')?.dataset.seat === '0'")
    assert await page.evaluate(WIDTH) <= width + 2
    # a drawn game's table says so before joining, joins without a question, and says so after
    await page.goto(f"/#/games/{drawn}")
    fair = page.locator("#seeding.fair")
    await fair.wait_for()
    assert await fair.inner_text() == FAIR
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")
    await page.wait_for_function("() => document.querySelector('#table')?.dataset.seat === '0'")
    assert await page.inner_text("#seeding.fair") == FAIR and len(asked) == 2
    # a fixed game's table warns before joining too, above its "Take a seat"
    _, other = await two_games(live)
    await page.goto(f"/#/games/{other}")
    await page.locator("#join").wait_for()
    assert await page.inner_text("#seeding.fixed") == FIXED
    assert await page.evaluate(WIDTH) <= width + 2
    assert page.errors == []
