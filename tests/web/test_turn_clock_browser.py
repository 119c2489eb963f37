"""The turn clock on the card game's and Monopoly's tables (service/web/tables/clock.js), in a real browser against
the ``live`` service: the countdown of the turn in play, each seat's missed turns and a forfeited seat, the warning to
a player one missed turn from forfeiting, and none of it at a table without a clock.

Two clocks: a long one (10 minutes) where the countdown is looked at while it runs, and a one-second one that nobody
beats, so the server times every turn out until a seat forfeits and the game ends; the tests wait for that end through
the API and for the page to show its version, never for a time.
"""

from __future__ import annotations

import re
import time

import msgspec
import pytest

from tests.api.conftest import ADMIN_HEADERS
from tests.web.test_browser import open_page, register  # noqa: F401  (the fixture)
from tests.web.test_monopoly_browser import (
    ann_sits,
    api_seat,
    find_seed,
    lands_on_a_property,
    made_up_table,
    seat_view,
    table_page,
    until_status,
)

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

LONG = 600
"""Seconds: a turn clock that does not run out while a test looks at it."""
COUNTDOWN = r"(10:00|9:[0-5]\d) left"
ANY_CLOCK = "#table .turn-clock, #table [data-format=clock], #forfeit-warning, #table .seat-clock"
UNTIL_OVER = 90
"""Seconds the service gets to time a game's turns out to its end (a few seconds on an idle machine)."""


async def new_game(live, kind: str, options: dict, seed: str | None = None) -> str:
    body = {"kind": kind, "seats": 2, "options": options}
    if seed:
        body["seed"] = seed
    r = await live.post("/games", json=body, headers=ADMIN_HEADERS if seed else {})
    assert r.status_code == 201, r.text
    return r.json()["game_id"]


async def table_at(page, version: int) -> None:
    """Wait until the page's table is drawn from ``version`` (the game's last, once it is over)."""
    await page.wait_for_selector(f"#table[data-version='{version}']", state="attached", timeout=UNTIL_OVER * 1000)


async def seat_clocks(page, players: str) -> dict[int, dict]:
    """Each seat's turn-clock standing as the page draws it: its classes and its line's words."""
    return await page.eval_on_selector_all(
        players,
        """ps => Object.fromEntries(ps.map(p => [p.dataset.seat, {
            forfeited: p.classList.contains('forfeited'),
            line: (p.querySelector('.seat-clock') || {}).textContent || null}]))""",
    )


def expected_clocks(seats: list[dict], forfeit_after: int) -> dict[str, dict]:
    def line(p):
        if p["forfeited"]:
            return f"forfeited after {p['missed']} missed turns: out of the game"
        return f"{p['missed']} of {forfeit_after} missed turns" if p["missed"] else None

    return {str(p["seat"]): {"forfeited": p["forfeited"], "line": line(p)} for p in seats}


# --- the card game ---------------------------------------------------------------------------------------------------


async def test_card_game_counts_the_turn_down_and_warns_a_player_one_miss_from_forfeiting(live, browser):  # noqa: F811
    game_id = await new_game(live, "free-parking", {"turn_seconds": LONG, "forfeit_after": 1})
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    v = await until_status(live, game_id, "playing")
    assert v["turn_deadline_at"] and v["forfeit_after"] == 1
    turn = v["turn"]
    clock = ann.locator("#table .fp-head .turn-clock")
    await clock.wait_for()
    assert await clock.get_attribute("data-turn-clock") == str(turn)
    assert await clock.locator("[data-deadline]").get_attribute("data-deadline") == str(v["turn_deadline_at"])
    whose = "Your turn" if turn == 0 else "Bob's turn"
    text = await clock.inner_text()
    assert re.fullmatch(f"◷ {whose}: {COUNTDOWN}", text), text
    # it counts down: app.js ticks it
    await ann.wait_for_function(
        "old => document.querySelector('#table .turn-clock').textContent !== old", arg=await clock.text_content()
    )
    # one missed turn forfeits at this table: Ann is warned, with her own countdown when the turn is hers
    warning = ann.locator("#forfeit-warning")
    await warning.wait_for()
    words = await warning.inner_text()
    assert "One more missed turn and you forfeit" in words and "one missed turn forfeits" in words, words
    assert ("Your turn now:" in words) == (turn == 0), words
    assert await ann.locator("#table .seat-clock").count() == 0  # nobody has missed a turn yet
    # a spectator sees whose turn it is and its time, and no warning
    watcher = await open_page(browser, live, f"#/games/{game_id}/watch")
    await watcher.locator("#table .turn-clock").wait_for()
    text = await watcher.inner_text("#table .turn-clock")
    assert re.fullmatch(f"◷ {'Ann' if turn == 0 else 'Bob'}'s turn: {COUNTDOWN}", text), text
    assert await watcher.locator("#forfeit-warning").count() == 0
    assert ann.errors == [] and watcher.errors == []


