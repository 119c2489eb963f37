"""The evidence a player keeps, checked in their own page (service/web/evidence.js, docs/fairness.md): Playwright
driving Debian's Chromium against the ``live`` service process.

A solitaire played in the browser to its end (a few moves, then resign: the quickest honest game) shows the verdict,
and the receipts it offers for download are what ``replays.verify`` accepts; the same game fed a history rebuilt after
the reveal names the first version a kept receipt disagrees with; a browser without Ed25519 says the signature check
could not run. The pure checks also run on a real card game's export, whose secrets they check against the seed.
"""

from __future__ import annotations

import asyncio
import json
import random
import time

import msgspec
import pytest

from replays.receipts import load_keys, load_receipts
from replays.verify import verify
from service.events.export import dumps, load
from tests.api.conftest import ADMIN_HEADERS, bearer

# the ``browser`` fixture and page helpers; where test_browser skips (no Chromium), this module skips with it
from tests.web.test_browser import NO_OWN_KEY, drawn, open_page, record_draws, register, version_after  # noqa: F401

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

NO_ED25519 = NO_OWN_KEY + """
(() => {
  const importKey = SubtleCrypto.prototype.importKey;
  SubtleCrypto.prototype.importKey = function (format, key, algorithm, ...rest) {
    const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
    if (String(name).toLowerCase() === "ed25519") {
      return Promise.reject(new DOMException("Algorithm: Unrecognized name", "NotSupportedError"));
    }
    return importKey.call(this, format, key, algorithm, ...rest);
  };
})();
"""


def played_on(header, envelopes, keep: int, rnd: random.Random):
    """tests/replays/forge.py's ``played_on`` for a solitaire (which has no random bot): the first ``keep`` events
    kept, then a few moves of the greedy bot and a resignation, decided by the project's own rules and sealed onto
    the same chain: a log whose chain, seed and every re-decided command hold, of a game that never was."""
    from service.bots import bot, next_move
    from service.rules.engine import Game, export_header, rules_for

    rules = rules_for(header.kind)
    config = msgspec.json.decode(header.config, type=rules.CONFIG)
    game = Game.new(header.kind, header.game_id, config, bytes.fromhex(header.seed), header.rules_version)
    game.fold(envelopes[:keep])
    out, at = list(envelopes[:keep]), envelopes[keep - 1].at
    players = [bot(header.kind, "greedy")]
    for n in range(1000):
        if rules.status_of(game.state) == "finished":
            break
        found = next_move(rules, game.state, players, rnd) if n < 5 else None
        seat, command = found if found is not None else (0, rules.legal_commands(game.state, 0)[-1])  # resign
        at += 1000
        out += game.play(command, seat, at)
    return export_header(game, with_seed=True), out


async def solitaire_in_the_page(browser, live, *, init_script: str | None = None):  # noqa: F811
    """Ann registers and creates a solitaire, taking its seat: the page, the game's id and her token."""
    page = await open_page(browser, live)
    if init_script:
        await page.context.add_init_script(init_script)
        await page.reload()
    token = await register(page, "Ann")
    await page.select_option("#create-form select[name=kind]", "solitaire")
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table .grid .cell")
    game_id = page.url.rsplit("/", 1)[-1]
    await receipts_kept(page, game_id, *range(1, int(await page.get_attribute("#table", "data-version")) + 1))
    return page, game_id, token


async def receipts_kept(page, game_id: str, *versions: int) -> None:
    """Wait until the page keeps a receipt of each of ``versions``: the table is drawn before the receipts streamed or
    answered with it are kept (under load, the receipt of version 1 only, the rest a moment later), and a test that
    counts or fills the storage before they arrive counts against the page's own work still under way."""
    await page.wait_for_function(
        """([id, versions]) => { const r = JSON.parse(localStorage.getItem('fp.evidence.' + id));
                                 const kept = new Set(((r && r.receipts) || []).map((x) => x.version));
                                 return versions.every((v) => kept.has(v)); }""",
        arg=[game_id, list(versions)])


async def api_view(live, game_id: str, token: str) -> dict:
    r = await live.get(f"/games/{game_id}", headers=bearer(token))
    assert r.status_code == 200, r.text
    return r.json()


