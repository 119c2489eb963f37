"""The seeded RNG, id ``hmac-sha256-v1``: the only source of chance in every game.

Specified in ``docs/rng.md`` so that anyone can re-implement it and re-check a deal:
block *n* of stream *s* is ``HMAC-SHA256(key=seed, msg=utf8(f"{s}:{n}"))``; each block gives
four 64-bit big-endian words, used in order. Streams are independent, so a game names one
stream per random decision (``deal:1``, ``reshuffle:playing:2``, …) and the order in which
decisions are made elsewhere never shifts another one's outcome.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from typing import TypeVar

RNG_ID = "hmac-sha256-v1"
_WORD_SPACE = 1 << 64

T = TypeVar("T")


class Stream:
    """The words of one named stream of one seed, drawn in order."""

    __slots__ = ("_words",)

    def __init__(self, seed: bytes, name: str) -> None:
        self._words = _words(seed, name)

    def word(self) -> int:
        """The next 64-bit word."""
        return next(self._words)

    def below(self, k: int) -> int:
        """An integer uniform in ``[0, k)``, by rejection so that no value is favoured."""
        if k <= 0:
            raise ValueError("below() needs a positive bound")
        limit = (_WORD_SPACE // k) * k
        while True:
            w = self.word()
            if w < limit:
                return w % k

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A Fisher–Yates shuffle from the last index down: for i = len-1 … 1, j = below(i+1), swap."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def _words(seed: bytes, name: str) -> Iterator[int]:
    n = 0
    while True:
        block = hmac.new(seed, f"{name}:{n}".encode(), hashlib.sha256).digest()
        for k in range(0, 32, 8):
            yield int.from_bytes(block[k : k + 8], "big")
        n += 1


def shuffle(seed: bytes, stream: str, items: Sequence[T]) -> list[T]:
    """Shuffle ``items`` with a fresh stream: the common case, one decision per stream."""
    return Stream(seed, stream).shuffled(items)


# --- the game's seed: the server's committed seed combined with every seat's client seed (docs/rng.md) -----------

CLIENT_SEED_DOMAIN = b"free-parking/client-seed/v1"
GAME_SEED_DOMAIN = b"free-parking/game-seed/v1"
SEED_BYTES = 32


def client_seed_for(server_seed: bytes, seat: int) -> bytes:
    """The client seed of a seat that brought none (a bot, or a person who sent none):
    ``HMAC-SHA256(key=server_seed, msg=utf8(f"free-parking/client-seed/v1:{seat}"))``. It is fixed by the commitment
    to the server seed, so the operator cannot pick it after seeing the seats that brought their own."""
    return hmac.digest(server_seed, CLIENT_SEED_DOMAIN + b":%d" % seat, "sha256")


def game_seed(server_seed: bytes, client_seeds: Sequence[bytes]) -> bytes:
    """The seed every random stream of a ``combined`` game is keyed with, from the last seat on:
    ``HMAC-SHA256(key=server_seed, msg=utf8("free-parking/game-seed/v1") ‖ client_seed[0] ‖ … ‖ client_seed[n-1])``,
    one 32-byte client seed per seat in seat order."""
    if not client_seeds:
        raise ValueError("a game seed needs every seat's client seed, and there are none")
    for seat, seed in enumerate(client_seeds):
        if len(seed) != SEED_BYTES:
            raise ValueError(f"the client seed of seat {seat} has {len(seed)} bytes, not {SEED_BYTES}")
    return hmac.digest(server_seed, GAME_SEED_DOMAIN + b"".join(client_seeds), "sha256")
