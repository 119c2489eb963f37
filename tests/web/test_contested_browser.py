"""The page gives the command line's verdict on receipts under a key in doubt (issue 29; service/web/windows.js).

Ann plays a solitaire to its end in the page, which keeps every receipt (v2, signed by the service's key K under the
listing head of the time). The operator then rewrites the game after her first move and serves, with the forgery, a
GET /keys that retires K just before the fork, under a new key K2: as a plain listing, or as a chain rebuilt from
scratch (it no longer holds the head her receipts name) — either way her receipts are late under it, and the
command line answers CONTESTED: either K leaked or its listing was changed after the fact. Served as the honest chain
with the retirement appended after her receipts' head, the retirement is shown back-dated: her receipts are in K's
window and the forgery is REJECTED. Before, the page knew nothing of key windows: it failed all three alike.
Opened again on the honest log, under the same listing, the page passes, as the command line does.
"""

from __future__ import annotations

import random

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from replays.receipts import load_keys, load_receipts
from replays.verify import verify
from service.api.signing import public_bytes
from service.events import keylist
from service.events.export import dumps, load
from service.events.receipt import PublicKey, key_id_of
from tests.web.test_browser import NO_OWN_KEY
from tests.web.test_evidence_browser import checks, kept, move, played_on, resign, solitaire_in_the_page

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


def served_listing(listing: dict, key_id: str, back: int, how: str) -> bytes:
    """GET /keys as the operator serves it after the rewrite: ``key_id`` retired at ``back``, a new key from then."""
    keys = msgspec.convert(listing["keys"], list[PublicKey])
    fresh = public_bytes(Ed25519PrivateKey.generate())
    new = PublicKey(key_id=key_id_of(fresh), public_key=fresh.hex(), not_before=back)
    closed = [msgspec.structs.replace(k, not_after=back) if k.key_id == key_id else k for k in keys]
    if how == "plain":  # no chain: only the windows say anything
        return msgspec.json.encode({"keys": [*closed, new]})
    if how == "rewritten":  # rebuilt from scratch, K listed a moment earlier: no entry hashes as before
        moved = [msgspec.structs.replace(k, not_before=k.not_before - 1) if k.key_id == key_id else k for k in closed]
        return msgspec.json.encode(keylist.listing_of(keylist.extended([], [*moved, new])))
    entries = msgspec.convert(listing["entries"], list[keylist.Entry])  # "back-dated": appended to the honest chain
    return msgspec.json.encode(keylist.listing_of(keylist.extended(entries, [*closed, new])))


async def reopened(page, game_id: str, state: str) -> str:
    """The game's page opened again (it reads GET /keys and the export afresh): its verdict once it is ``state``."""
    await page.reload()
    await page.locator(f"#evidence[data-state={state}]").wait_for()
    return await page.inner_text("#evidence-verdict")


@pytest.mark.parametrize(("how", "cli"), [("plain", "CONTESTED"), ("rewritten", "CONTESTED"), ("back-dated", "REJECTED")])
async def test_the_page_gives_the_command_lines_verdict_under_a_listing_served_after_a_rewrite(live, browser, how, cli):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live, init_script=NO_OWN_KEY)  # unkeyed: only receipts tell
    keep = await move(page, live, game_id, token)
    for _ in range(2):
        await move(page, live, game_id, token)
    await resign(page)
    await page.locator("#evidence[data-state=passed]").wait_for()

    honest_header, honest = load((await live.get(f"/games/{game_id}/export")).content)
    receipts = load_receipts(msgspec.json.encode((await kept(page, game_id))["receipts"]))
    key_id = next(r.key_id for r in receipts if r.version == keep)
    back = honest[keep - 1].at  # K "retired" at the last event the forgery keeps: every receipt after it is late
    assert honest[keep].at > back and all(r.listing for r in receipts)
    served = served_listing((await live.get("/keys")).json(), key_id, back, how)
    forged_header, forged = played_on(honest_header, honest, keep, random.Random(7))
    assert verify(forged_header, forged).ok  # chain, seed, commands: the forgery holds together on its own

    async def keys(route):
        await route.fulfill(status=200, content_type="application/json", body=served)

    async def export(route):
        await route.fulfill(status=200, content_type="application/x-ndjson", body=dumps(forged_header, forged))

    await page.route("**/keys", keys)
    await page.route(f"**/games/{game_id}/export", export)
    said = verify(forged_header, forged, receipts=receipts, keys=load_keys([served]))
    assert said.status == cli, said.summary()
    verdict = await reopened(page, game_id, "contested" if cli == "CONTESTED" else "failed")
    results = dict(await checks(page))
    if cli == "CONTESTED":  # the command line's words, and its receipts check neither passed nor failed
        assert verdict == f"CONTESTED: {said.contested}", (verdict, said.contested)
        assert f"either {key_id} leaked or its listing was changed after the fact" in verdict
        assert results["receipts"] == "contested" and results["signatures"] == "passed", results
        assert ("does not hold the head" in verdict) == (how == "rewritten"), verdict
    else:  # her receipts in K's window: the first one the forgery contradicts refutes it, as the command line says
        assert await page.get_attribute("#evidence", "data-version") == str(said.divergence.seq)
        assert verdict.startswith(f"Version {said.divergence.seq} disagrees: receipt: ") and "back-dated" in verdict, verdict
        assert results["receipts"] == "failed", results
    assert await page.get_attribute("#evidence", "data-state") != "passed"

    # the honest log under the same listing: her receipts all agree with it, late or not — OK, as the command line says
    await page.unroute(f"**/games/{game_id}/export", export)
    assert verify(honest_header, honest, receipts=receipts, keys=load_keys([served])).ok
    verdict = await reopened(page, game_id, "passed")
    assert verdict.startswith("This is the game you played: "), verdict
    assert page.errors == []
