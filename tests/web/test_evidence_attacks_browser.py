"""The page's "heads only move forward" check attacked by a hostile service (service/web/keeping.js, app.js).

The check holds the *receipt* a view arrives with to the highest receipt vouched for when the read was sent; the
view itself — its ``version``, its ``head``, the table drawn from it — is never held to that receipt. So a service
that wants a player to see (and act on) an earlier state than the one it already signed answers the read with that
earlier view and, in place of its genuine receipt:

- **no receipt** (``"receipt": null``): ``receive`` returns at once, nothing is compared;
- **a receipt of another game** (genuine, signed by the service): ``receive`` drops it for its ``game_id``;
- **the latest receipt the page already holds** (genuine): the receipt is not behind, though the view is.

In each, the page drew the earlier table and said nothing: no conflict, every check passed. (The existing test
serves the earlier view *with its own* receipt, the one case the check saw.) Fixed: every view must come with a
receipt of its own game, version and head, or it is flagged (``data-conflict="not-its-receipt"``).

The same review found the page's evidence lost to a reload (two signed heads of one version), to a full localStorage,
to one failed read of GET /keys, and to a malformed receipt kept as sent: each is pinned below, and fixed.
"""

from __future__ import annotations

import pytest

from tests.attack.reviewer_ports import _reviewer_ports  # noqa: F401  (fixture)
from tests.web.test_evidence_browser import api_view, kept, move, serve_view, solitaire_in_the_page

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


@pytest.mark.parametrize("disguise", ["no receipt", "another game's receipt", "the held receipt"])
async def test_an_earlier_view_is_flagged_whatever_receipt_it_comes_with(live, browser, disguise):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live)
    early = await api_view(live, game_id, token)  # genuine: the service's word at an earlier version
    for _ in range(2):
        await move(page, live, game_id, token)
    held = max((await kept(page, game_id))["receipts"], key=lambda r: r["version"])
    assert held["version"] > early["version"]
    if disguise == "no receipt":
        receipt = None
    elif disguise == "another game's receipt":
        other = (await live.post("/games", json={"kind": "solitaire"})).json()["game_id"]
        receipt = (await live.get(f"/games/{other}")).json()["receipt"]
    else:
        receipt = held
    await serve_view(page, game_id, {**early, "receipt": receipt})  # the present goes back; the receipt hides it
    await page.wait_for_selector(f'#table[data-version="{early["version"]}"]')  # the earlier table is drawn
    await page.locator("#evidence[data-state=conflict][data-conflict=not-its-receipt]").wait_for()
    assert await page.get_attribute("#evidence", "data-version") == str(early["version"])
    verdict = await page.inner_text("#evidence-verdict")
    await page.unroute(f"**/games/{game_id}")
    assert verdict.startswith(f"Version {early['version']} disagrees: ") and "not a receipt of its own" in verdict, verdict


OPERATOR_KEY = "33" * 32  # the live service signs with it: the test plays the operator who holds it


@pytest.mark.live_settings(signing_key=OPERATOR_KEY)
async def test_two_signed_heads_of_one_version_stay_flagged_after_a_reload(live, browser):  # noqa: F811
    from tests.web.test_evidence_browser import signed_by_operator

    page, game_id, token = await solitaire_in_the_page(browser, live)
    await move(page, live, game_id, token)
    view = await api_view(live, game_id, token)
    await serve_view(page, game_id, {**view, "receipt": signed_by_operator(view["receipt"], head="ab" * 32)})
    await page.locator("#evidence[data-state=conflict][data-conflict=two-heads]").wait_for()
    await page.unroute(f"**/games/{game_id}")
    await page.reload()  # both receipts are still kept in this browser: the proof is there
    await page.wait_for_selector("#table .grid .cell")
    await page.locator("#evidence[data-signatures=ok]").wait_for()  # what was kept has been vouched for again
    await page.locator("#evidence[data-conflict=two-heads]").wait_for()
    both = [r for r in (await kept(page, game_id))["receipts"] if r["version"] == view["version"]]
    assert len({r["head"] for r in both}) == 2
    assert await page.get_attribute("#evidence", "data-conflict") == "two-heads", await page.inner_text("#evidence-verdict")


FILL = """(verified) => {   // earlier games' evidence, as a player of a dozen long Monopoly games has kept it, up to the quota
  const receipt = { game_id: "g_0123456789abcdef", version: 1, head: "ab".repeat(32), at: 1796161459670,
                    key_id: "0123456789abcdef", sig: "cd".repeat(64) };
  // `verified`: the time the page checked that game's export and it passed (storage.js `markVerified`)
  const record = (n) => JSON.stringify({ game_id: `g_old${n}`, seat: 0, client_seed: null,
                                         ...(verified ? { verified: 1796161459670 + n } : {}),
                                         receipts: Array.from({ length: n }, (_, v) => ({ ...receipt, version: v })) });
  // and the last bytes, so that not even one more receipt fits unless the page makes room: what a record of one
  // receipt could not fill would otherwise stay free, and a receipt fit in it in one CI run out of many
  const padded = (k) => JSON.stringify({ ...JSON.parse(record(0)), pad: "x".repeat(k) });
  const written = {};   // key → its `verified` (null: not checked), as FILL wrote it
  let n = 0;
  for (const [size, write] of [[1200, record], [4096, padded]]) {
    for (let k = size; k >= 1; k = Math.floor(k / 2)) {
      for (;;) {
        const key = `fp.evidence.g_old${n}`, text = write(k);
        try { localStorage.setItem(key, text); } catch { break; }
        written[key] = JSON.parse(text).verified ?? null;
        n++;
      }
    }
  }
  // then what even the smallest record could not fill, with keys that are no record (never made room with)
  let f = 0;
  for (let k = 256; k >= 1; k = Math.floor(k / 2)) {
    for (;;) {
      try { localStorage.setItem(`f${f++}`, "x".repeat(k)); } catch { break; }
    }
  }
  return written;
}"""
OLD = "() => Object.keys(localStorage).filter(k => k.startsWith('fp.evidence.g_old')).length"
VERIFIED = """() => Object.fromEntries(Object.keys(localStorage).filter(k => k.startsWith('fp.evidence.g_old'))
                                     .map(k => [k, JSON.parse(localStorage.getItem(k)).verified]))"""


