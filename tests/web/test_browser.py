"""The web page (service/web/) in a real browser: Playwright driving Debian's Chromium against the ``live``
service process (embedded store only: the page uses the public API, whose stores tests/api covers).

Never downloads a browser: ``/usr/bin/chromium`` is Debian's package (``make test`` and ``.ci/run`` install it
where missing). Without it the tests skip, except under CI (``FREE_PARKING_CI``), where they must run.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from service.web.screenshots import CHROMIUM  # Debian's Chromium, for the screenshots and the tests (conftest.py)
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import find_seed, holds

if not Path(CHROMIUM).exists() and not os.environ.get("FREE_PARKING_CI"):
    pytest.skip(
        "no /usr/bin/chromium (apt-get install chromium; `make test` installs it)",
        allow_module_level=True,
    )

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


NO_OWN_KEY = """
(() => {
  const generateKey = SubtleCrypto.prototype.generateKey;
  SubtleCrypto.prototype.generateKey = function (algorithm, ...rest) {
    const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
    if (String(name).toLowerCase() === "ed25519") {
      return Promise.reject(new DOMException("Algorithm: Unrecognized name", "NotSupportedError"));
    }
    return generateKey.call(this, algorithm, ...rest);
  };
})();
"""
"""A page that cannot make a key of its own: it plays unkeyed (signing.js), as on a browser without Ed25519."""


async def open_page(browser, live, hash_: str = "#/", *, width: int = 1280, keyed: bool = True):
    """A page of the service; ``keyed=False``: one that cannot make a key of its own, so plays unkeyed — for a test
    whose own API client moves in the page's seat too (a keyed seat's moves are the page's key's to sign)."""
    context = await browser.new_context(base_url=str(live.base_url), viewport={"width": width, "height": 900})
    if not keyed:
        await context.add_init_script(NO_OWN_KEY)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    await page.goto(f"/{hash_}")
    return page


async def register(page, name: str) -> str:
    """Register in the lobby's form; the player's token, as the page keeps it."""
    await page.goto("/#/")
    await page.fill("#register input[name=name]", name)
    await page.click("#register button[type=submit]")
    await page.wait_for_selector("#who-name")
    return await page.evaluate("JSON.parse(localStorage.getItem('fp.player')).token")


async def version_after(page, old: int) -> int:
    """The table's version once it has moved past ``old``."""
    handle = await page.wait_for_function(
        "old => { const t = document.querySelector('#table'); return t && Number(t.dataset.version) > old && Number(t.dataset.version); }",
        arg=old,
    )
    return await handle.json_value()


RECORD_DRAWS = """() => {
  window.drawnVersions = [];
  const note = () => { const t = document.querySelector('#table'); if (t) window.drawnVersions.push(Number(t.dataset.version)); };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-version']});
}"""


async def record_draws(page) -> None:
    """From now on, note every version the table is drawn at: a draw that the next refresh replaces within one frame
    (an older answer drawn, then the newest polled again) is still seen, where ``wait_for_selector`` can miss it."""
    await page.evaluate(RECORD_DRAWS)


async def drawn(page, version: int) -> None:
    """Wait until the table has been drawn at ``version`` since ``record_draws``, however briefly."""
    await page.wait_for_function("v => window.drawnVersions.includes(v)", arg=version)


async def grid(page) -> list[list[str | None]]:
    cards = await page.eval_on_selector_all(
        "#table .grid .row",
        """rows => rows.map(r =>
        [...r.querySelectorAll('.cell')].map(c => c.dataset.card || null))""",
    )
    return cards


