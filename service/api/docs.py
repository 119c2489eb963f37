"""``/docs``: the OpenAPI document in Swagger UI, served from the ``swagger-ui-py`` package, so the page works with
no internet (sanic-ext's own page loads Swagger UI from a CDN, and its OAuth2 redirect fetches one on each request,
which offline is an error).

Only the files the page loads are served, from a fixed list; anything else under ``/docs/assets/`` is 404.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path

from sanic import HTTPResponse, Request, Sanic

from .errors import not_found

PAGE = Path(__file__).with_name("docs.html")
_package = importlib.util.find_spec("swagger_ui")  # found, not imported: its own handlers need what we do not
assert _package is not None and _package.submodule_search_locations, "the swagger-ui-py package is not installed"
STATIC = Path(next(iter(_package.submodule_search_locations))) / "static"  # Swagger UI 5 (OpenAPI 3.1)
ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}



@cache
def _asset(name: str) -> tuple[bytes, str]:
    body = (STATIC / name).read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def install(app: Sanic) -> None:
    """sanic-ext's Swagger UI route, on our page (``docs.html``: every file from ``/docs/assets/``), and no OAuth2
    redirect page (sanic-ext's fetches it from a CDN on each request; nothing here uses OAuth2). Call before ``Extend``."""
    app.config.OAS_UI_DEFAULT = "swagger"
    app.config.OAS_UI_REDOC = False
    app.config.OAS_PATH_TO_SWAGGER_HTML = str(PAGE)
    redirect = app.config.OAS_URL_PREFIX.rstrip("/") + "/oauth2-redirect.html"

    @app.on_request
    async def no_cdn(request: Request) -> None:
        if request.path == redirect:
            raise not_found("file", "oauth2-redirect.html")

    async def asset(request: Request, name: str) -> HTTPResponse:
        if name not in ASSETS:
            raise not_found("file", name)
        body, etag = _asset(name)
        headers = {"etag": etag, "cache-control": "public, max-age=86400"}
        if etag in request.headers.get("if-none-match", ""):
            return HTTPResponse(status=304, headers=headers)
        return HTTPResponse(body, content_type=ASSETS[name], headers=headers)

    app.add_route(asset, "/docs/assets/<name:str>", methods=["GET"], name="docs_asset")