async def move(page, live, game_id: str, token: str, *, stored: bool = True) -> int:
    """One legal move clicked on the page (a card, then its gap), else a redeal; the version it reaches, once its
    receipt is in the storage (``stored=False``: a full storage, where the page keeps it in memory only)."""
    v = await api_view(live, game_id, token)
    moves = [c for c in v["legal"] if c["type"] == "move"]
    if moves:
        m = moves[0]
        await page.click(f'.cell.card[data-card="{m["card"]}"]')
        await page.click(f'.cell.target[data-row="{m["to"]["row"]}"][data-slot="{m["to"]["slot"]}"]')
    else:
        await page.click("button.cmd[data-type=redeal]")
    version = await version_after(page, v["version"])
    if stored:
        await receipts_kept(page, game_id, version)
    return version


async def resign(page) -> None:
    old = int(await page.get_attribute("#table", "data-version"))
    await page.click("button.cmd[data-type=resign]")
    await page.click("#confirm-yes")  # the page asks before resigning
    await version_after(page, old)


def kept(page, game_id: str):
    return page.evaluate("id => JSON.parse(localStorage.getItem('fp.evidence.' + id))", game_id)


def checks(page):
    """Each check the verdict lists, with its result: [[id, passed | failed | not-run | python], ...]."""
    return page.eval_on_selector_all("#evidence-checks li", "ls => ls.map(l => [l.dataset.check, l.dataset.result])")


async def saved(page, selector: str) -> bytes:
    async with page.expect_download() as info:
        await page.click(selector)
    download = await info.value
    path = await download.path()
    with open(path, "rb") as f:
        return f.read()


async def test_an_honest_game_played_in_the_page_is_the_game_you_played(live, browser):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live)
    record = await kept(page, game_id)
    assert record["seat"] == 0 and len(record["client_seed"]) == 64 and int(record["client_seed"], 16) >= 0
    for _ in range(2):
        await move(page, live, game_id, token)
    await resign(page)
    evidence = page.locator("#evidence[data-state=passed]")
    await evidence.wait_for()
    verdict = await page.inner_text("#evidence-verdict")
    assert verdict.startswith("This is the game you played: ") and verdict.split(": ")[1].split()[0].isdigit(), verdict
    results = await checks(page)
    assert results == [["chain", "passed"], ["commitment", "passed"], ["seeding", "passed"], ["secrets", "passed"],
                       ["signatures", "passed"], ["receipts", "passed"], ["forward", "passed"], ["moves", "passed"],
                       ["redecide", "python"]]
    assert "python -m replays verify" in await page.inner_text("#evidence-checks")
    assert await page.get_attribute("#evidence", "data-signatures") == "ok"
    assert "Every move in your name is one you signed (3 moves)." in verdict, verdict  # two moves and the resignation
    assert await page.get_attribute("#evidence", "data-keyed") == "yes"
    assert f"--player-key 0:{record['public_key']}" in await page.inner_text("#evidence-command")

    # the page's own client seed is the one seat 0's seat_taken records, and the log verifies in Python
    text = (await live.get(f"/games/{game_id}/export")).content
    header, envelopes = load(text)
    seat_taken = msgspec.json.decode(next(e for e in envelopes if e.type == "seat_taken").public)
    record = await kept(page, game_id)
    assert seat_taken["client_seed"] == record["client_seed"] and seat_taken["client_seed_from"] == "player"
    assert seat_taken["player"]["public_key"] == record["public_key"]  # the seat was keyed with the page's own key
    signed = [e.sig for e in envelopes if e.actor == "seat:0" and e.command_id is not None]
    assert len(signed) == 3 and set(signed) == set(record["signed"])  # every move signed by the page, and kept
    assert "every move in a keyed player's name is one they signed (3 commands of Ann (seat 0))" in verify(header, envelopes).signed
    game_seed = verify(header, envelopes).game_seed
    assert game_seed and game_seed in await page.inner_text("#evidence-checks")  # recomputed in JS, as Python does

    # the downloads are what `python -m replays verify LOG --receipts FILE --key KEYS` takes
    receipts = load_receipts(await saved(page, "#evidence-receipts"))
    keys = load_keys([await saved(page, "#evidence-keys")])
    assert len(receipts) == len(record["receipts"]) >= 4
    assert {r.version for r in receipts} >= {1, header.version}
    verdict = verify(header, envelopes, receipts=receipts, keys=keys, client_seeds={0: record["client_seed"]})
    assert verdict.ok, verdict.summary()
    assert verdict.receipts.checked == len(receipts) + 1 and verdict.receipts.signatures  # + the export's own
    assert page.errors == []


