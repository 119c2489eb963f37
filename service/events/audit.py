"""The audit line format of API.md: ``seq  at(ISO 8601)  actor  summary  hash[:12]``."""

from __future__ import annotations

from datetime import UTC, datetime

from .envelope import Envelope


def iso(at_ms: int) -> str:
    return datetime.fromtimestamp(at_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def line(env: Envelope, summary: str) -> str:
    return f"{env.seq}  {iso(env.at)}  {env.actor}  {summary}  {env.hash[:12]}"