async def test_card_game_shows_missed_turns_and_the_forfeited_seat_once_the_clock_runs_out(live, browser):  # noqa: F811
    game_id = await new_game(live, "free-parking", {"turn_seconds": 1, "forfeit_after": 2})
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    # nobody plays: the first seat misses, the second misses, the first misses again and forfeits, the second wins
    v = await until_status(live, game_id, "finished", UNTIL_OVER)
    players = v["players"]
    out = [p["seat"] for p in players if p["forfeited"]]
    assert len(out) == 1 and v["winner"] == 1 - out[0], v
    assert players[out[0]]["missed"] == 2 and players[v["winner"]]["missed"] == 1
    await table_at(ann, v["version"])
    shown = await seat_clocks(ann, "#table .player")
    assert shown == expected_clocks(players, 2)
    forfeited = ann.locator(f"#table .player.forfeited[data-seat='{out[0]}']")
    assert "FORFEITED" in (await forfeited.inner_text()).upper()
    assert await ann.locator("#table .turn-clock, #forfeit-warning").count() == 0  # the game is over
    # the replay draws each table as it was: the turn clock as the time it was due (nothing ticks there)
    replay = await open_page(browser, live, f"#/replay/{game_id}")
    at = None
    for n in range(1, v["version"]):
        answer = (await live.get(f"/games/{game_id}/replay", params={"at": n})).json()["view"]
        if answer["turn_deadline_at"] and any(p["missed"] for p in answer["players"]):
            at, then = n, answer
            break
    assert at is not None, "no event between the first missed turn and the end with a turn clock running"
    await replay.wait_for_selector("#replay-table[data-at]")
    await replay.eval_on_selector("#seq", "(el, at) => { el.value = at; el.dispatchEvent(new Event('input')); }", at)
    await replay.wait_for_selector(f"#replay-table[data-at='{at}']")
    due = await replay.inner_text("#replay-table .turn-clock")
    assert re.fullmatch(r"◷ (Ann|Bob)'s turn: \(due .+\)", due), due
    assert await replay.locator("#replay-table [data-deadline]").count() == 0
    assert await seat_clocks(replay, "#replay-table .player") == expected_clocks(then["players"], 2)
    assert ann.errors == [] and replay.errors == []


async def test_a_card_game_without_a_clock_shows_none(live, browser):  # noqa: F811
    game_id = await new_game(live, "free-parking", {})
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    v = await until_status(live, game_id, "playing")
    assert v["turn_deadline_at"] is None and v["forfeit_after"] is None
    await table_at(ann, v["version"])
    await ann.locator("#table .badge.turn").wait_for()
    assert await ann.locator(ANY_CLOCK).count() == 0
    assert ann.errors == []


# --- Monopoly ----------------------------------------------------------------------------------------------------------