async def test_a_history_rebuilt_after_the_reveal_is_refused_at_a_receipt_it_contradicts(live, browser):  # noqa: F811
    """On an unkeyed seat, where only the receipts can give the forgery away (a keyed one: the test below)."""
    page, game_id, token = await solitaire_in_the_page(browser, live, init_script=NO_OWN_KEY)
    keep = await move(page, live, game_id, token)  # the forger keeps the game up to this first move
    await move(page, live, game_id, token)
    forged: dict[str, object] = {}

    async def forge(route):
        honest = await route.fetch()
        header, envelopes = load(await honest.body())
        forged_header, forged_log = played_on(header, envelopes, keep, random.Random(7))  # chain, seed, commands hold
        assert verify(forged_header, forged_log).ok
        fork = next(i for i, (a, b) in enumerate(zip(forged_log, envelopes)) if a.hash != b.hash) + 1
        forged["fork"] = fork
        await route.fulfill(status=200, content_type="application/x-ndjson", body=dumps(forged_header, forged_log))

    await page.route(f"**/games/{game_id}/export", forge)
    await resign(page)
    await page.locator("#evidence[data-state=failed]").wait_for()
    fork = forged["fork"]
    # the first version a kept receipt contradicts, as the page's own store says (a receipt streamed late re-checks)
    handle = await page.wait_for_function(
        """([id, fork]) => {
          const kept = JSON.parse(localStorage.getItem('fp.evidence.' + id)).receipts;
          const versions = kept.map(r => r.version).filter(v => v >= fork);
          const el = document.querySelector('#evidence'), shown = Number(el.dataset.version);
          return versions.length && el.dataset.state === 'failed' && shown === Math.min(...versions) && shown;
        }""",
        arg=[game_id, fork],
    )
    first = await handle.json_value()
    assert keep < fork <= first
    verdict = await page.inner_text("#evidence-verdict")
    assert verdict.startswith(f"Version {first} disagrees: receipt: "), verdict
    results = dict(await checks(page))
    # the forgery holds together on its own: only the receipts give it away
    assert results == {"chain": "passed", "commitment": "passed", "seeding": "passed", "secrets": "passed",
                       "signatures": "passed", "receipts": "failed", "forward": "passed", "moves": "not-run",
                       "redecide": "python"}
    assert page.errors == []


async def test_a_history_rebuilt_in_a_keyed_players_name_is_refused_at_its_first_move_they_did_not_sign(live, browser):  # noqa: F811
    """The same forgery on a keyed seat: its moves are the operator's, unsigned by the page's key — refused by Python
    and by the page at the first of them, whatever the receipts say."""
    page, game_id, token = await solitaire_in_the_page(browser, live)
    keep = await move(page, live, game_id, token)
    await move(page, live, game_id, token)
    forged: dict[str, object] = {}

    async def forge(route):
        honest = await route.fetch()
        header, envelopes = load(await honest.body())
        forged_header, forged_log = played_on(header, envelopes, keep, random.Random(7))
        verdict = verify(forged_header, forged_log)
        forged["python"] = verdict.divergence
        await route.fulfill(status=200, content_type="application/x-ndjson", body=dumps(forged_header, forged_log))

    await page.route(f"**/games/{game_id}/export", forge)
    await resign(page)
    await page.locator("#evidence-checks li[data-check=moves][data-result=failed]").wait_for()
    said = forged["python"]
    assert said is not None and said.seq == keep + 1 and "did not sign" in said.what, said
    moves = await page.inner_text("#evidence-checks li[data-check=moves]")
    assert "your moves" in moves, moves
    assert await page.get_attribute("#evidence", "data-version") == str(keep + 1)  # the first forged move, as Python says
    assert page.errors == []


