"""What an operator sees of a worker (docs/operating.md): a request id on every answer, one JSON access line per
request, Prometheus metrics at ``/metrics`` and readiness at ``/readyz``."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time

import msgspec
from sanic import Blueprint, HTTPResponse, Request, Sanic

from service.store.gauges import game_counts, projector_lag
from service.store.store import StoreUnavailable

from . import metrics
from . import schemas as s
from .errors import CLIENT_CLOSED
from .openapi import doc

bp = Blueprint("observe")
access = logging.getLogger("free_parking.access")
REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
"""A caller's own ``X-Request-Id`` is kept when it looks like one (a proxy's); anything else gets an id of ours."""
_json = msgspec.json.Encoder()
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def install(app: Sanic, access_log: bool) -> None:
    app.blueprint(bp)
    if access_log and not access.handlers:  # each worker process writes its own lines, bare: one JSON object each
        bare = logging.StreamHandler()
        bare.setFormatter(logging.Formatter("%(message)s"))
        access.addHandler(bare)
        access.setLevel(logging.INFO)
        access.propagate = False

    @app.on_request(priority=1000)
    async def _arrived(request: Request) -> None:
        given = request.headers.get("x-request-id", "")
        request.ctx.request_id = given if REQUEST_ID.fullmatch(given) else secrets.token_hex(8)
        request.ctx.arrived = time.perf_counter()

    @app.on_response(priority=1000)
    async def _answered(request: Request, response: HTTPResponse) -> None:
        request_id = getattr(request.ctx, "request_id", None) or secrets.token_hex(8)  # refused before it arrived: 431
        response.headers["x-request-id"] = request_id
        code = "accepted"
        if response.status < 500 and response.status != CLIENT_CLOSED:  # a hang-up says nothing of the store
            request.app.ctx.requests_outage.ok()
        if response.status >= 400 and response.body and response.content_type == "application/json":
            response.body, code = _with_request_id(response.body, request_id)
        if (command := getattr(request.ctx, "command", None)) is not None:
            metrics.labelled(metrics.COMMANDS, *command, code).inc()
        now = time.perf_counter()
        seconds = now - getattr(request.ctx, "arrived", now)  # none when the body never arrived whole: 0, not -0.0
        route = "/" + request.route.path if request.route else "unmatched"  # a route's pattern, never the raw path
        method = request.method if request.method in METHODS else "other"  # a made-up method is no series of its own
        metrics.labelled(metrics.REQUESTS, method, route).observe(seconds)
        metrics.labelled(metrics.RESPONSES, method, route, str(response.status)).inc()
        if access_log:
            access.info(_json.encode({
                "at": round(time.time(), 3), "request_id": request_id, "method": request.method, "path": request.path,
                "route": route, "status": response.status, "ms": round(seconds * 1000, 2), "client": request.remote_addr or request.ip,
            }).decode())


def _with_request_id(body: bytes, request_id: str) -> tuple[bytes, str]:
    """An error body of the one shape with its ``detail`` naming the request (so a report can be matched to the
    logs), and the error's code."""
    try:
        error = msgspec.json.decode(body)
        error["error"]["detail"]["request_id"] = request_id
        return _json.encode(error), str(error["error"]["code"])
    except (msgspec.DecodeError, KeyError, TypeError):
        return body, "error"


@bp.get("/metrics")
@doc("get", "/metrics", "Prometheus metrics of every worker, and the store's figures", answers={200: str}, auth="none",
     content_type="text/plain")
async def scrape(request: Request) -> HTTPResponse:
    """Counters and latency histograms of every worker (multi-process mode with several), games by status and the
    projectors' lag per partition read from the store, and the embedded store's journal: its size and live share. A
    store that cannot be reached leaves its figures out."""
    store = request.app.ctx.store
    try:
        games, lag = await game_counts(store), await projector_lag(store)
    except StoreUnavailable:
        games, lag = {}, {}
    compaction = getattr(store, "compaction", None)
    size = compaction.journal_bytes() if compaction is not None else None
    journal = (size, compaction.live) if size is not None else None
    return HTTPResponse(metrics.exposition(games, lag, journal), content_type=metrics.CONTENT_TYPE_LATEST)


@bp.get("/readyz")
@doc("get", "/readyz", "Should this worker get traffic: the store answers and the projectors keep up",
     answers={200: s.Readiness, 503: s.Readiness}, auth="none")
async def ready(request: Request) -> HTTPResponse:
    """Ready when the store answers and the projectors are within ``--ready-lag`` entries of the logs; ``/healthz``
    says only that the worker is alive."""
    store, bound = request.app.ctx.store, request.app.ctx.settings.ready_lag
    try:
        up = await store.ping()
        behind = sum((await projector_lag(store)).values()) if up else -1
    except StoreUnavailable:  # busy too: a worker whose every store connection is taken is no worker to send more
        up, behind = False, -1
    archive = store.archive is None or await asyncio.to_thread(store.archive.reachable)
    ok = up and 0 <= behind <= bound and archive
    body = s.Readiness(ok, up, behind, bound, archive)
    return HTTPResponse(_json.encode(body), status=200 if ok else 503, content_type="application/json")
