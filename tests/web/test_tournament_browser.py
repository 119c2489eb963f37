"""The tournament view (service/web/tournament.js, ``#/tournaments/<id>``) in a real browser: a small Monopoly
tournament over rounds made over HTTP, entered from the page by a registered player (with a seed the page drew and
kept), started, its tables played over HTTP as tests/api/test_rounds.py plays them — the view following it round by
round to the final standings, in the API's order — with its sheet, table and bundle links; its poller stops when the
view is left and once the tournament is over; and at 375 px it fits, its standings scrolling in their own box."""

from __future__ import annotations

import pytest

from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.test_rounds import MONOPOLY, drawn, play_round, register
from tests.web.test_browser import open_page, register as register_on_page

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

WIDTH = "() => document.scrollingElement.scrollWidth"
POLL_MS = 3000  # tournament.js's
FACTS = "ds => ds.map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])"
CARDS = """cs => cs.map(c => ({game: c.dataset.game, mine: c.classList.contains('mine'),
  href: c.querySelector('a.table-link').getAttribute('href'),
  seats: [...c.querySelectorAll('.t-seats li')].map(l => l.textContent)}))"""
ROWS = """rs => rs.map(r => ({player: r.dataset.player, rank: r.querySelector('.rank').textContent,
  name: r.querySelector('.name').firstChild.textContent, points: r.querySelector('.points').textContent,
  rounds: [...r.querySelectorAll('.round-cell b')].map(b => b.textContent)}))"""
SCROLLER = "b => ({scroll: b.scrollWidth, client: b.clientWidth, overflow: getComputedStyle(b).overflowX})"
FROM_LEFT = "c => c.getBoundingClientRect().left - c.closest('.t-scroll').getBoundingClientRect().left"


async def tournament_reads(page, run) -> list[str]:
    """The page's requests to /tournaments/… while ``run()`` runs (and the page answers once after)."""
    seen: list[str] = []

    def note(request) -> None:
        if "/tournaments/" in request.url:
            seen.append(request.url)

    page.on("request", note)
    try:
        await run()
        await page.evaluate("1")  # a round trip: the requests the page made before it have been reported
    finally:
        page.remove_listener("request", note)
    return seen


async def shoot(page, path) -> None:
    """The whole page at its viewport's width: the viewport made as tall as the page first (a full-page capture of a
    page with a scroll bar is cut to the width less the bar, hiding the right edge it is taken to check)."""
    width = page.viewport_size["width"]
    height = await page.evaluate("document.documentElement.scrollHeight")
    await page.set_viewport_size({"width": width, "height": height})
    await page.screenshot(path=path)
    await page.set_viewport_size({"width": width, "height": 900})


