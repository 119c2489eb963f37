"""Seeds for bot games: one base seed makes a whole run reproducible.

Game *i* of a run gets ``sha256(base ‖ "game:" ‖ i)`` as its 32-byte seed, and its bots draw their
own choices from ``sha256(base ‖ "bots:" ‖ i)`` (bots never see the game's seed).
"""

from __future__ import annotations

import hashlib
import secrets


def parse_base(text: str | None) -> bytes:
    """``--seed``: a decimal integer (``42``), or hex digits (``0x2a``, ``deadbeef``…); none: 32 fresh random bytes."""
    if text is None:
        return secrets.token_bytes(32)
    text = text.strip().lower()
    if text.isdecimal():
        return int(text).to_bytes(32, "big")
    digits = text.removeprefix("0x")
    if not digits:
        raise ValueError("--seed is empty: give a decimal integer or hex digits")
    try:
        return bytes.fromhex("0" * (len(digits) % 2) + digits)
    except ValueError:
        raise ValueError(f"--seed {text!r} is neither a decimal integer nor hex digits") from None


def game_seed(base: bytes, index: int) -> bytes:
    return hashlib.sha256(base + b"game:%d" % index).digest()


def bots_seed(base: bytes, index: int) -> int:
    return int.from_bytes(hashlib.sha256(base + b"bots:%d" % index).digest()[:8], "big")


def seating(index: int, seats: tuple[int, int], bots: tuple[str, ...]) -> tuple[str, ...]:
    """The bots of game ``index``: the ``index``-th seat count of the range (cycling), the bots seated in turn."""
    low, high = seats
    n = low + index % (high - low + 1)
    return tuple(bots[j % len(bots)] for j in range(n))
