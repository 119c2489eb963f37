"""The web page's files (``service/web/``, plain files, no build step): ``/`` is its ``index.html``, ``/web/<path>`` the
rest.

A request is looked up in a manifest of the page's files read once, when the app is made: a file serves only if its
relative path is a key, so nothing reaches the file system at request time (no directory, ``..``, encoded segment,
null byte or over-long name can become a path) and nothing but the page's own file types (never Python source) is
ever served. Anything else is the API's JSON 404. These routes carry no ``@doc``, so they stay out of the OpenAPI
document (and out of schemathesis).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sanic import HTTPResponse, Request, Sanic

from .errors import ApiError

WEB_DIR = Path(__file__).resolve().parent.parent / "web"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}
"""The page's file types; keep ``[tool.setuptools.package-data]`` in pyproject.toml in step (an installed service
has only the files listed there)."""


@dataclass(frozen=True)
class WebFile:
    body: bytes
    content_type: str
    etag: str


def manifest(root: Path = WEB_DIR) -> dict[str, WebFile]:
    """Every file of the page under ``root``, by its path relative to it (``tables/common.js``): of the page's types
    only, and none hidden (nor in a hidden folder)."""
    files: dict[str, WebFile] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or path.suffix not in CONTENT_TYPES:
            continue
        if any(part.startswith(".") for part in relative.parts):
            continue
        body = path.read_bytes()
        files[relative.as_posix()] = WebFile(body, CONTENT_TYPES[path.suffix], f'"{hashlib.sha256(body).hexdigest()[:32]}"')
    return files


def install(app: Sanic, root: Path = WEB_DIR) -> None:
    files = manifest(root)
    app.ctx.web_files = files

    def serve(request: Request, name: str) -> HTTPResponse:
        found = files.get(name)
        if found is None:
            raise ApiError(404, "not_found", f"No such file of the web page: {request.path[:200]}")
        # no-cache: the names carry no version (no build step), so a browser revalidates; the etag makes that cheap
        headers = {"etag": found.etag, "cache-control": "no-cache"}
        if found.etag in {tag.strip().removeprefix("W/") for tag in request.headers.get("if-none-match", "").split(",")}:
            return HTTPResponse(status=304, headers=headers)
        return HTTPResponse(found.body, headers=headers, content_type=found.content_type)

    @app.get("/", name="web_index")
    async def _index(request: Request) -> HTTPResponse:
        return serve(request, "index.html")

    @app.get("/web/<name:path>", name="web_files")
    async def _file(request: Request, name: str) -> HTTPResponse:
        return serve(request, name)