async def test_a_browser_without_ed25519_says_the_signature_check_could_not_run(live, browser):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live, init_script=NO_ED25519)
    tried = "crypto.subtle.importKey('raw', new Uint8Array(32), {name: 'Ed25519'}, false, ['verify'])"
    assert await page.evaluate(f"{tried}.then(() => 'imported', e => e.name)") == "NotSupportedError"
    await page.locator("#evidence[data-signatures=unavailable]").wait_for()
    said = await page.inner_text("#evidence-signatures")
    assert "The signature check could not run: this browser's WebCrypto has no Ed25519" in said, said
    await move(page, live, game_id, token)
    await resign(page)
    await page.locator("#evidence[data-state=passed]").wait_for()
    verdict = await page.inner_text("#evidence-verdict")
    assert verdict.startswith("This is the game you played: ") and "Not run: receipt signatures" in verdict, verdict
    assert await page.get_attribute("#evidence-checks li[data-check=signatures]", "data-result") == "not-run"
    assert await page.get_attribute("#evidence-checks li[data-check=receipts]", "data-result") == "passed"
    assert await page.get_attribute("#evidence-checks li[data-check=moves]", "data-result") == "not-run"
    assert "you played unkeyed: this browser cannot keep an Ed25519 key (NotSupportedError)" in await page.inner_text("#evidence-checks")
    assert await page.get_attribute("#evidence", "data-keyed") == "no"
    assert "you play unkeyed (your moves are the service's word): this browser cannot keep" in await page.inner_text("#evidence-status")
    assert "--player-key" not in await page.inner_text("#evidence-command")
    assert page.errors == []


async def test_the_pages_checks_on_a_card_games_export_check_every_secret(live, browser):  # noqa: F811
    r = await live.post("/games", json={"kind": "free-parking", "seats": 2})
    game_id = r.json()["game_id"]
    for _ in range(2):
        assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    deadline = time.monotonic() + 30
    while (await live.get(f"/games/{game_id}")).json()["status"] != "finished":
        assert time.monotonic() < deadline, "the bots did not finish"
        await asyncio.sleep(0.2)
    text = (await live.get(f"/games/{game_id}/export")).text
    header, envelopes = load(text.encode())
    python = verify(header, envelopes)
    assert python.ok and python.secrets_checked > 0
    page = await open_page(browser, live)
    run = """async ([text]) => {
      const ev = await import('/web/evidence.js');
      const keys = await ev.importKeys(await (await fetch('/keys')).json());
      return ev.verifyExport(text, {keys});
    }"""
    report = await page.evaluate(run, [text])
    assert report["ok"], report["problems"]
    counts = {c["id"]: c["count"] for c in report["checks"]}
    assert counts["chain"] == len(envelopes) and counts["secrets"] == python.secrets_checked
    assert counts["seeding"] == 2 and report["gameSeed"] == python.game_seed  # both bots' seeds derived: the server's

    # a secret changed (the chain covers its digest, not it): the digest check names its seq
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if i and '"secret":{' in line)
    altered = [line.replace('"secret":{', '"secret":{"x":1,', 1) if i == n else line for i, line in enumerate(lines)]
    report = await page.evaluate(run, ["\n".join(altered)])
    assert [(p["version"], p["what"]) for p in report["problems"]] == [(n, "secret (does not match its digest)")]
    # a public member changed: the hash recomputed from the stored bytes no longer matches
    m = len(lines) // 2
    env = json.loads(lines[m])
    altered = [line.replace('"public":{', '"public":{"a":0,', 1) if i == m else line for i, line in enumerate(lines)]
    report = await page.evaluate(run, ["\n".join(altered)])
    assert report["problems"][0]["version"] == env["seq"] and report["problems"][0]["what"].startswith("hash")
    assert page.errors == []


async def test_the_pages_checks_agree_with_python_on_every_golden_log(live, browser):  # noqa: F811
    """Logs of every kind, rules version and seeding, written before and since client seeds: the chain recomputed in
    JS from the bytes as stored, and a combined game's seed recomputed as Python does."""
    from pathlib import Path

    page = await open_page(browser, live)
    for path in sorted((Path(__file__).parents[2] / "replays" / "golden").glob("*.ndjson")):
        text = path.read_text()
        header, envelopes = load(text.encode())
        python = verify(header, envelopes)
        report = await page.evaluate("async ([text]) => (await import('/web/evidence.js')).verifyExport(text)", [text])
        assert report["ok"], (path.name, report["problems"][:1])
        counts = {c["id"]: c["count"] for c in report["checks"]}
        assert counts["chain"] == len(envelopes) and counts["secrets"] == python.secrets_checked, path.name
        assert report["gameSeed"] == python.game_seed, path.name
    assert page.errors == []


OPERATOR_KEY = "33" * 32  # the live service signs with it: the test plays the operator who holds it


