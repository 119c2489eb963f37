"""The move log beside the card game's table (tables/log.js, GET /games/{id}/log), the hand that explains itself,
and swap three picked card by card, in a real browser (fixtures of test_browser.py)."""

from __future__ import annotations

import hashlib
import re
from functools import cache

import pytest

from tests.api.conftest import ADMIN_HEADERS
from tests.api.helpers import find_seed, holds, time_expires_pending
from tests.web.test_browser import open_page, register, version_after  # noqa: F401 — fixtures

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

EFFECTS = {
    "take_point": "take a Point card from another player, unseen", "give_point": "give one of your Point cards to an opponent",
    "lose_point": "lose one of your Point cards", "trade_places": "trade places with another player",
    "add_20": "add 20 minutes", "add_40": "add 40 minutes", "set_60": "set your meter to 60",
    "minus_20": "take 20 minutes off your meter", "violation": "your meter goes to Violation",
    "all_minus_20": "every opponent takes 20 minutes off", "draw_2": "draw 2 playing cards",
}

# Ann's plain play through the page: answer at once, score where she can, and draw a Second Chance card every turn
PLAY = """() => {
  const t = document.querySelector('#table');
  if (!t) return null;
  if (t.querySelector('.badge.done')) return 'finished';
  const buttons = [...t.querySelectorAll('section.prompt button.cmd, section.legal button.cmd')];
  const order = ['accept', 'choose', 'run_errand', 'free_parking', 'feed_meter', 'draw_second_chance', 'discard', 'end_turn'];
  for (const type of order) {
    const b = buttons.find((x) => x.dataset.type === type);
    if (b) { const v = t.dataset.version; b.click(); return 'clicked:' + v; }
  }
  return null;
}"""


async def new_table(live, seed: str) -> str:
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2, "seed": seed}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201  # seat 0
    return game_id


async def test_a_game_against_a_bot_to_the_end_and_its_log_names_every_move(live, browser):
    seed = find_seed(holds("P", seat=1))
    game_id = await new_table(live, seed)
    page = await open_page(browser, live)
    await register(page, "Ann")
    await page.goto(f"/#/games/{game_id}")
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")  # seat 1: Ann plays first
    await page.wait_for_selector("#table[data-seat='1']")
    for _ in range(600):
        handle = await page.wait_for_function(PLAY, polling=100)
        state = await handle.json_value()
        if state == "finished":
            break
        await version_after(page, int(state.split(":")[1]))
    else:
        raise AssertionError("the game did not end")
    events = (await live.get(f"/games/{game_id}/events", params={"limit": 5000})).json()["events"]
    version = events[-1]["seq"]
    await page.wait_for_selector(f"#move-log[data-version='{version}']")
    lines = await page.eval_on_selector_all("#move-log li", "ls => ls.map(l => [Number(l.dataset.seq), l.textContent])")
    assert [seq for seq, _ in lines] == list(range(version, 0, -1))  # newest first, every event
    text = dict(lines)
    names = {0: "Greedy Gus", 1: "Ann"}
    bot_moves = drawn = 0
    for e in events:
        public = e["public"]
        if e.get("command") and e.get("actor", "server").startswith("seat:"):
            actor = names[int(e["actor"].removeprefix("seat:"))]
            assert text[e["seq"]].startswith(actor) or f" {actor}" in text[e["seq"]], (e["type"], text[e["seq"]])
            bot_moves += actor == "Greedy Gus"
        if e["type"] == "second_chance_drawn":
            drawn += 1
            assert f"a Second Chance card: “{EFFECTS[public['effect']]}”" in text[e["seq"]], text[e["seq"]]
        if e["type"] == "places_traded":
            names[public["seat"]], names[public["other"]] = names[public["other"]], names[public["seat"]]
    assert bot_moves > 5 and drawn > 0, (bot_moves, drawn)
    assert "Greedy Gus takes seat 0" in text.values() or "Greedy Gus (greedy bot) takes seat 0" in text.values()
    assert page.errors == []


