"""The page's signing (service/web/signing.js) against the known-answer vectors of docs/signed-commands.md, in the
browser: its canonical form of each command and its ``commandBytes`` give the doc's bytes, and Chromium's WebCrypto
checks the doc's signature under the doc's key — the page signs what the service and ``replays verify`` check."""

from __future__ import annotations

import pytest

from tests.events.test_command_vectors import PUBLIC, vectors
from tests.web.test_browser import open_page  # noqa: F401  (and the browser fixture's skip)

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]

CHECK = """
async ([v, publicKey]) => {
  const { commandBytes } = await import("/web/signing.js");
  const { canonical, unhex } = await import("/web/evidence.js");
  const command = JSON.parse(v.signed.slice(v.signed.indexOf("\\n") + 1)).command;
  const bytes = commandBytes(v.game_id, v.expected_version, v.command_id, canonical(command));
  const key = await crypto.subtle.importKey("raw", unhex(publicKey), { name: "Ed25519" }, false, ["verify"]);
  return {
    text: new TextDecoder().decode(bytes),
    verifies: await crypto.subtle.verify({ name: "Ed25519" }, key, unhex(v.sig), bytes),
  };
}
"""


async def test_the_page_builds_the_docs_bytes_and_its_webcrypto_checks_the_docs_signatures(live, browser):  # noqa: F811
    page = await open_page(browser, live)
    for vector in vectors():
        got = await page.evaluate(CHECK, [vector, PUBLIC])
        assert got == {"text": vector["signed"], "verifies": True}, vector["kind"]
    assert page.errors == []
