"""Where two events (or two secrets) differ, for a person: a verdict names only what is not the same, and
``replays show`` lists each differing field of two envelopes."""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.envelope import canonical


def difference(want_type: str, want: bytes, got_type: str, got: bytes) -> tuple[str, str]:
    """The two events (or secrets), showing only where they differ when they are of one type."""
    if want_type != got_type:
        return f"{want_type} {want.decode()}", f"{got_type} {got.decode()}"
    found = diffs(msgspec.json.decode(want), msgspec.json.decode(got), "")
    if not found:
        return want.decode(), f"{got.decode()} (the same values, but not the canonical bytes)"
    if any(path == "" for path, _, _ in found):
        return want.decode(), got.decode()

    def show(side: int) -> str:
        return ", ".join(f"{d[0]}={canonical(d[side]).decode()}" if d[side] is not ... else f"no {d[0]}" for d in found)

    return f"{want_type} with {show(1)}" if want_type else show(1), show(2)


def diffs(a: Any, b: Any, path: str) -> list[tuple[str, Any, Any]]:
    """``(path, a's value, b's value)`` where they differ: into objects, and one level into lists of one length."""
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(a.keys() | b.keys())
        return [d for k in keys for d in diffs(a.get(k, ...), b.get(k, ...), f"{path}.{k}" if path else k)]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and path:
        return [(f"{path}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return [(path, a, b)]