@pytest.mark.live_settings(allow_volatile=True)  # a tournament is refused on a store that may lose what it acknowledged
async def test_a_tournament_is_entered_followed_round_by_round_and_ranked_on_the_page(live, browser, tmp_path):
    players = {name: await register(live, name) for name in ("Ann", "Bob")}
    body = {**MONOPOLY, "options": {"max_rounds": 1}, "name": "Club night", "entrants": "open"}  # a lap a table: quick
    r = await live.post("/tournaments", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    t = r.json()
    tid, view = t["tournament_id"], f"#/tournaments/{t['tournament_id']}"
    for name in ("Ann", "Bob"):
        r = await live.post(f"/tournaments/{tid}/entries", json={"client_seed": "ab" * 32},
                            headers=bearer(players[name][1]))
        assert r.status_code == 201, r.text

    page = await open_page(browser, live)
    await page.clock.install()  # timers run as ever; run_for below moves them on at once, without waiting
    cy_token = await register_on_page(page, "Cy")
    cy = (await page.evaluate("JSON.parse(localStorage.getItem('fp.player'))"))["player_id"]
    await page.goto(f"/{view}")
    await page.wait_for_selector("#t-head #t-name:has-text('Club night')")
    head = await page.inner_text("#t-head")
    assert "Monopoly" in head and "Open for entry" in head and "over rounds" in head
    facts = dict(await page.eval_on_selector_all("#t-facts div", FACTS))
    assert facts["Rounds"] == "2" and facts["Table size"] == "2" and facts["Deals"] == "each table its own", facts
    assert await page.get_attribute("#t-commitment", "title") == t["seed_commitment"]
    assert facts["Seed commitment"] == t["seed_commitment"][:12] + "…"
    assert await page.eval_on_selector_all("#t-entrants li", "ls => ls.map(l => l.dataset.player)") == sorted(
        pid for pid, _ in players.values())

    # someone not signed in is told how to enter, and sees no button; their poller stops when they leave the view
    stranger = await open_page(browser, live, width=375)
    await stranger.clock.install()  # before the view's poller sets its first timer: run_for moves every one of them
    await stranger.evaluate(f"location.hash = '{view}'")
    await stranger.wait_for_selector("#t-sign-in")
    assert await stranger.locator("#t-enter").count() == 0
    assert await stranger.evaluate(WIDTH) <= 375 + 2
    await shoot(stranger, tmp_path / "tournament-entry-375.png")
    await stranger.evaluate("location.hash = '#/'")  # the page's own route change, as a link in it makes
    await stranger.wait_for_selector("#create-form")
    assert await tournament_reads(stranger, lambda: stranger.clock.run_for(POLL_MS * 4)) == []

    await page.click("#t-enter")
    await page.wait_for_selector(f"#t-entrants li[data-player='{cy}']:has-text('Cy') .tag:has-text('you')")
    await page.wait_for_selector("#t-entered")
    await shoot(page, tmp_path / "tournament-entry-1280.png")
    entrant = next(e for e in (await live.get(f"/tournaments/{tid}")).json()["entrants"] if e["player_id"] == cy)
    kept = await page.evaluate("id => localStorage.getItem('fp.entry.' + id)", tid)
    assert entrant["seed_from"] == "player" and entrant["client_seed"] == kept and len(kept) == 64
    r = await live.post(f"/tournaments/{tid}/entries", json={}, headers=bearer(cy_token))
    assert r.status_code == 409 and r.json()["error"]["code"] == "already_entered"

    started = (await live.post(f"/tournaments/{tid}/start", headers=ADMIN_HEADERS)).json()
    first = started["drawn"][0]["tables"]
    await page.clock.run_for(POLL_MS)  # the next read now rather than in up to 3 s: only the page's timers move
    await page.wait_for_selector(".t-round[data-round='1'] .t-table")
    await page.wait_for_selector("#t-standings-table tbody tr")
    assert await page.locator("#t-enter").count() == 0
    cards = await page.eval_on_selector_all(".t-round[data-round='1'] .t-table", CARDS)
    assert [c["game"] for c in cards] == [table["game_id"] for table in first]
    for card, table in zip(cards, first, strict=True):
        ours = any(s["player_id"] == cy for s in table["seats"])
        assert card["mine"] == ours and card["href"] == f"#/games/{table['game_id']}" + ("" if ours else "/watch"), card
        assert card["seats"] == [s["name"] + (" bot" if s["bot"] else "") + (" you" if s["player_id"] == cy else "")
                                 for s in table["seats"]], card
    assert sum(" bot" in seat for c in cards for seat in c["seats"]) == 1  # three at tables of two: one bot
    sheet = await page.get_attribute(".t-round[data-round='1'] a.sheet-link", "href")
    assert sheet == f"/tournaments/{tid}/export?format=sheet-html&round=1"
    printed = (await live.get(sheet)).text
    assert "round 1 of 2" in printed and all(name in printed for name in ("Ann", "Bob", "Cy"))
    await shoot(page, tmp_path / "tournament-playing-1280.png")

    await page.click(".t-table.mine a.table-link")  # Cy's own table, at their seat
    mine = next(table["game_id"] for table in first if any(s["player_id"] == cy for s in table["seats"]))
    await page.wait_for_selector(f"#table[data-game='{mine}'][data-seat]:not([data-seat=''])")
    assert "Tournament deal" in await page.inner_text("#seeding[data-seeding=tournament]")  # not an "older deal"
    await page.go_back()
    await page.wait_for_selector(".t-round[data-round='1'] .t-table")

    tokens = {pid: token for pid, token in players.values()} | {cy: cy_token}
    await play_round(live, tokens, first)
    second = (await drawn(live, tid, 2))["drawn"][1]["tables"]
    await page.clock.run_for(POLL_MS)
    await page.wait_for_selector(".t-round[data-round='2'][data-status='playing'] .t-table")
    assert await page.get_attribute(".t-round[data-round='1']", "data-status") == "finished"
    sheet = await page.get_attribute(".t-round[data-round='2'] a.sheet-link", "href")
    assert sheet == f"/tournaments/{tid}/export?format=sheet-html&round=2"
    await play_round(live, tokens, second)
    await page.clock.run_for(POLL_MS)
    await page.wait_for_selector("#tournament[data-status='finished'] #t-standings h3:has-text('Final standings')")
    final = (await live.get(f"/tournaments/{tid}/standings")).json()
    assert final["status"] == "finished"
    rows = await page.eval_on_selector_all("#t-standings-table tbody tr", ROWS)
    expected = [{"player": s["player_id"], "rank": str(s["rank"]), "name": s["name"], "points": f"{s['points']:g}",
                 "rounds": [f"{line['points']:g}" for line in s["rounds"]]} for s in final["standings"]]
    assert rows == expected
    assert sorted(row["name"] for row in rows) == ["Ann", "Bob", "Cy"]
    assert [int(row["rank"]) for row in rows] == sorted(int(row["rank"]) for row in rows)
    assert (await page.inner_text("#t-standings-table thead")).strip() == "#\tPlayer\tpoints\tscore\tR1\tR2"
    bundle = await page.get_attribute("#bundle-link", "href")
    assert bundle == f"/tournaments/{tid}/export?format=ndjson"
    r = await live.get(bundle)  # public now that it is over
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert await tournament_reads(page, lambda: page.clock.run_for(POLL_MS * 4)) == []  # over: the poller has stopped
    await shoot(page, tmp_path / "tournament-finished-1280.png")

    phone = await open_page(browser, live, view, width=375)
    await phone.wait_for_selector("#t-standings h3:has-text('Final standings')")
    assert await phone.evaluate(WIDTH) <= 375 + 2  # the page never scrolls sideways: the standings do, in their box
    box = await phone.eval_on_selector(".t-scroll", SCROLLER)
    assert box["overflow"] == "auto" and box["scroll"] > box["client"], box
    await phone.wait_for_selector("#t-standings-cue:not([hidden]):has-text('swipe the standings left for the rest')")
    await shoot(phone, tmp_path / "tournament-finished-375.png")
    await phone.eval_on_selector(".t-scroll", "b => { b.scrollLeft = b.scrollWidth; }")
    await phone.wait_for_selector("#t-standings-cue:not([hidden]):has-text('swipe the standings right for the rest')")
    sticky = await phone.eval_on_selector("#t-standings-table tbody td.name", FROM_LEFT)
    assert 0 < sticky < 60, sticky  # the names stay in sight beside the rounds scrolled into view
    await shoot(phone, tmp_path / "tournament-finished-375-scrolled.png")
    assert page.errors == [] and stranger.errors == [] and phone.errors == []


async def test_an_unknown_tournament_says_so(live, browser):
    page = await open_page(browser, live, "#/tournaments/t_0000000000000000")
    await page.wait_for_selector("#not-found h2:has-text('No tournament has the id t_0000000000000000')")
    assert page.errors == []


@pytest.mark.live_settings(allow_volatile=True)
async def test_a_tournament_of_the_older_format_shows_its_tables(live, browser, tmp_path):
    body = {"name": "Old cup", "kind": "free-parking", "tables": [{"seats": 2}, {"seats": 3}]}
    r = await live.post("/tournaments", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    t = r.json()
    page = await open_page(browser, live, f"#/tournaments/{t['tournament_id']}", width=375)
    await page.wait_for_selector("#tournament[data-format=tables] #t-older")
    assert await page.inner_text("#t-name") == "Old cup"
    cards = await page.eval_on_selector_all(".t-table", CARDS)
    assert [(c["game"], c["href"]) for c in cards] == [(g, f"#/games/{g}") for g in (x["game_id"] for x in t["tables"])]
    assert await page.locator(".t-table .badge[data-status=waiting]").count() == 2
    assert await page.evaluate(WIDTH) <= 375 + 2
    await shoot(page, tmp_path / "tournament-tables-375.png")
    assert page.errors == []
