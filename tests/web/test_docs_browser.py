"""``/docs`` renders the API's operations with no internet: Swagger UI's files come from the service itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from service.web.screenshots import CHROMIUM
from tests.api.helpers import assert_error

if not Path(CHROMIUM).exists() and not os.environ.get("FREE_PARKING_CI"):
    pytest.skip("no /usr/bin/chromium (apt-get install chromium; `make test` installs it)", allow_module_level=True)

pytestmark = [pytest.mark.parametrize("live_kind", ["embedded"]), pytest.mark.shared_live]


async def test_the_docs_page_renders_every_operation_offline(live, browser):
    outside: list[str] = []
    page = await browser.new_page(base_url=str(live.base_url))

    async def offline(route):  # the machine has no internet: any request that leaves it fails
        if route.request.url.startswith(str(live.base_url)):
            await route.continue_()
        else:
            outside.append(route.request.url)
            await route.abort()

    await page.route("**/*", offline)
    await page.goto("/docs")
    await page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = await page.locator(".opblock-summary-path").all_inner_texts()
    assert outside == []
    assert any("/games/{game_id}/commands" in p for p in paths) and any("/keys" in p for p in paths), paths


async def test_the_docs_assets_are_a_fixed_list(live):
    assert (await live.get("/docs/assets/swagger-ui-bundle.js")).status_code == 200
    for name in ("index.html", "swagger-ui.js.map", "..%2f__init__.py", "%00"):
        assert_error(await live.get(f"/docs/assets/{name}"), 404, "not_found")
    assert (await live.get("/docs/oauth2-redirect.html")).status_code == 404  # sanic-ext's, which fetched a CDN