def signed_by_operator(receipt: dict, **changes) -> dict:
    """``receipt`` with ``changes``, signed as the service signs: what only the key's holder can make."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.events.receipt import Signed, signed_bytes

    fields = {k: receipt[k] for k in ("game_id", "version", "head", "at", "key_id")} | changes
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(OPERATOR_KEY))
    return fields | {"sig": key.sign(signed_bytes(msgspec.convert(fields, Signed))).hex()}


async def serve_view(page, game_id: str, view: dict) -> None:
    """Every GET /games/{id} the page sends answered with ``view``, as a dishonest service would."""
    async def answer(route):
        await route.fulfill(status=200, content_type="application/json", body=json.dumps(view))

    await page.route(f"**/games/{game_id}", answer)


async def test_a_view_answered_behind_a_receipt_the_page_held_is_flagged_naming_both_versions(live, browser):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live)
    early = await api_view(live, game_id, token)  # genuine, signed: the service's word at an earlier version
    for _ in range(2):
        await move(page, live, game_id, token)
    held = max((await kept(page, game_id))["receipts"], key=lambda r: r["version"])
    assert held["version"] > early["version"]
    await serve_view(page, game_id, early)  # the service's present goes back: history it signed is lost or rewritten
    await page.locator("#evidence[data-state=conflict][data-conflict=backwards]").wait_for()
    assert await page.get_attribute("#evidence", "data-version") == str(held["version"])
    verdict = await page.inner_text("#evidence-verdict")
    assert verdict.startswith(f"Version {held['version']} disagrees: ") and f"at version {early['version']}" in verdict, verdict
    assert held["head"][:12] in verdict and early["receipt"]["head"][:12] in verdict, verdict
    await page.unroute(f"**/games/{game_id}")
    await page.wait_for_selector(f'#table[data-version="{held["version"]}"]')  # the honest present, polled again
    await resign(page)  # and the verdict at the end says so too, though the export agrees with every receipt
    await page.locator("#evidence[data-state=failed]").wait_for()
    assert dict(await checks(page))["forward"] == "failed" and dict(await checks(page))["receipts"] == "passed"
    assert page.errors == []


async def test_an_honest_command_answer_that_arrives_behind_the_stream_is_not_flagged(live, browser):  # noqa: F811
    """A command's answer names its own batch; moves after it can reach the page first (here a second move sent
    through the API while the answer is held back): an earlier version after a later one, and nothing went back. The
    seat is unkeyed (NO_OWN_KEY), so that the test's own client may move in it too."""
    page, game_id, token = await solitaire_in_the_page(browser, live, init_script=NO_OWN_KEY)
    before = await api_view(live, game_id, token)
    held: asyncio.Future = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def hold(route):
        response = await route.fetch()
        held.set_result(await response.json())
        await release.wait()
        await route.fulfill(response=response)

    await page.route(f"**/games/{game_id}/commands", hold)
    m = next(c for c in before["legal"] if c["type"] == "move")
    await page.click(f'.cell.card[data-card="{m["card"]}"]')
    await page.click(f'.cell.target[data-row="{m["to"]["row"]}"][data-slot="{m["to"]["slot"]}"]')
    answer = await held
    later = next(c for c in answer["view"]["legal"] if c["type"] in ("move", "redeal"))
    r = await live.post(f"/games/{game_id}/commands", json={**later, "expected_version": answer["version"]}, headers=bearer(token))
    assert r.status_code == 200, r.text
    newest = r.json()["version"]
    await page.wait_for_selector(f'#table[data-version="{newest}"]')  # streamed and viewed before the answer comes
    await record_draws(page)
    release.set()
    await drawn(page, answer["view"]["version"])  # the held answer, drawn (a poll may replace it within a frame)
    await page.unroute(f"**/games/{game_id}/commands")
    await page.wait_for_selector(f'#table[data-version="{newest}"]')  # the next poll
    await resign(page)
    await page.locator("#evidence[data-state=passed]").wait_for()
    assert await page.get_attribute("#evidence", "data-conflict") is None  # never flagged, not even for a moment
    assert dict(await checks(page))["forward"] == "passed"
    assert int(await page.get_attribute("#evidence", "data-reads")) >= 3
    assert page.errors == []


