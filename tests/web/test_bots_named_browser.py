"""After the end, the page says of the bots at the table that their moves are re-derived from their own seats' views,
and names the command that does it (issue 30: re-deriving stays in Python, docs/fairness.md "Bots that never peek")."""

from __future__ import annotations

import pytest

from tests.api.helpers import wait_for
from tests.web.test_browser import open_page  # noqa: F401  (and the browser fixture's skip)

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def test_a_finished_games_page_names_the_check_of_its_bots(live, browser):  # noqa: F811
    game_id = (await live.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    for bot in ("greedy", "random"):
        assert (await live.post(f"/games/{game_id}/seats", json={"bot": bot})).status_code == 201

    async def finished():
        return (await live.get(f"/games/{game_id}")).json()["status"] == "finished"

    await wait_for(finished, seconds=120)
    page = await open_page(browser, live, f"#/games/{game_id}")
    line = page.locator("#evidence-checks li[data-check=bots][data-result=python]")
    await line.wait_for()
    text = await line.inner_text()
    assert "(seat 0: greedy, seat 1: random) never saw your cards" in text, text
    assert "python -m replays verify LOG re-derives each of their moves from its own seat's view" in text, text
    assert page.errors == []
