"""Every failure in one shape: ``{"error": {"code", "message", "detail"}}`` with the status of API.md."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from sanic import HTTPResponse, Request, Sanic
from sanic import exceptions as sx

from service.store.archive import ArchiveDamaged, ArchiveError
from service.store.outage import Outage
from service.store.store import NotDurable, NotReplicated, StoreBusy, StoreUnavailable
from service.rules.errors import RuleViolation

from . import metrics

log = logging.getLogger("free_parking.api")
CLIENT_CLOSED = 499
"""The status a request the client hung up on is counted under (never sent: nobody is there to read it)."""


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **detail: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.detail = status, code, message, detail
        self.headers = headers or {}  # sent with the error: a 429's Retry-After


class ErrorBody(msgspec.Struct):
    code: str
    message: str
    detail: dict[str, Any] = {}


class ErrorResponse(msgspec.Struct):
    error: ErrorBody


_encoder = msgspec.json.Encoder()
BUSY_RETRY_AFTER = 1  # seconds: a busy pool frees up in milliseconds; a second spreads the retries out


def error_response(status: int, code: str, message: str, detail: dict[str, Any] | None = None) -> HTTPResponse:
    body = ErrorResponse(ErrorBody(code, message, _jsonable(detail or {})))
    return HTTPResponse(_encoder.encode(body), status=status, content_type="application/json")


def _jsonable(detail: dict[str, Any]) -> dict[str, Any]:
    return msgspec.json.decode(msgspec.json.encode(detail, enc_hook=str))


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, "not_found", f"No {what} has the id {ident!r}", id=ident)


# A pattern's meaning in words, for the message of a value that does not match it (``describe_pattern``)
_PATTERNS: dict[str, str] = {}


def describe_pattern(pattern: str, text: str) -> str:
    """Register what ``pattern`` means, for people: msgspec would quote the regular expression."""
    _PATTERNS[pattern] = text
    return pattern


def bad_body(e: Exception, code: str = "invalid_request") -> ApiError:
    """A body that is not JSON, or does not match its schema: say where."""
    if isinstance(e, msgspec.ValidationError):
        message = str(e)
        for pattern, text in _PATTERNS.items():
            message = message.replace(f"`str` matching regex {pattern!r}", text)  # msgspec quotes it with repr()
        return ApiError(400, code, f"The body does not match the schema: {message}")
    if isinstance(e, RecursionError):
        return ApiError(400, "malformed_json", "The body is nested too deeply to be a request of this API")
    return ApiError(400, "malformed_json", f"The body is not valid JSON: {e}")


def unavailable_advice(request: Request) -> str:
    """What to do about *this* request while the store is away: a read is retried; a command is resent with its
    ``command_id`` (a command that went through then answers as it did); another write may or may not have been made."""
    if request.method in ("GET", "HEAD"):
        return "Nothing was read; retry shortly."
    if request.route is not None and request.route.path.endswith("/commands"):
        return ("The command may or may not have been appended; retry shortly with the same command_id (and body): "
                "one that went through answers as it did the first time.")
    return "It may or may not have been made; look before you retry (a retry may make a second one)."


def install(app: Sanic) -> None:
    # an outage is said once, not once a request; a request answered below 500 ends it (service/api/observe.py)
    app.ctx.requests_outage = Outage(log, "requests")

    @app.exception(ApiError)
    async def _api(request: Request, e: ApiError) -> HTTPResponse:
        response = error_response(e.status, e.code, e.message, e.detail)
        response.headers.update(e.headers)
        return response

    @app.exception(RuleViolation)
    async def _rule(request: Request, e: RuleViolation) -> HTTPResponse:
        return error_response(422, e.code, e.message, e.detail)

    @app.exception(StoreBusy)
    async def _busy(request: Request, e: StoreBusy) -> HTTPResponse:
        log.warning("store busy: %s", e)
        metrics.STORE_ERRORS.labels("busy").inc()
        response = error_response(503, "store_busy", "The service is busy: every connection to the event store is in use. "
                                  "Nothing was written; retry in a second.", {"retry_after": BUSY_RETRY_AFTER})
        response.headers["retry-after"] = str(BUSY_RETRY_AFTER)
        return response

    @app.exception(NotReplicated)
    async def _replicated(request: Request, e: NotReplicated) -> HTTPResponse:
        request.app.ctx.requests_outage.failed(e)  # said once, as an outage of the store is
        metrics.STORE_ERRORS.labels("not_replicated").inc()
        if request.method in ("GET", "HEAD"):
            what = "Nothing was shown: what there is to show is not yet on the store's replicas; retry shortly."
        else:
            what = ("Not acknowledged: the store's replicas did not confirm the write in time. It may still be applied "
                    f"(a failover may also take it back). {unavailable_advice(request)}")
        response = error_response(503, "not_replicated", what, {"retry_after": BUSY_RETRY_AFTER})
        response.headers["retry-after"] = str(BUSY_RETRY_AFTER)
        return response

    @app.exception(StoreUnavailable)
    async def _store(request: Request, e: StoreUnavailable) -> HTTPResponse:
        request.app.ctx.requests_outage.failed(e)
        metrics.STORE_ERRORS.labels("unavailable").inc()
        return error_response(503, "store_unavailable", f"The event store cannot be reached. {unavailable_advice(request)}")

    @app.exception(ArchiveError)
    async def _archive(request: Request, e: ArchiveError) -> HTTPResponse:
        metrics.STORE_ERRORS.labels("archive").inc()
        if isinstance(e, ArchiveDamaged):  # it will not mend by itself: a retry shortly would be the same answer
            log.error("archive: %s; restore the file from a backup", e)
            return error_response(503, "archive_damaged", "The game's archived record is damaged and cannot be read "
                                  "until the operator restores it. Nothing was read.")
        log.warning("archive: %s", e)
        return error_response(503, "archive_unavailable", "The game's archived record cannot be read now; retry shortly.")

    @app.exception(NotDurable)
    async def _durable(request: Request, e: NotDurable) -> HTTPResponse:
        return error_response(503, "not_durable", str(e))

    @app.exception(sx.PayloadTooLarge)
    async def _large(request: Request, e: Exception) -> HTTPResponse:
        if "header" in str(e).lower():  # Sanic raises the same exception for a request line and headers too long
            limit = request.app.config.REQUEST_MAX_HEADER_SIZE
            return error_response(431, "headers_too_large", f"The request line and headers are over the limit of {limit} bytes", {"limit": limit})
        limit = request.app.config.REQUEST_MAX_SIZE
        return error_response(413, "body_too_large", f"The body is over the limit of {limit} bytes", {"limit": limit})

    @app.exception(sx.NotFound)
    async def _route(request: Request, e: Exception) -> HTTPResponse:
        return error_response(404, "not_found", f"No such resource: {request.path}")

    @app.exception(sx.MethodNotAllowed)
    async def _method(request: Request, e: Exception) -> HTTPResponse:
        allowed = sorted(getattr(e, "allowed_methods", None) or ())
        response = error_response(405, "method_not_allowed", f"{request.method} is not allowed on {request.path}", {"allowed": allowed})
        response.headers["allow"] = ", ".join(allowed)  # RFC 9110: a 405 says what is allowed
        return response

    @app.exception(sx.ServiceUnavailable)
    async def _timeout(request: Request, e: Exception) -> HTTPResponse:
        """Sanic's response timeout: a body that stopped arriving is the client's (408); a handler that took too
        long is the service's, said as such (503, retry), never a 500 "bug"."""
        expected = request.headers.get("content-length", "")
        if expected.isdigit() and len(request.body or b"") < int(expected):
            log.info("request timeout: the body of %s %s stopped arriving", request.method, request.path)
            return error_response(408, "request_timeout", "The request's body did not arrive whole in time; send it again")
        log.warning("response timeout on %s %s", request.method, request.path)
        response = error_response(503, "response_timeout", "The service took too long to answer; retry shortly",
                                  {"retry_after": BUSY_RETRY_AFTER})
        response.headers["retry-after"] = str(BUSY_RETRY_AFTER)
        return response

    @app.exception(sx.RequestCancelled)
    async def _hung_up(request: Request, e: BaseException) -> HTTPResponse:
        """The client closed its connection before it had its answer (mid-body, or while its handler ran): nothing
        is sent, and the metrics and the access log count it as 499 ``client_closed`` (nginx's status for it), not
        as the server's failure — it is no bug, and a 500 would page someone for a client's hang-up."""
        return error_response(CLIENT_CLOSED, "client_closed", "The client closed the connection before its answer")

    @app.exception(sx.SanicException)
    async def _sanic(request: Request, e: sx.SanicException) -> HTTPResponse:
        status = getattr(e, "status_code", 400) or 400
        if status >= 500:
            log.exception("server error on %s %s", request.method, request.path, exc_info=e)
            return error_response(500, "internal_error", "The server failed; this is a bug and has been logged")
        return error_response(status, "bad_request", str(e) or "The request could not be understood")

    @app.exception(Exception)
    async def _bug(request: Request, e: Exception) -> HTTPResponse:
        log.exception("unhandled error on %s %s", request.method, request.path, exc_info=e)
        return error_response(500, "internal_error", "The server failed; this is a bug and has been logged")
