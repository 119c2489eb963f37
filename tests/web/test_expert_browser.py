"""One person against three expert bots in the browser: the lobby seats them, and the table never waits on a bot —
every wait a bot owes is answered by the bot itself, and the game comes back to the person each time."""

from __future__ import annotations

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.api.conftest import ADMIN_HEADERS, bearer
# the ``browser`` fixture and page helpers; where test_browser skips (no Chromium), this module skips with it
from tests.web.test_browser import open_page, register, version_after  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

PREFERRED = ("run_errand", "free_parking", "feed_meter", "accept", "choose", "end_turn", "discard")
ANN_MOVES = 12


async def test_a_person_plays_three_experts_and_the_table_never_waits_on_a_bot(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Ann")
    await page.select_option("#create-form select[name=kind]", "free-parking")
    await page.fill("#create-form input[name=seats]", "4")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#add-bot")
    assert "expert" in await page.eval_on_selector_all("#bot option", "os => os.map(o => o.value)")
    await page.select_option("#bot", "expert")
    await page.click("#fill-bots")
    game_id = page.url.rsplit("/", 1)[-1]
    await page.wait_for_selector("#table[data-seat='0'] .hand.own")

    async def mine() -> dict:
        """Ann's view once she has a move to make (her turn, or an answer owed), or the game is over: the bots
        must bring it back to her by themselves — this waits on the page, not on a clock."""
        await page.wait_for_function(
            "() => document.querySelector('#table section.legal button.cmd, #table section.prompt button.cmd')"
            " || document.querySelector('#result')", timeout=60_000)
        return (await live.get(f"/games/{game_id}", headers=bearer(token))).json()

    moves = 0
    while moves < ANN_MOVES:
        v = await mine()
        if v["status"] == "finished":
            break
        owed = v["pending"] is not None and v["pending"]["seat"] == v["seat"]
        if not owed and v["turn"] != v["seat"]:  # an out-of-turn Officer Jones is offered: let it pass
            old = v["version"]
            await version_after(page, old)
            continue
        types = {c["type"] for c in v["legal"]}
        kind = next((t for t in PREFERRED if t in types), sorted(types)[0])
        button = page.locator(f"#table button.cmd[data-type={kind}]").first
        try:
            await button.click(timeout=10_000)
        except PlaywrightTimeout:  # the table moved on since it was read (an expert struck out of turn): read it again
            continue
        await version_after(page, v["version"])
        moves += 1
    log = (await live.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["events"]
    seats = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()["players"]
    assert sorted(p["bot"] or "" for p in seats) == ["", "expert", "expert", "expert"]
    bot_moves = [e for e in log if (e.get("command_id") or "").startswith("bot:")]
    assert len(bot_moves) >= ANN_MOVES // 2, "the experts did not play"
    timed_out = [e for e in log if e.get("command_id", "").startswith("timeout:")]
    waits_on = {e["seq"]: e["public"].get("seat") for e in log if e["type"] in ("response_awaited", "choice_awaited")}
    assert not [e for e in timed_out if waits_on.get(e["seq"] - 1) != 0], "a bot's wait was left to its deadline"
    assert page.errors == []