@pytest.mark.live_settings(signing_key=OPERATOR_KEY)
async def test_two_signed_receipts_of_one_version_that_disagree_are_flagged_as_they_arrive(live, browser):  # noqa: F811
    page, game_id, token = await solitaire_in_the_page(browser, live)
    await move(page, live, game_id, token)
    view = await api_view(live, game_id, token)
    other = "ab" * 32
    # a receipt nobody signed is kept and counts for nothing: it does not check out, and it is no proof of a conflict
    await serve_view(page, game_id, {**view, "receipt": {**view["receipt"], "head": other}})
    await page.locator("#evidence[data-signatures=bad]").wait_for()
    assert await page.get_attribute("#evidence", "data-conflict") is None
    await page.unroute(f"**/games/{game_id}")
    # the operator signs a second history for the same version: the two receipts are the proof, at once
    await serve_view(page, game_id, {**view, "receipt": signed_by_operator(view["receipt"], head=other)})
    await page.locator("#evidence[data-state=conflict][data-conflict=two-heads]").wait_for()
    verdict = await page.inner_text("#evidence-verdict")
    assert verdict.startswith(f"Version {view['version']} disagrees: two receipts of it name heads "), verdict
    assert view["receipt"]["head"][:12] in verdict and other[:12] in verdict, verdict
    assert page.errors == []


async def test_a_later_receipt_whose_head_the_chain_does_not_extend_is_refused_at_the_end(live, browser):  # noqa: F811
    """Heads moving forward means each later head extends the earlier ones: the end's check of every receipt against
    the one chain says so, since a log has one hash at each version (a later head off the chain is refused there)."""
    from pathlib import Path

    path = sorted((Path(__file__).parents[2] / "replays" / "golden").glob("*.ndjson"))[0]
    text = path.read_text()
    _, envelopes = load(text.encode())
    receipt = lambda e, head=None: {"game_id": e.game_id, "version": e.seq, "head": head or e.hash, "at": e.at,  # noqa: E731
                                    "key_id": "0" * 16, "sig": "0" * 128}
    early, late = envelopes[1], envelopes[-2]
    receipts = [receipt(early), receipt(late, head="cd" * 32)]  # a higher version, on another chain
    page = await open_page(browser, live)
    report = await page.evaluate(
        "async ([text, receipts]) => (await import('/web/evidence.js')).verifyExport(text, {receipts})", [text, receipts])
    assert [(p["version"], p["what"]) for p in report["problems"]] == [(late.seq, "receipt: head")]
    assert page.errors == []


ANN_SEED = "a7" * 32
VERIFY_IN_PAGE = """async ([text, clientSeed, seat]) => (await import('/web/evidence.js')).verifyExport(text, {clientSeed, seat})"""


async def test_the_pages_seeding_check_refuses_what_replays_verify_refuses(live, browser):  # noqa: F811
    """Same checks, same verdict (issue 29): a log whose seeding was taken out while the seats' client seeds are
    recorded, and an admin-fixed game Ann joined with her own client seed — each refused by ``replays verify``
    (replays/seeds.py: check_legacy, check_claims) and, before, passed by the page's end-of-game check."""
    from pathlib import Path

    from service.events.envelope import canonical
    from tests.replays.forge import rechain

    # 1. a combined game's seeding taken out of game_created (and its command), the chain sealed again
    text = (Path(__file__).parents[2] / "replays" / "golden" / "golden-fp-v2-3-combined-seeds.ndjson").read_text()
    header, envelopes = load(text.encode())
    created = envelopes[0]
    public = {k: v for k, v in msgspec.json.decode(created.public).items() if k != "seeding"}
    command = {k: v for k, v in msgspec.json.decode(created.command).items() if k != "seeding"}
    envelopes[0] = msgspec.structs.replace(created, public=msgspec.Raw(canonical(public)), command=msgspec.Raw(canonical(command)))
    stripped = rechain(msgspec.structs.replace(header, seeding=None), envelopes)
    # 2. an admin-fixed game Ann joined with her own client seed
    game_id = (await live.post("/games", json={"kind": "free-parking", "seats": 2, "seed": "5e" * 32},
                               headers=ADMIN_HEADERS)).json()["game_id"]  # fmt: skip
    assert (await live.post(f"/games/{game_id}/seats", json={"name": "Ann", "client_seed": ANN_SEED})).status_code == 201
    assert (await live.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    fixed = load((await live.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)).content)

    page = await open_page(browser, live)
    for (h, envs), claims in ((stripped, None), (fixed, {0: ANN_SEED})):
        python = verify(h, envs, client_seeds=claims)
        assert not python.ok, python.summary()
        seed, seat = (claims[0], 0) if claims else (None, None)
        report = await page.evaluate(VERIFY_IN_PAGE, [dumps(h, envs).decode(), seed, seat])
        assert not report["ok"], f"the page passed what replays verify refuses: {python.summary()}"
        assert any("seed" in p["what"] for p in report["problems"]), report["problems"][:2]
    assert page.errors == []