async def test_solitaire_moves_hint_and_undo(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Sol")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    game_id = page.url.rsplit("/", 1)[-1]

    async def api_view() -> dict:
        r = await live.get(f"/games/{game_id}", headers=bearer(token))
        assert r.status_code == 200, r.text
        return r.json()

    v = await api_view()
    assert v["seat"] == 0 and v["status"] == "playing"
    assert await grid(page) == v["layout"]
    history = [v["layout"]]
    version = v["version"]
    for _ in range(3):
        await page.click(
            "button.cmd[data-type=hint]"
        )  # lights the hint's card and gap, and selects the card
        hint = (await api_view())["hint"]
        assert hint and hint["type"] == "move", hint
        assert await page.get_attribute(".cell.hint.card", "data-card") == hint["card"]
        gap = f'.cell.gap.hint[data-row="{hint["to"]["row"]}"][data-slot="{hint["to"]["slot"]}"]'
        assert await page.locator(gap).count() == 1
        await page.click(
            f'.cell.target[data-row="{hint["to"]["row"]}"][data-slot="{hint["to"]["slot"]}"]'
        )
        version = await version_after(page, version)
        v = await api_view()
        assert v["version"] == version
        shown = await grid(page)
        assert shown == v["layout"] and shown != history[-1]
        history.append(shown)
    # a move of our own choosing: click a movable card that is not the hint's, then its gap
    legal = [c for c in v["legal"] if c["type"] == "move"]
    move = legal[-1]
    await page.click(f'.cell.card[data-card="{move["card"]}"]')
    assert await page.get_attribute(".cell.selected", "data-card") == move["card"]
    await page.click(
        f'.cell.target[data-row="{move["to"]["row"]}"][data-slot="{move["to"]["slot"]}"]'
    )
    version = await version_after(page, version)
    history.append(await grid(page))
    assert history[-1] == (await api_view())["layout"] != history[-2]
    # undo twice: each restores the layout before the move
    for back in (-2, -3):
        await page.click("button.cmd[data-type=undo]")
        version = await version_after(page, version)
        shown = await grid(page)
        assert shown == history[back] == (await api_view())["layout"]
    assert page.errors == []


async def test_card_game_turns_and_talk_your_way_out(live, browser):
    # seat 1 plays first holding a Feed the Meter, a Point card and a Time Expires; seat 0 a Feed the Meter and
    # a Talk Your Way Out of It
    seed = find_seed(
        lambda s: holds("M", "P", "TE-")(s) and holds("M", "TW-", seat=0)(s)
    )
    r = await live.post(
        "/games",
        json={"kind": "free-parking", "seats": 2, "seed": seed, "options": {}},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    ann, bob = await open_page(browser, live), await open_page(browser, live)
    tokens = {}
    for page, name in ((ann, "Ann"), (bob, "Bob")):  # Ann takes seat 0, Bob seat 1
        tokens[name] = await register(page, name)
        await page.goto(f"/#/games/{game_id}")
        async with page.expect_navigation():  # the page reloads once seated: wait for it
            await page.click("#join")
        await page.wait_for_selector(f"#table[data-seat='{0 if name == 'Ann' else 1}']")

    async def click(page, type_: str, text: str | None = None):
        button = page.locator(f"#table button.cmd[data-type={type_}]")
        if text:
            button = button.filter(has_text=text)
        old = int(await page.get_attribute("#table", "data-version"))
        await button.first.click()
        await version_after(page, old)

    async def api_view(name: str) -> dict:
        r = await live.get(f"/games/{game_id}", headers=bearer(tokens[name]))
        return r.json()

    for page, name in (
        (bob, "Bob"),
        (ann, "Ann"),
    ):  # each feeds the meter and ends the turn
        await page.wait_for_selector(
            "#table section.legal button.cmd[data-type=end_turn], #table section.legal button.cmd[data-type=feed_meter]"
        )
        await click(page, "feed_meter")
        await click(page, "end_turn")
        v = await api_view(name)
        me = v["players"][v["seat"]]
        assert (
            int(
                await page.get_attribute(
                    f"#table .player[data-seat='{v['seat']}']", "data-meter"
                )
            )
            == me["meter"]
            > 0
        )
    # Bob plays Time Expires on Ann
    await bob.wait_for_selector("#table button.cmd[data-type=time_expires]")
    await click(bob, "time_expires", "on Ann")
    # Ann's page prompts her to answer; Bob's says he waits for her
    prompt = ann.locator("#table section.prompt[data-pending=respond]")
    await prompt.wait_for()
    assert "Time Expires" in await prompt.inner_text()
    assert await prompt.locator("button.cmd[data-type=accept]").count() == 1
    await bob.locator("#table section.prompt.waiting").wait_for()
    # a spectator (no token) sees the wait too, but no hand and no buttons
    watcher = await open_page(browser, live, f"#/games/{game_id}/watch")
    await watcher.locator("#table section.prompt.waiting").wait_for()
    assert await watcher.locator("#table .hand.own, #table button.cmd").count() == 0
    assert "Spectating" in await watcher.inner_text("#table")
    v = await api_view("Ann")
    assert v["pending"]["seat"] == 0 and v["pending"]["kind"] == "respond"
    hand = [c["id"] for c in v["you"]["hand"]]
    assert (
        await ann.eval_on_selector_all(
            "#table .hand.own .card", "cs => cs.map(c => c.dataset.card)"
        )
        == hand
    )
    # she talks her way out of it
    await click(ann, "talk_out")
    await prompt.wait_for(state="detached")
    v = await api_view("Ann")
    assert v["pending"] is None
    r = await live.get(f"/games/{game_id}/events", params={"after": v["version"] - 3})
    assert "talked_out" in [e["type"] for e in r.json()["events"]]
    await bob.locator("#table section.prompt").wait_for(
        state="detached"
    )  # Bob's page follows by polling
    assert ann.errors == [] and bob.errors == []


async def test_replay_slider_matches_the_api(live, browser):
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2})
    game_id = r.json()["game_id"]
    for _ in range(2):
        assert (
            await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})
        ).status_code == 201
    deadline = time.monotonic() + 20
    while (v := (await live.get(f"/games/{game_id}")).json())["status"] != "finished":
        assert time.monotonic() < deadline, "the bots did not finish"
        await asyncio.sleep(0.2)
    version = v["version"]
    audit = {
        int(line.split()[0]): line
        for line in (await live.get(f"/games/{game_id}/audit")).text.splitlines()
        if line
    }

    page = await open_page(browser, live, f"#/replay/{game_id}")
    await page.wait_for_selector(f"#replay-table[data-at='{version}']")

    async def check(at: int) -> None:
        await page.wait_for_selector(f"#replay-table[data-at='{at}']")
        answer = (await live.get(f"/games/{game_id}/replay", params={"at": at})).json()
        view = answer["view"]
        shown = await page.eval_on_selector_all(
            "#replay-table .player",
            """ps => ps.map(p => ({
            seat: Number(p.dataset.seat), meter: Number(p.dataset.meter), points: Number(p.dataset.points),
            hand_size: Number(p.dataset.handSize)}))""",
        )
        assert shown == [
            {k: p[k] for k in ("seat", "meter", "points", "hand_size")}
            for p in view["players"]
        ], at
        assert await page.get_attribute("#replay-table", "data-version") == str(
            view["version"]
        )
        line = (answer.get("event") or {}).get("line") or audit.get(at)
        assert (await page.inner_text("#audit-line")) == (
            line if at else "(before the first event)"
        )
        assert await page.inner_text("#seq-label") == f"event {at} of {version}"

    for at in (5, version // 2, 1, version - 1, 0):
        await page.eval_on_selector(
            "#seq",
            "(el, at) => { el.value = at; el.dispatchEvent(new Event('input')); }",
            at,
        )
        await check(at)
    await page.click("#next")
    await check(1)
    await page.focus("#seq")
    await page.keyboard.press("ArrowRight")  # the slider itself, from the keyboard
    await check(2)
    assert page.errors == []
