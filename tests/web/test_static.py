"""The page's files are served at ``/`` and ``/web/...`` without touching the API: its 404s stay JSON errors,
and the static routes stay out of the OpenAPI document (so schemathesis never sees them)."""

from __future__ import annotations

import pytest

from tests.api.helpers import assert_error

pytestmark = pytest.mark.parametrize("store_kind", ["embedded"])


async def test_the_page_and_its_modules_are_served(api):
    r = await api.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/web/app.js">' in r.text
    for path in (
        "/web/app.js",
        "/web/api.js",
        "/web/tables/index.js",
        "/web/tables/free-parking.js",
        "/web/tables/solitaire.js",
        "/web/tables/monopoly.js",
    ):
        r = await api.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"].split(";")[0] in (
            "text/javascript",
            "application/javascript",
        ), path
    assert (
        (await api.get("/web/style.css")).headers["content-type"].startswith("text/css")
    )


async def test_api_404s_stay_json_and_static_routes_stay_out_of_openapi(api):
    assert_error(await api.get("/web/no-such-file.js"), 404, "not_found")
    assert_error(await api.get("/web/../api/app.py"), 404, "not_found")
    assert_error(await api.get("/no-such-route"), 404, "not_found")
    assert_error(await api.get("/games/g_nope"), 404, "not_found")
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert "/" not in paths and not any(p.startswith("/web") for p in paths)
    assert (await api.get("/docs")).status_code == 200
