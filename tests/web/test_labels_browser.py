"""No two buttons of a view read the same: the tables' own label code (free-parking.js and monopoly.js `buttonLabels`,
what their buttons say) run in a real browser on the views of 60 seeded bot games (1,000 in make soak) of each kind whose buttons are
built from commands. (The solitaire's buttons are its grid's cells, named by row and slot, and a fixed set of controls.)

The views are made in Python from the rules and the sim's bots (tests/web/seeded_views.py) and handed to one page in a
few large batches: a look-alike pair that one game in a hundred deals (Free Parking with either of two Point 30 cards)
is met here, where a test that clicks through one game would not meet it."""

from __future__ import annotations

import json

import pytest

from tests.depth import count
from tests.web.seeded_views import board, seeded_views
from tests.web.test_browser import open_page

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

GAMES = count("FREE_PARKING_LABEL_GAMES", 60, 1000)
"""60 games make 7,999 distinct card-game views and 13,316 of Monopoly. The old labels' Free Parking with either of
two Point 30 cards came up in 822 of 200 games' card-game views; 200 games cost three minutes of a loaded CI's CPU."""
BATCH = 4000

ALIKE = """async ([text, board]) => {
  const views = JSON.parse(text);  // one string: Playwright hands a large structure over value by value
  const tables = { "free-parking": await import("/web/tables/free-parking.js"), monopoly: await import("/web/tables/monopoly.js") };
  const out = [];
  for (const v of views) {
    const view = v.kind === "monopoly"
      ? { ...v, board: board.map((sq, q) => ({ ...sq, owner: v.board[q][0], level: v.board[q][1] })) } : v;
    const labels = tables[v.kind].buttonLabels(view);
    const twice = labels.filter((t, i) => labels.indexOf(t) !== i);
    if (twice.length) out.push({ twice, labels, legal: v.legal });
  }
  return out;
}"""


@pytest.mark.parametrize("kind", ["free-parking", "monopoly"])
async def test_no_two_buttons_of_a_view_read_the_same(live, browser, kind):
    views = seeded_views(kind, GAMES)
    assert len(views) > 1000  # the games met many distinct choices
    squares = board()
    page = await open_page(browser, live)
    alike = []
    for start in range(0, len(views), BATCH):
        alike += await page.evaluate(ALIKE, [json.dumps(views[start:start + BATCH]), squares])
    assert alike == [], f"{len(alike)} views with look-alike buttons, the first: {alike[0]}"
    assert page.errors == []
