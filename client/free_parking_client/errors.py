"""What the client raises: the service's refusals, and the commands the client itself refuses to send."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An answer of the service that is an error (4xx, 5xx), with its body ``{"error": {"code", "message", "detail"}}``
    (docs/api.md, "Errors"). A body that is not in that shape (a proxy's page) keeps its text in ``message`` and the
    code ``http_<status>``, so every failure reads the same way."""

    def __init__(self, status: int, code: str, message: str, detail: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message
        self.detail: dict[str, Any] = detail or {}
        self.headers: dict[str, str] = headers or {}

    @property
    def request_id(self) -> str | None:
        """The service's id of the request (its logs name it): quote it when asking the operator."""
        return self.detail.get("request_id")

    @property
    def conflict(self) -> bool:
        """A 409: the game moved on (``version_conflict``), or a seat or queue place is not to be had. Read again."""
        return self.status == 409


class NotLegal(ValueError):
    """The client refused to send ``command``: the view read at ``version`` does not list it in ``legal`` nor admit it
    within ``legal_forms``. Sending it anyway (``check_legal=False``) would get a 422 or a 409 — or, sent at a stale
    version, a move the player did not mean."""

    def __init__(self, command: dict[str, Any], version: int, reason: str) -> None:
        super().__init__(f"not legal at version {version}: {reason} ({command})")
        self.command, self.version, self.reason = command, version, reason