async def test_monopoly_counts_the_roll_down_and_warns_a_player_one_miss_from_forfeiting(live, browser):  # noqa: F811
    game_id = await new_game(live, "monopoly", {"turn_seconds": LONG, "forfeit_after": 1})
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    v = await until_status(live, game_id, "playing")
    assert v["turn_seat"] == 0 and v["turn_deadline_at"] and v["forfeit_after"] == 1
    clock = ann.locator("#table .mono-centre .turn-clock[data-turn-clock='0']")
    await clock.wait_for()
    assert await clock.locator("[data-deadline]").get_attribute("data-deadline") == str(v["turn_deadline_at"])
    text = await clock.inner_text()
    assert re.fullmatch(f"◷ Your turn: {COUNTDOWN}", text), text
    warning = ann.locator("#forfeit-warning")
    await warning.wait_for()
    words = await warning.inner_text()
    assert "one missed turn forfeits" in words and "bankrupt to the bank" in words and "Your turn now:" in words, words
    watcher = await open_page(browser, live, f"#/games/{game_id}/watch")
    await watcher.locator("#table .turn-clock").wait_for()
    text = await watcher.inner_text("#table .turn-clock")
    assert re.fullmatch(f"◷ Ann's turn: {COUNTDOWN}", text), text
    assert await watcher.locator("#forfeit-warning").count() == 0
    assert ann.errors == [] and watcher.errors == []


async def test_monopoly_shows_missed_turns_and_the_forfeited_player_once_the_clock_runs_out(live, browser):  # noqa: F811
    # Ann's first roll is no double (a double would give her a second roll, and a second miss, at once)
    seed = find_seed(lands_on_a_property, 2)
    game_id = await new_game(live, "monopoly", {"turn_seconds": 1, "forfeit_after": 2, "response_seconds": 1}, seed)
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    v = await until_status(live, game_id, "finished", UNTIL_OVER)
    seats = v["seats"]
    out = [p["seat"] for p in seats if p["forfeited"]]
    assert len(out) == 1 and seats[out[0]]["bankrupt"] and seats[out[0]]["missed"] == 2, seats
    assert v["winner"] == 1 - out[0] and seats[v["winner"]]["missed"] == 1, v
    await table_at(ann, v["version"])
    assert await seat_clocks(ann, "#table .mono-player") == expected_clocks(seats, 2)
    assert await ann.locator("#table .turn-clock, #forfeit-warning").count() == 0
    assert ann.errors == []


async def test_a_monopoly_game_without_a_clock_shows_none(live, browser):  # noqa: F811
    game_id = await new_game(live, "monopoly", {})
    ann = await ann_sits(browser, live, game_id)
    await api_seat(live, game_id, "Bob")
    v = await until_status(live, game_id, "playing")
    assert v["turn_deadline_at"] is None and v["forfeit_after"] is None
    await table_at(ann, v["version"])
    await ann.locator("#table button.cmd[data-type=roll]").wait_for()
    assert await ann.locator(ANY_CLOCK).count() == 0
    assert ann.errors == []


OUT_OF_SIGHT = """() => {
    const main = document.querySelector('#table .mono-main');
    main.scrollLeft = 0;
    const box = main.getBoundingClientRect();
    const lines = [...document.querySelectorAll('#table .mono-centre > :not(.mono-title), #table .turn-clock')];
    return lines.map((e) => [e.className, e.getBoundingClientRect()])
      .filter(([, r]) => r.left < box.left || r.right > box.right)
      .map(([name, r]) => `${name}: ${Math.round(r.left)}..${Math.round(r.right)} of ${Math.round(box.right)}`);
}"""


async def test_at_375_px_the_monopoly_countdown_and_the_square_shown_are_in_sight(live, browser):  # noqa: F811
    """On a phone the board scrolls sideways inside its box: the centre's lines start at its left, in sight, so the
    countdown reads without scrolling the board (centred, it ran past the box's edge)."""
    game_id = await new_game(live, "monopoly", {"turn_seconds": LONG, "forfeit_after": 1})
    ann = await open_page(browser, live, width=375)
    await register(ann, "Ann")
    await ann.goto(f"/#/games/{game_id}")
    async with ann.expect_navigation():  # the page reloads once seated: wait for it
        await ann.click("#join")
    await api_seat(live, game_id, "Bob")
    await ann.locator("#table .mono-centre .turn-clock[data-turn-clock='0']").wait_for()
    assert await ann.evaluate(OUT_OF_SIGHT) == []
    await ann.click("#table .mono-cell[data-square='39']")  # Boardwalk, at the far edge: its deed opens in the centre
    await ann.locator("#table .mono-deed[data-square='39']").wait_for()
    assert await ann.evaluate(OUT_OF_SIGHT) == []
    assert ann.errors == []