async def test_swap_three_by_picking_cards_and_each_card_says_what_it_does(live, browser):
    seed = find_seed(holds("P", seat=1))
    game_id = await new_table(live, seed)
    page = await open_page(browser, live)
    await register(page, "Ann")
    await page.goto(f"/#/games/{game_id}")
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")
    await page.wait_for_selector("#table[data-seat='1'] #swap-start")
    # no list of combinations: one "Swap three…" button; every card explains itself; at meter 0 no errand runs
    assert await page.locator("#table button.cmd[data-type=swap_three]").count() == 0
    cards = page.locator("#table .hand.own .card")
    for i in range(await cards.count()):
        assert (await cards.nth(i).locator(".card-does").inner_text()).strip()
    point = page.locator("#table .hand.own .card.k-P").first
    assert "Meter 0 is too low" in await point.get_attribute("data-why")
    ids = await page.eval_on_selector_all("#table .hand.own .card", "cs => cs.map(c => c.dataset.card)")
    await page.click("#swap-start")
    for card in ids[:3]:
        await page.click(f"#table .hand.own .card[data-card='{card}']")
    assert await page.locator("#table .hand.own .card.picked").count() == 3
    await page.click(f"#table .hand.own .card[data-card='{ids[3]}']")  # a fourth is not taken
    assert await page.locator("#table .hand.own .card.picked").count() == 3
    old = int(await page.get_attribute("#table", "data-version"))
    await page.click("#swap-confirm")
    await version_after(page, old)
    events = (await live.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)).json()["events"]
    swapped = next(e for e in events if e["type"] == "three_swapped")
    assert sorted(swapped["public"]["cards"]) == sorted(ids[:3])
    await page.locator("#move-log li", has_text="Ann swaps three: discards").wait_for()
    assert page.errors == []


async def test_a_solitaires_log_says_its_moves_in_the_pages_words_stuck_and_undo(live, browser):
    """The solitaire's log beside the grid: cards as the grid shows them, rows as its "Row 1–4" labels count them."""
    from tests.web.test_page_browser import play_to_stuck

    page = await open_page(browser, live)
    token = await register(page, "Sol")
    game_id, got = await play_to_stuck(live, token)
    await page.goto(f"/#/games/{game_id}")
    await page.locator("#stuck").wait_for()
    version = got["view"]["version"]
    await page.wait_for_selector(f"#move-log[data-version='{version}']")
    newest = await page.inner_text("#move-log li:first-child")
    assert newest.endswith("stuck — no card fits any gap and no redeal is left; undo or resign"), newest
    moved = re.fullmatch(r"Sol moves (\S+) from row (\d), slot (\d+) to row (\d), slot (\d+): stuck.*", newest)
    assert moved, newest
    card, row, slot, to_row, to_slot = moved.groups()
    target = page.locator(f"#table .grid .cell[data-row='{int(to_row) - 1}'][data-slot='{to_slot}']")
    assert await target.inner_text() == card  # the grid shows the card where the log says it went
    label = page.locator(f".grid .row[data-row='{int(to_row) - 1}'] .row-name")
    assert await label.inner_text() == f"Row {to_row}"
    await page.click("#stuck-undo")
    version = await version_after(page, version)
    await page.wait_for_selector(f"#move-log[data-version='{version}']")
    assert await page.inner_text("#move-log li:first-child") == f"Sol undoes the move of {card} to row {to_row}, slot {to_slot}"
    back = page.locator(f"#table .grid .cell[data-row='{int(row) - 1}'][data-slot='{slot}']")
    assert await back.inner_text() == card  # and back where the log said it came from
    lines = await page.eval_on_selector_all("#move-log li", "ls => ls.map(l => l.textContent)")
    assert not any("row 0" in line or re.search(r"\b[2-9TJQKA][CDHS]\b", line) for line in lines), lines
    assert page.errors == []


