"""When to send a request again, and after how long: 429 and 503 by their ``Retry-After``, within a bounded total.

The service answers 429 (a rate limit) and 503 (the store away or busy, a handler too slow) having written nothing
(docs/api.md, "Errors"), so the same request may go again — a command with the same ``command_id`` and body, which
the service never applies twice. A dropped connection is resent only for a request marked idempotent (a read, or a
command with its id): a new player or game resent after a drop might be made twice. Waits add up to at most
``RetryPolicy.total`` seconds per request; then the last error stands.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass

import httpx

RETRIED = (429, 503)
PERMANENT = frozenset({"archive_damaged", "not_durable"})
"""503 codes a retry shortly would only repeat: the operator must act (a damaged archive, a store not durable)."""


@dataclass(frozen=True)
class RetryPolicy:
    total: float = 60.0
    """The most seconds one request's waits add up to."""
    first: float = 0.5
    """The first wait where the service names none (a 503 without ``Retry-After``, a dropped connection)…"""
    longest: float = 10.0
    """…doubling up to this."""

    def start(self) -> Attempts:
        return Attempts(self)


def retry_after(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds: a number of seconds, or an HTTP date; ``None`` when absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _code(response: httpx.Response) -> str | None:
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


class Attempts:
    """One request's retries: ``after_response`` / ``after_error`` say how long to wait before the next try, or
    ``None``: stop (the answer stands, or the error is raised)."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy, self.tries, self.waited = policy, 0, 0.0

    def _wait(self, named: float | None) -> float | None:
        wait = named if named is not None else min(self.policy.longest, self.policy.first * 2**self.tries)
        if self.waited + wait > self.policy.total:
            return None
        self.tries += 1
        self.waited += wait
        return wait

    def backoff(self) -> float | None:
        """The next wait where the service names none (a dropped connection, a stream closed early)."""
        return self._wait(None)

    def after_response(self, response: httpx.Response) -> float | None:
        if response.status_code not in RETRIED or _code(response) in PERMANENT:
            return None
        return self._wait(retry_after(response.headers))

    def after_error(self, error: httpx.TransportError, idempotent: bool) -> float | None:
        """A connection that was never made sent nothing: any request may go again. Once sent, only an idempotent
        one may (the answer was lost, not necessarily the request)."""
        unsent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
        return self.backoff() if idempotent or unsent else None