async def test_the_warning_counts_the_missed_turns_and_is_the_players_own(live, browser):  # noqa: F811
    """Tables made up in the rules' own state, drawn by the table module alone: Ann has missed two turns of three."""
    from service.events.monopoly import MonopolyConfig

    now = int(time.time() * 1000)

    def table(ann_missed: int, due_in: int, **bob):
        s = made_up_table(
            config=MonopolyConfig(seats=2, turn_seconds=60, forfeit_after=3), turn_deadline_at=now + due_in
        )
        ann, bob_seat = s.seats
        return msgspec.structs.replace(
            s, seats=(msgspec.structs.replace(ann, missed=ann_missed), msgspec.structs.replace(bob_seat, **bob))
        )

    page = await table_page(browser, live)
    await page.evaluate("v => window.render(v)", seat_view(table(2, 90_000)))
    warning = page.locator("#mono-test #forfeit-warning")
    words = await warning.inner_text()
    assert "The turn clock has run out on 2 turns of yours in a row" in words, words
    assert re.search(r"Your turn now: 1:[23]\d left", words), words
    assert await page.inner_text("#mono-test .mono-player[data-seat='0'] .seat-clock") == "2 of 3 missed turns"
    assert await page.locator("#mono-test .turn-clock .deadline.urgent").count() == 0
    # the last seconds stand out
    await page.evaluate("v => window.render(v)", seat_view(table(2, 5_000)))
    assert await page.locator("#mono-test .turn-clock .deadline.urgent").count() == 1
    # one miss of three: counted, no warning yet
    await page.evaluate("v => window.render(v)", seat_view(table(1, 90_000)))
    assert await page.locator("#mono-test #forfeit-warning").count() == 0
    assert await page.inner_text("#mono-test .mono-player[data-seat='0'] .seat-clock") == "1 of 3 missed turns"
    # Bob sees Ann's two misses on her seat, and no warning: it is Ann's alone
    await page.evaluate("v => window.render(v)", seat_view(table(2, 90_000), 1))
    assert await page.locator("#mono-test #forfeit-warning").count() == 0
    assert await page.inner_text("#mono-test .mono-player[data-seat='0'] .seat-clock") == "2 of 3 missed turns"
    # a forfeited player (bankrupt to the bank) is greyed and marked, and warned of nothing more
    await page.evaluate(
        "v => window.render(v)", seat_view(table(2, 90_000, missed=3, forfeited=True, bankrupt=True, cash=0), 1)
    )
    bob = page.locator("#mono-test .mono-player.forfeited.bankrupt[data-seat='1']")
    assert await bob.locator(".seat-clock").text_content() == "forfeited after 3 missed turns: out of the game"
    assert await page.locator("#mono-test #forfeit-warning").count() == 0
    assert page.errors == []


# --- the lobby's create form ---------------------------------------------------------------------------------------


async def test_the_create_form_gives_a_game_a_two_minute_turn_clock_unless_emptied(live, browser):  # noqa: F811
    """Issue 31: a table the page makes for a person gets a turn clock by default (120 s, docs/limits.md); the API's
    own default stays none, and emptying the field makes a game without one. Solitaire has no clock: no field."""
    page = await open_page(browser, live)
    await register(page, "Clara")
    created = []
    for kind, clock in (("monopoly", None), ("free-parking", ""), ("free-parking", None)):
        await page.goto("/#/")
        await page.select_option("#create-form select[name=kind]", kind)
        field = page.locator("#create-form input[name=turn_seconds]")
        assert await field.input_value() == "120" and await field.is_visible()
        if clock is not None:
            await field.fill(clock)
        await page.uncheck("#create-form input[name=sit]")
        await page.click("#create-form button[type=submit]")
        await page.wait_for_url(re.compile(r"#/games/g_"))
        created.append(page.url.rsplit("/", 1)[-1])
    await page.goto("/#/")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    assert not await page.locator("#create-form input[name=turn_seconds]").is_visible()
    listed = {g["game_id"]: g for g in (await live.get("/games", params={"status": "waiting"})).json()["games"]}
    assert [listed[g]["turn_seconds"] for g in created] == [120, None, 120]
    assert listed[created[0]]["forfeit_after"] == 3 and page.errors == []