async def test_two_look_alike_cards_give_buttons_that_say_which_card(live, browser):
    """Two Time Expires cards on the one opponent (and any two cards of one name to discard) were identical buttons:
    each now names its card's place in the hand, which the hand numbers."""
    seed = find_seed(lambda s: sum(c.startswith("TE-") for c in s.seats[1].hand) >= 2)
    game_id = await new_table(live, seed)
    page = await open_page(browser, live)
    await register(page, "Ann")
    await page.goto(f"/#/games/{game_id}")
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")
    await page.wait_for_selector("#table[data-seat='1'] section.legal button.cmd[data-type=time_expires]")
    buttons = await page.eval_on_selector_all(
        "#table section.legal button.cmd", "bs => bs.map(b => [b.textContent, JSON.parse(b.dataset.command)])")
    labels = [text for text, _ in buttons]
    assert len(labels) == len(set(labels)), labels  # no two buttons read the same
    ids = await page.eval_on_selector_all("#table .hand.own .card", "cs => cs.map(c => c.dataset.card)")
    places = await page.eval_on_selector_all("#table .hand.own .card", "cs => cs.map(c => c.querySelector('.card-place')?.textContent || null)")
    expires = [(text, c) for text, c in buttons if c["type"] == "time_expires"]
    assert len(expires) >= 2
    for text, c in expires:
        place = ids.index(c["card"]) + 1
        assert text.endswith(f" · card {place} of your hand") and text.startswith("Time Expires on Greedy Gus"), text
        assert places[place - 1] == str(place)  # the hand shows the number the button names
    # the button sends the card it names
    text, chosen = expires[-1]
    old = int(await page.get_attribute("#table", "data-version"))
    await page.get_by_role("button", name=text, exact=True).click()
    await version_after(page, old)
    events = (await live.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)).json()["events"]
    played = next(e for e in events if e["type"] == "time_expires_played")
    assert played["public"]["card"] == chosen["card"]
    assert page.errors == []


@cache
def respond_seed(with_talk: bool) -> str:
    """A TIME_EXPIRES_SEED-like deal where, once seat 1 plays Time Expires on seat 0 (as time_expires_pending plays
    it), seat 0 holds a Talk Your Way Out of It card, or holds none."""
    from service.events import free_parking as ev
    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for

    config = rules_for("free-parking").CONFIG(seats=2)
    first = lambda hand, prefix: next(c for c in hand if c.startswith(prefix))  # noqa: E731 — as card_of reads the view
    for i in range(10_000):
        seed = hashlib.sha256(b"free-parking-api-test-%d" % i).digest()
        game = Game.new("free-parking", "g_seed_search", config, seed)
        game.play(Create(), None, 1)
        for k in range(2):
            game.play(TakeSeat(player=Player(name=f"p{k}", player_id=f"g_{k}")), None, 1)
        if not (holds("M", "P", "TE-")(game.state) and holds("M", seat=0)(game.state)):
            continue
        for seat in (1, 0):
            game.play(ev.FeedMeter(card=first(game.state.seats[seat].hand, "M")), seat, 1)
            game.play(ev.EndTurn(), seat, 1)
        if not any(c.startswith("TE-") for c in game.state.seats[1].hand):
            continue
        game.play(ev.TimeExpires(card=first(game.state.seats[1].hand, "TE-"), target=0), 1, 1)
        if any(isinstance(c, ev.TalkOut) for c in game.rules.legal_commands(game.state, 0)) == with_talk:
            return seed.hex()
    raise AssertionError("no test seed")


@pytest.mark.parametrize("with_talk", [True, False])
async def test_talk_your_way_out_is_asked_only_of_a_player_with_a_talk_card(live, browser, with_talk):
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2, "seed": respond_seed(with_talk)}, headers=ADMIN_HEADERS)
    game_id = r.json()["game_id"]
    page = await open_page(browser, live, keyed=False)  # the test's client plays Ann's seat too
    ann = await register(page, "Ann")
    await page.goto(f"/#/games/{game_id}")
    async with page.expect_navigation():  # the page reloads once seated: wait for it
        await page.click("#join")  # seat 0
    await page.wait_for_selector("#table[data-seat='0']")
    bob = (await live.post(f"/games/{game_id}/seats", json={"name": "Bob"})).json()["token"]
    await time_expires_pending(live, game_id, [ann, bob])
    prompt = page.locator("#table section.prompt[data-pending=respond]")
    await prompt.wait_for()
    text = await prompt.inner_text()
    assert "Bob played Time Expires on Ann (you)." in text, text
    talk = prompt.locator("button.cmd[data-type=talk_out]")
    if with_talk:
        assert "Talk your way out of it, or accept?" in text and await talk.count() >= 1
    else:
        assert "You hold no Talk Your Way Out of It card: accept." in text and "or accept?" not in text
        assert await talk.count() == 0
    assert await prompt.locator("button.cmd[data-type=accept]").count() == 1
    assert page.errors == []
