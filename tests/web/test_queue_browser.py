""""Play now" in the lobby (docs/queue.md): a button per kind queues the player, the waiting state can be cancelled,
and once the queue seats the player the page goes straight to the table — with the seat keyed by the page's own key
and the client seed it sent kept with the game's evidence."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
from tests.web.test_browser import open_page, register  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def test_play_now_waits_can_be_cancelled_and_goes_to_the_table(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    token = await register(page, "Quincy")
    await page.click("button.play-now[data-kind=monopoly]")
    await page.wait_for_selector("#queue-wait:not([hidden]) #queue-status:has-text('Looking for players')")
    status = (await live.get("/queue", headers=bearer(token))).json()
    assert status["state"] == "waiting" and status["kind"] == "monopoly"
    await page.click("#queue-cancel")
    await page.wait_for_selector("#play-now-kinds:not([hidden])")
    assert (await live.get("/queue", headers=bearer(token))).json() == {"state": "none"}

    await page.click("button.play-now[data-kind=free-parking]")
    await page.wait_for_selector("#queue-wait:not([hidden])")
    others = [(await live.post("/players", json={"name": f"Rival {n}"})).json()["token"] for n in range(3)]
    for other in others:  # four unrated players of one kind: a table at once, no bots
        assert (await live.post("/queue", json={"kind": "free-parking"}, headers=bearer(other))).status_code == 202
    await page.wait_for_function("location.hash.startsWith('#/games/')", timeout=30_000)
    game_id = (await page.evaluate("location.hash")).split("/")[2]
    seated = (await live.get("/queue", headers=bearer(token))).json()
    assert seated["state"] == "seated" and seated["game_id"] == game_id
    await page.wait_for_selector("#table")
    events = (await live.get(f"/games/{game_id}/events", headers=bearer(token))).json()["events"]
    mine = next(e["public"] for e in events if e["type"] == "seat_taken" and e["public"]["player"]["name"] == "Quincy")
    assert mine["seat"] == seated["seat"] and mine["client_seed_from"] == "player"
    kept = await page.evaluate("id => JSON.parse(localStorage.getItem('fp.evidence.' + id) || 'null')", game_id)
    key = mine["player"].get("public_key")
    assert key, "the page's own key keys the seat"
    assert await page.evaluate("localStorage.getItem('fp.queue')") is None
    assert kept and kept["client_seed"] == mine["client_seed"] and kept["seat"] == mine["seat"]
    assert not page.errors