async def test_a_new_games_receipts_are_kept_when_earlier_games_filled_the_storage(live, browser):  # noqa: F811
    """Games that are over and whose export the page checked and passed make room, the oldest check first."""
    page, game_id, token = await solitaire_in_the_page(browser, live)
    # counted from what FILL wrote, not from a count taken after it: the table is drawn before the stream's receipts
    # arrive (measured: 1 receipt kept, 3 a moment later), and one arriving after FILL makes room before the move —
    # the move's receipt then fit in that room and a count taken after FILL saw nothing evicted (CI, twice)
    written = await page.evaluate(FILL, True)
    assert len(written) > 10
    version = await move(page, live, game_id, token)
    await page.wait_for_function(
        "([id, v]) => (JSON.parse(localStorage.getItem('fp.evidence.' + id)) || {receipts: []}).receipts.some(r => r.version === v)",
        arg=[game_id, version])
    record = await kept(page, game_id)
    versions = {r["version"] for r in (record or {"receipts": []})["receipts"]}
    assert version in versions, (version, sorted(versions), page.errors[:2])
    assert await page.get_attribute("#evidence", "data-storage") == "kept"
    left = await page.evaluate(VERIFIED)
    assert 0 < len(left) < len(written)  # checked games made room, only as much as was needed
    gone = set(written) - set(left)
    assert max(written[k] for k in gone) <= min(left.values()), "the oldest checks make room first"
    assert page.errors == []


async def test_a_full_storage_of_games_not_yet_checked_is_said_plainly(live, browser):  # noqa: F811
    """Evidence of games not checked (still running, or failed: a refutation) is never evicted: the page says it keeps
    this game's receipts only while it is open, and still checks them."""
    page, game_id, token = await solitaire_in_the_page(browser, live)
    before = len(await page.evaluate(FILL, False))
    assert before > 10
    version = await move(page, live, game_id, token, stored=False)
    await page.locator("#evidence[data-storage=full]").wait_for()
    assert "storage is full" in await page.inner_text("#evidence-storage")
    assert await page.evaluate(OLD) == before  # nothing of theirs was thrown away
    assert int(await page.get_attribute("#table", "data-version")) == version
    assert await page.get_attribute("#evidence", "data-conflict") is None
    assert page.errors == []


async def test_one_failed_read_of_the_keys_does_not_leave_the_signature_check_off(live, browser):  # noqa: F811
    from tests.web.test_browser import open_page, register

    page = await open_page(browser, live)
    failed = []

    async def blip(route):  # the first read of the keys is lost on the way (a flaky connection), later ones answer
        if not failed:
            failed.append(route.request.url)
            await route.abort()
        else:
            await route.continue_()

    await page.route("**/keys", blip)
    token = await register(page, "Ann")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    game_id = page.url.rsplit("/", 1)[-1]
    for _ in range(2):
        await move(page, live, game_id, token)
    assert failed, "the blip never happened"
    # the keys read again, and every receipt kept meanwhile checked: signatures ok, none left unchecked
    await page.wait_for_function("""id => {
      const box = document.querySelector('#evidence'), text = document.querySelector('#evidence-signatures').textContent;
      const kept = JSON.parse(localStorage.getItem('fp.evidence.' + id)).receipts.length;
      return box.dataset.signatures === 'ok' && parseInt(text, 10) >= kept;
    }""", arg=game_id)
    text = await page.inner_text("#evidence-signatures")
    assert await page.get_attribute("#evidence", "data-signatures") == "ok", text


async def test_a_malformed_receipt_is_flagged_and_not_kept(live, browser):  # noqa: F811
    """The page keeps only receipts of the shape the service signs (storage.js `malformed`): one of another shape
    would make ``python -m replays verify --receipts`` refuse the whole file, hiding a genuine refutation beside it."""
    from replays.receipts import load_receipts
    from tests.web.test_evidence_browser import saved

    page, game_id, token = await solitaire_in_the_page(browser, live)
    await move(page, live, game_id, token)
    view = await api_view(live, game_id, token)
    before = len((await kept(page, game_id))["receipts"])
    await serve_view(page, game_id, {**view, "receipt": {**view["receipt"], "head": view["receipt"]["head"].upper()}})
    await page.locator("#evidence[data-state=conflict][data-conflict=not-its-receipt]").wait_for()
    assert int(await page.get_attribute("#evidence", "data-malformed")) >= 1
    assert "malformed" in await page.inner_text("#evidence-signatures")
    assert "malformed" in await page.inner_text("#evidence-verdict")
    await page.unroute(f"**/games/{game_id}")
    record = await kept(page, game_id)
    assert len(record["receipts"]) == before and all(r["head"] == r["head"].lower() for r in record["receipts"])
    # one kept by an earlier page as the service sent it is left out of what the page checks and offers for download
    await page.evaluate("""id => { const key = 'fp.evidence.' + id, record = JSON.parse(localStorage.getItem(key));
                                   record.receipts.push({...record.receipts[0], version: "7", sig: "not hex"});
                                   localStorage.setItem(key, JSON.stringify(record)); }""", game_id)
    assert len(load_receipts(await saved(page, "#evidence-receipts"))) == before
    assert page.errors == []
