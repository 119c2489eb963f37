"""The page around the tables (issue 16) in a real browser: solitaire's clock, statistics, stuck state and deals; the
finished game's result; signing out and back in; the outage banner; phones (375 px); keyboard focus; the title.

Every wait is on a condition (a selector, a text, a version), except where a test shows that something does *not*
happen (polling stopped), which can only be watched for a while.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.api.conftest import bearer
from tests.web.test_browser import open_page, register, version_after  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

GOLDEN = Path(__file__).resolve().parents[2] / "replays" / "golden" / "golden-sol-v2-greedy-stuck-4.ndjson"


def stuck_line() -> tuple[str, list[dict]]:
    """A seed whose greedy play gets stuck (the golden log of rules version 2), and the player's commands up to
    the stuck board (its last, the resignation, left out)."""
    lines = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line]
    commands = [e["command"] for e in lines[1:] if e.get("command") and e["command"]["type"] in ("move", "redeal")]
    return lines[0]["seed"], commands


async def duplicate_ids(page) -> list[str]:
    """The ids the page holds more than once (ids must be unique: a selector or a label finds the first only)."""
    return await page.evaluate(
        "() => { const ids = [...document.querySelectorAll('[id]')].map(e => e.id);"
        " return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))]; }"
    )


async def wait_until(check, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while not (result := await check()):
        assert time.monotonic() < deadline, "the condition did not come true"
        await asyncio.sleep(0.1)
    return result


async def play_to_stuck(live, token: str) -> tuple[str, dict]:
    """A chosen-seed solitaire of the token's player, played over the API to its stuck board."""
    seed, commands = stuck_line()
    game_id = (await live.post("/games", json={"kind": "solitaire", "seed": seed})).json()["game_id"]
    assert (await live.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    deal = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()["layout"]
    version = None
    for c in commands:
        r = await live.post(f"/games/{game_id}/commands", json=c, headers=bearer(token))
        assert r.status_code == 200, r.text
        version = r.json()["version"]
    v = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()
    assert v["stuck"] and v["version"] == version and v["status"] == "playing", v
    return game_id, {"deal": deal, "view": v}


async def test_solitaire_clock_stats_stuck_undo_resign_and_the_same_deal_again(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Sol")
    game_id, got = await play_to_stuck(live, token)
    await page.goto(f"/#/games/{game_id}")
    # stuck: a box that says so, with undo and resign; the hint says why it has nothing
    stuck = page.locator("#stuck")
    await stuck.wait_for()
    assert "not lost" in await stuck.inner_text()
    await page.click("button.cmd[data-type=hint]")
    assert "no redeal" in (await page.inner_text("#hint-text")).lower()
    # the clock runs from the first move (the scores' first_move_at), and ticks
    await page.wait_for_function("() => document.querySelector('#sol-timer').dataset.clockFrom")
    first = await page.inner_text("#sol-timer")
    await page.wait_for_function("t => document.querySelector('#sol-timer').textContent !== t", arg=first)
    # the player's statistics: this game counts as played (a chosen seed's bucket is apart: the dealt one shows 0)
    await page.locator("#sol-stats #stat-played").wait_for()
    assert await page.inner_text("#sol-stats h3") == "Your statistics"
    stats = (await live.get(f"/players/{got['view']['player_id']}/stats")).json()["solitaire"]
    assert await page.inner_text("#stat-played") == str(stats["dealt"]["started"])
    # rows are labelled as rows, the run apart
    assert (await page.inner_text(".grid .row[data-row='2'] .row-name")) == "Row 3"
    # undo out of stuck
    version = int(await page.get_attribute("#table", "data-version"))
    await page.click("#stuck-undo")
    version = await version_after(page, version)
    await stuck.wait_for(state="detached")
    assert await page.get_attribute("#table", "data-stuck") == ""
    v = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()
    assert not v["stuck"] and any(c["type"] == "move" for c in v["legal"])
    # resign asks first; "keep playing" sends nothing
    await page.click("button.cmd[data-type=resign]")
    await page.locator("#confirm").wait_for()
    await page.click("#confirm-no")
    await page.locator("#confirm").wait_for(state="detached")
    assert (await live.get(f"/games/{game_id}", headers=bearer(token))).json()["version"] == version
    await page.click("button.cmd[data-type=resign]")
    await page.click("#confirm-yes")
    end = page.locator("#sol-end")
    await end.wait_for()
    assert "Resigned" in await end.inner_text()
    # the time stops: the scores' time_ms, shown on the end screen and in the head
    await page.wait_for_function("() => /\\d+:\\d\\d/.test(document.querySelector('#sol-end-time').textContent)")
    scores = (await live.get(f"/games/{game_id}/scores")).json()["scores"]
    minutes, seconds = divmod(scores["solitaire"]["time_ms"] // 1000, 60)
    assert await page.inner_text("#sol-end-time") == f"{minutes}:{seconds:02d}"
    assert await page.get_attribute("#sol-timer", "data-stopped") == "1"
    # the app's result panel: the outcome and the way back
    assert "lost" in await page.inner_text("#result h2")
    assert await page.get_attribute("#to-lobby", "href") == "#/"
    # play this deal again: a new game on the same seed, the same deal
    await page.click("#deal-again")
    await page.wait_for_function("old => !location.hash.endsWith(old)", arg=game_id)
    await page.wait_for_selector("#table .grid .cell")
    again = page.url.rsplit("/", 1)[-1]
    v = (await live.get(f"/games/{again}", headers=bearer(token))).json()
    assert v["seed_chosen"] and v["layout"] == got["deal"] and v["seat"] == 0
    assert page.errors == []


def winning_line() -> tuple[str, list[dict]]:
    """A seed the solver bot wins, and its commands (the last one, a move, wins it)."""
    import hashlib
    import random

    import msgspec

    from service.bots import bot, next_move
    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for

    for i in range(50):
        seed = hashlib.sha256(b"win%d" % i).digest()
        game = Game.new("solitaire", "g_seed_search", rules_for("solitaire").CONFIG(seats=1, seed_chosen=True), seed)
        game.play(Create(), None, 1)
        game.play(TakeSeat(player=Player(name="p", player_id="g_p")), None, 1)
        players, rnd, commands = [bot("solitaire", "solver")], random.Random(1), []
        while game.rules.status_of(game.state) != "finished" and len(commands) < 1000:
            seat, c = next_move(game.rules, game.state, players, rnd)
            commands.append(msgspec.to_builtins(c))
            game.play(c, seat, 1)
        if game.state.phase == "won" and commands[-1]["type"] == "move":
            return seed.hex(), commands
    raise AssertionError("the solver won none of the seeds")


async def test_solitaire_new_deal_asks_first_and_the_win_screen_shows_the_time(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Win")
    seed, commands = winning_line()
    game_id = (await live.post("/games", json={"kind": "solitaire", "seed": seed})).json()["game_id"]
    assert (await live.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))).status_code == 201
    for c in commands[:-1]:
        r = await live.post(f"/games/{game_id}/commands", json=c, headers=bearer(token))
        assert r.status_code == 200, r.text
    await page.goto(f"/#/games/{game_id}")
    last = commands[-1]
    card = page.locator(f"#table .grid .cell[data-card='{last['card']}']")
    await card.wait_for()
    # a new deal in the middle of a game asks first; "keep playing" stays on this game
    await page.click("#new-deal")
    await page.locator("#confirm").wait_for()
    assert "Leave this game for a new deal?" in await page.inner_text("#confirm")
    await page.click("#confirm-no")
    await page.locator("#confirm").wait_for(state="detached")
    assert page.url.endswith(game_id)
    # the winning move, played on the page
    await card.click()
    await page.click(f"#table .grid .cell.target[data-row='{last['to']['row']}'][data-slot='{last['to']['slot']}']")
    end = page.locator("#sol-end.won")
    await end.wait_for()
    assert "You won! Every row runs 2 to king." in await end.inner_text()
    assert await page.inner_text("#table .badge.done") == "Won!"
    await page.wait_for_function("() => /\\d+:\\d\\d/.test(document.querySelector('#sol-end-time').textContent)")
    scores = (await live.get(f"/games/{game_id}/scores")).json()["scores"]
    minutes, seconds = divmod(scores["solitaire"]["time_ms"] // 1000, 60)
    assert await page.inner_text("#sol-end-time") == f"{minutes}:{seconds:02d}"
    await page.locator("#move-log li", has_text="Win wins: every row runs 2 to king").wait_for()
    # two New deal buttons now (the controls' and the end box's), each with an id of its own
    assert await page.locator("#table button", has_text="New deal").count() == 2
    assert await duplicate_ids(page) == []
    # once won, a new deal needs no confirming
    await page.click("#sol-end #sol-end-new-deal")
    await page.wait_for_function("old => !location.hash.endsWith(old)", arg=game_id)
    await page.wait_for_selector("#table .grid .cell")
    assert await page.locator("#confirm").count() == 0
    assert page.errors == []


async def test_a_finished_game_shows_its_result_and_the_lobby_lists_winner_players_and_date(live, browser):
    game_id = (await live.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    for _ in range(2):
        await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})

    async def finished():
        return (await live.get(f"/games/{game_id}")).json()["status"] == "finished"

    await wait_until(finished)
    v = (await live.get(f"/games/{game_id}")).json()
    winner = v["players"][v["winner"]]["name"]
    page = await open_page(browser, live, f"#/games/{game_id}/watch")
    await page.locator("#result").wait_for()
    assert winner in await page.inner_text("#result h2")
    rows = await page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => r.dataset.seat)")
    assert rows[0] == str(v["winner"]) and len(rows) == 2
    assert await page.locator("#play-again").count() == 1
    await page.click("#to-lobby")
    row = page.locator(f"#games [data-status=finished] tr[data-game='{game_id}']")
    await row.locator("td.winner").wait_for()
    assert await row.locator("td.winner").inner_text() == f"{winner} won"
    assert await row.locator("td.players").inner_text() == ", ".join(p["name"] for p in v["players"])
    assert await row.locator("td.date time").get_attribute("datetime")
    assert page.errors == []


async def test_sign_out_warns_and_a_saved_key_signs_back_in(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Kim")
    await page.click("#sign-out")
    box = page.locator("#account")
    await box.wait_for()
    assert "forgets your token" in await box.inner_text()
    key = await page.input_value("#saved-key")
    assert key.endswith(token)
    await page.click("#confirm-sign-out")
    await page.locator("#sign-in").wait_for()
    assert await page.evaluate("localStorage.getItem('fp.player')") is None
    # a key whose token the service does not know is refused, by the service
    await page.fill("#sign-in input[name=key]", key.split(":")[0] + ":fpt_not-a-real-token")
    await page.click("#sign-in button[type=submit]")
    await page.wait_for_function("() => document.querySelector('#sign-in-error').textContent.includes('does not know')")
    await page.fill("#sign-in input[name=key]", key)
    await page.click("#sign-in button[type=submit]")
    await page.wait_for_selector("#who-name")
    assert await page.inner_text("#who-name") == "Kim"
    assert await page.evaluate("JSON.parse(localStorage.getItem('fp.player')).token") == token
    assert page.errors == []


async def test_the_outage_banner_disables_controls_backs_off_and_recovers_without_a_reload(live, browser):
    """The view's poll and the move log's retry both back off while nothing answers (reach.js), and catch up after."""
    page = await open_page(browser, live)
    await register(page, "Off")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    game_id = page.url.rsplit("/", 1)[-1]
    version = int(await page.get_attribute("#table", "data-version"))
    await page.wait_for_selector(f"#move-log[data-version='{version}']")
    await page.evaluate("window.sameDocument = true")
    tries: list[float] = []
    log_tries: list[float] = []
    down = until_retried = False

    async def fail(route):
        path = urlsplit(route.request.url).path
        if until_retried and await page.evaluate("window.retried === true"):
            return await route.continue_()
        if path == f"/games/{game_id}/log":  # the log is unreachable first, then everything is
            log_tries.append(time.monotonic())
            return await route.abort()
        if not down:
            return await route.continue_()
        if path == f"/games/{game_id}":  # the view's poll (not the stream, nor the scores)
            tries.append(time.monotonic())
        await route.abort()

    def is_api(url: str) -> bool:
        return "/web/" not in url

    await page.route(is_api, fail)
    # a move the table shows while its log cannot be read: the log is behind, and keeps asking
    await page.click("#table .grid .cell.movable")
    await page.click("#table .grid .cell.target")
    version = await version_after(page, version)
    await wait_until(lambda: asyncio.sleep(0, bool(log_tries)))
    down = True
    # the log's failure may have shown the banner already, and a view poll answered since hidden it: from the first
    # view poll that fails, nothing answers, and the banner stays
    await wait_until(lambda: asyncio.sleep(0, bool(tries)), seconds=30)
    await page.wait_for_function("""() => !document.querySelector('#offline').hidden
      && document.querySelector('#table button.cmd[data-type=hint]').disabled && document.querySelector('#new-deal').disabled""")
    banner = page.locator("#offline")
    assert "not answering" in await banner.inner_text()
    assert await page.locator("#offline").count() == 1
    # polling backs off: each wait between two tries at least as long as the one before, and growing
    await wait_until(lambda: asyncio.sleep(0, len(tries) >= 4 and len(log_tries) >= 5), seconds=40)
    for asked in (tries, log_tries[1:]):  # the log's first try was before the outage: a view poll may have poked it
        gaps = [b - a for a, b in zip(asked, asked[1:])]
        assert gaps[-1] > 1.5 * gaps[0] and all(later >= 0.8 * earlier for earlier, later in zip(gaps, gaps[1:])), gaps
    # the service is back from the click of Retry now on, not before: a poller that found it first would take the
    # banner, and the button, away under the click (one run saw it)
    await page.evaluate("document.querySelector('#offline').addEventListener('click', () => { window.retried = true }, true)")
    until_retried = True
    await page.click("#retry-now")
    await banner.wait_for(state="hidden")
    await page.wait_for_function("() => !document.querySelector('#table button.cmd[data-type=hint]').disabled")
    await page.wait_for_selector(f"#move-log[data-version='{version}']")  # the log caught up without a new version
    assert (await page.inner_text("#move-log li:first-child")).startswith("Off moves ")
    assert await page.evaluate("window.sameDocument") is True  # no reload
    assert page.errors == []


async def test_an_unknown_game_shows_a_way_back_and_stops_polling(live, browser):
    page = await open_page(browser, live)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/games/g_nope" in r.url else None)
    await page.goto("/#/games/g_nope")
    await page.locator("#not-found").wait_for()
    assert "g_nope" in await page.inner_text("#not-found h2")
    n = len(asked)
    await page.wait_for_timeout(1500)  # three poll periods: nothing more is asked
    assert len(asked) == n
    await page.click("#back-to-lobby")
    await page.locator("#create-form").wait_for()
    assert page.errors == []


async def test_at_375_px_the_lobby_fits_and_the_tables_scroll_inside_their_boxes(live, browser):
    finished = (await live.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    await live.post(f"/games/{finished}/seats", json={"bot": "greedy"})
    context = await browser.new_context(base_url=str(live.base_url), viewport={"width": 375, "height": 800})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto("/#/")
    await page.fill("#register input[name=name]", "A rather long player name")
    await page.click("#register button[type=submit]")
    await page.wait_for_selector("#who-name")
    await page.wait_for_selector(f"#games tr[data-game='{finished}'] td.winner")
    width = "() => document.scrollingElement.scrollWidth"
    assert await page.evaluate(width) <= 375 + 2
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    assert await page.evaluate(width) <= 375 + 2
    box = await page.eval_on_selector(".grid-scroll", "b => ({scroll: b.scrollWidth, client: b.clientWidth, overflow: getComputedStyle(b).overflowX})")
    assert box["scroll"] > box["client"] and box["overflow"] == "auto", box
    # a card stays readable: not squeezed below 2.4 rem
    cell = await page.eval_on_selector(".grid .cell", "c => c.getBoundingClientRect().width")
    assert cell >= 36
    token = await page.evaluate("JSON.parse(localStorage.getItem('fp.player')).token")
    mono = (await live.post("/games", json={"kind": "monopoly", "seats": 2})).json()["game_id"]
    await live.post(f"/games/{mono}/seats", json={}, headers=bearer(token))
    await live.post(f"/games/{mono}/seats", json={"bot": "random"})
    await page.goto(f"/#/games/{mono}")
    await page.wait_for_selector("#table .mono-board .mono-cell")
    assert await page.evaluate(width) <= 375 + 2
    board = await page.eval_on_selector(".mono-main", "b => ({scroll: b.scrollWidth, client: b.clientWidth})")
    assert board["scroll"] > board["client"], board
    assert errors == []


async def test_focus_stays_where_the_action_was(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Keys")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    game_id = page.url.rsplit("/", 1)[-1]
    v = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()
    move = next(c for c in v["legal"] if c["type"] == "move")
    await page.focus(f'.cell.card[data-card="{move["card"]}"]')
    await page.keyboard.press("Enter")  # selects it: the table is drawn again
    assert await page.evaluate("document.activeElement.dataset.card") == move["card"]
    gap = f'.cell.target[data-row="{move["to"]["row"]}"][data-slot="{move["to"]["slot"]}"]'
    await page.focus(gap)
    await page.keyboard.press("Enter")  # the move: a new version, drawn again
    await version_after(page, v["version"])
    active = await page.evaluate("({row: document.activeElement.dataset.row, slot: document.activeElement.dataset.slot})")
    assert active == {"row": str(move["to"]["row"]), "slot": str(move["to"]["slot"])}
    await page.focus("button.cmd[data-type=undo]")
    await page.keyboard.press("Enter")
    await version_after(page, v["version"] + 1)
    assert await page.evaluate("document.activeElement.closest('#table') !== null")
    assert page.errors == []


async def test_the_title_says_when_it_is_your_turn_and_roll_is_one_skip_away(live, browser):
    page = await open_page(browser, live)
    token = await register(page, "Tess")
    await page.evaluate("""() => { window.titles = [];
      new MutationObserver(() => window.titles.push(document.title)).observe(document.querySelector('title'), {childList: true}); }""")
    # two people (no bot: a bot's turn can pass between two polls, and a bot's auction waits on her too)
    game_id = (await live.post("/games", json={"kind": "monopoly", "seats": 2})).json()["game_id"]
    await live.post(f"/games/{game_id}/seats", json={}, headers=bearer(token))
    bob = (await live.post(f"/games/{game_id}/seats", json={"name": "Bob"})).json()["token"]
    await page.goto(f"/#/games/{game_id}")
    await page.wait_for_function("() => document.title.startsWith('● Your turn')", timeout=20000)
    await page.wait_for_selector("#table button.cmd[data-type=roll]")
    # from the top of the page: a few tabs reach the skip link, which jumps past the 40 squares to Roll
    await page.focus("body")
    for _ in range(8):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.id") == "skip-to-actions":
            break
    assert await page.evaluate("document.activeElement.id") == "skip-to-actions"
    await page.keyboard.press("Enter")
    assert await page.evaluate("document.activeElement.dataset.type") == "roll"
    # not her turn once she has played it out: the title says so too
    order = ["end_turn", "roll", "buy", "choose_tax", "pay_fine", "pass_bid", "claim_buildings"]
    deadline = time.monotonic() + 30
    while True:  # she plays her turn out over the API, the simplest way each time (Bob only passes an auction)
        v = (await live.get(f"/games/{game_id}", headers=bearer(token))).json()
        pending = v["pending"] or {}
        waiting_on = set(pending.get("seats") or ([pending["seat"]] if pending.get("seat") is not None else []))
        if v["status"] != "playing" or (v["turn_seat"] == 1 and not waiting_on):
            break
        assert time.monotonic() < deadline, v
        who = token if (0 in waiting_on or (not waiting_on and v["turn_seat"] == 0)) else bob
        w = (await live.get(f"/games/{game_id}", headers=bearer(who))).json()
        moves = [c for c in w["legal"] if c["type"] in order]
        if moves:
            c = min(moves, key=lambda c: order.index(c["type"]))
            await live.post(f"/games/{game_id}/commands", json={**c, "expected_version": w["version"]}, headers=bearer(who))
        else:
            await asyncio.sleep(0.1)
    await page.wait_for_function("() => window.titles.some(t => !t.startsWith('● Your turn') && t.includes('Monopoly'))")
    assert page.errors == []
