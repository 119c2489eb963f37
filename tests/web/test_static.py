"""The page's files are served at ``/`` and ``/web/...`` without touching the API: its 404s stay JSON errors,
and the static routes stay out of the OpenAPI document (so schemathesis never sees them). Only the page's own
files are served, from a manifest made when the app is: any other path, however odd, is the API's 404, never a 500
and never Python source."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import re

import pytest

from service.api.web import CONTENT_TYPES, WEB_DIR, manifest
from tests.api.helpers import assert_error

embedded = pytest.mark.parametrize("store_kind", ["embedded"])

ODD_PATHS = [
    "/web/",
    "/web/tables/",
    "/web/tables",
    "/web/.",
    "/web/./app.js",
    "/web//",
    "/web//app.js",
    "/web/%2e",
    "/web/%2e/app.js",
    "/web/app.js%00",
    "/web/%00",
    "/web/tables/%00common.js",
    "/web/app.js/",
    "/web/%61pp.js",  # an encoded letter is not the file's name
    "/web/screenshots.py",
    "/web/__init__.py",
    "/web/__pycache__/",
    "/web/../api/app.py",
    "/web/tables/../app.js",
    "/web/tables/../../api/app.py",
    "/web/%2e%2e/api/app.py",
    "/web/%2E%2E/api/app.py",
    "/web/tables/%2e%2e/app.js",
    "/web/tables/..%2fapp.js",
    "/web/..%2f..%2fpyproject.toml",
    "/web/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/web/..\\api\\app.py",
    "/web/tables\\common.js",
    "/web/..%5capi%5capp.py",
    "/web/" + "a" * 300 + ".js",
    "/web/" + "a/" * 1000 + "app.js",
    "/web/no-such-file.js",
]


async def raw_get(api, target: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``target`` exactly as written: httpx would resolve ``.`` and ``..`` before sending."""
    reader, writer = await asyncio.open_connection(api.base_url.host, api.base_url.port)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


@embedded
@pytest.mark.parametrize("target", ODD_PATHS, ids=lambda t: t[:40])
async def test_a_path_that_is_not_one_of_the_pages_files_is_the_apis_404(api, target):
    status, headers, body = await raw_get(api, target)
    assert status == 404, (target, status, body[:200])
    assert headers["content-type"].startswith("application/json")
    error = json.loads(body)["error"]
    assert error["code"] == "not_found" and error["message"] and error["detail"] == {"request_id": headers["x-request-id"]}


@embedded
async def test_the_page_and_every_file_it_loads_are_served_with_their_content_types(api):
    r = await api.get("/")
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/web/app.js">' in r.text
    # every file the page loads, found from index.html by following its links and the modules' imports
    todo, seen = re.findall(r'(?:src|href)="/web/([^"]+)"', r.text), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        r = await api.get(f"/web/{name}")
        assert r.status_code == 200, name
        assert r.headers["content-type"] == CONTENT_TYPES["." + name.rsplit(".", 1)[1]], name
        assert r.content == (WEB_DIR / name).read_bytes()
        folder = name.rpartition("/")[0]
        for imported in re.findall(r'from "\./([^"]+)"', r.text) if name.endswith(".js") else ():
            todo.append(f"{folder}/{imported}" if folder else imported)
    expected = {"style.css", "app.js", "api.js", "evidence.js", "windows.js", "keeping.js", "storage.js", "replay.js", "reach.js", "ratings.js", "seeding.js", "signing.js", "yourturn.js", "tables/resign.js", "tables/common.js", "tables/index.js", "tables/free-parking.js",
                "tables/solitaire.js", "tables/monopoly.js", "tables/monopoly-words.js", "tables/monopoly-trade.js", "tables/generic.js", "tables/log.js", "tables/clock.js",
                "tables/resign.js", "queue.js", "tournament.js", "log.css", "favicon.svg"}
    assert seen == expected
    assert set(api.app.ctx.web_files) == expected | {"index.html"}  # the manifest is exactly the page


@embedded
async def test_files_carry_an_etag_and_a_revalidated_one_is_304(api):
    r = await api.get("/web/app.js")
    assert r.headers["cache-control"] == "no-cache" and r.headers["etag"].startswith('"')
    again = await api.get("/web/app.js", headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert (await api.get("/web/app.js", headers={"if-none-match": '"other"'})).status_code == 200


@embedded
async def test_api_404s_stay_json_and_static_routes_stay_out_of_openapi(api):
    assert_error(await api.get("/no-such-route"), 404, "not_found")
    assert_error(await api.get("/web"), 404, "not_found")
    assert_error(await api.get("/games/g_nope"), 404, "not_found")
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert "/" not in paths and not any(p.startswith("/web") for p in paths)
    assert (await api.get("/docs")).status_code == 200


def test_the_package_data_ships_every_file_the_page_is_served_from():
    """An installed service has only the files pyproject.toml lists (each ``*`` within one folder): every file of
    the manifest must match one of its patterns."""
    text = (WEB_DIR.parent.parent / "pyproject.toml").read_text()
    patterns = re.findall(r'"([^"]+)"', re.search(r'"service\.web" = \[([^\]]*)\]', text).group(1))

    def ships(name: str) -> bool:
        parts = name.split("/")
        return any(len(p.split("/")) == len(parts) and all(map(fnmatch.fnmatchcase, parts, p.split("/"))) for p in patterns)

    assert [name for name in manifest() if not ships(name)] == []
    assert all(any(p.endswith(suffix) for p in patterns) for suffix in CONTENT_TYPES)
