"""The one way a rule says no."""

from __future__ import annotations


class RuleViolation(Exception):
    """A command the rules forbid now. ``code`` is snake_case and stable; ``message`` tells a person what to do."""

    def __init__(self, code: str, message: str, **detail: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail

    def __repr__(self) -> str:
        return f"RuleViolation({self.code!r}, {self.message!r})"
