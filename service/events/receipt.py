"""A receipt: the service's signature over what a game's log said at one version (docs/fairness.md).

The signed bytes are ``b"free-parking/receipt/v1\\n"`` followed by the canonical JSON (sorted keys, no spaces) of
``{"at", "game_id", "head", "key_id", "version"}`` — or, for a receipt v2, which names the head of the key listing it
was signed under (``listing``, ``service/events/keylist.py``), ``b"free-parking/receipt/v2\\n"`` and the same with
``listing`` among them: the prefix keeps a receipt's signature from ever standing for any
other message the key might sign. ``sig`` is the Ed25519 signature (RFC 8032) of those bytes, in lowercase hex, and
``key_id`` names the key: the first 16 hex digits of SHA-256 of its raw 32-byte public key. Anyone holding the public
key (``GET /keys``) can check a receipt with any Ed25519 implementation; nothing here needs the service.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

import msgspec

from .envelope import canonical

PREFIX = b"free-parking/receipt/v1\n"
PREFIX_V2 = b"free-parking/receipt/v2\n"
KeyId = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}(?!\n)$")]
Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?!\n)$")]
Signature = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{128}(?!\n)$")]


class Signed(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a receipt vouches for: the log of ``game_id`` had ``version`` events, the last one's hash ``head`` and
    time ``at`` (ms; 0 and 64 zeros before the first event); in a v2 receipt, that the key listing's head was then
    ``listing`` (a v1 receipt has none, and encodes as it always did)."""

    game_id: str
    version: Annotated[int, msgspec.Meta(ge=0)]
    head: Hex64
    at: Annotated[int, msgspec.Meta(ge=0)]
    key_id: KeyId
    listing: Hex64 | None = None


class Receipt(Signed, frozen=True, kw_only=True):
    sig: Signature


def signed_bytes(what: Signed) -> bytes:
    """The bytes the signature covers: only the five fields (six in v2), whatever else the object carries."""
    fields = {"at": what.at, "game_id": what.game_id, "head": what.head, "key_id": what.key_id, "version": what.version}
    if what.listing is None:
        return PREFIX + canonical(fields)
    return PREFIX_V2 + canonical({**fields, "listing": what.listing})


_P = 2**255 - 19
_D = -121665 * pow(121666, _P - 2, _P) % _P


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Two points of edwards25519 (affine; the formula is complete, its denominators never 0)."""
    (x1, y1), (x2, y2) = a, b
    t = _D * x1 * x2 * y1 * y2 % _P
    return ((x1 * y2 + y1 * x2) * pow(1 + t, _P - 2, _P) % _P, (y1 * y2 + x1 * x2) * pow(1 - t, _P - 2, _P) % _P)


def sound_public_key(raw: bytes) -> bool:
    """Whether ``raw`` is the canonical encoding (RFC 8032, 5.1.3) of a point of edwards25519 of more than small order.

    OpenSSL accepts any 32 bytes whose point decodes, including the 8 points of small order: under one of those
    (the identity ``01 00…00`` say) ``R = identity, S = 0`` checks out for *every* message, so a listing that names
    one lets anyone make "the service's" receipts. No honest key is one (a key is [a]B, B of prime order), nor is
    encoded with y ≥ p or as "−0": refusing those leaves one encoding per key, so one key_id."""
    if len(raw) != 32:
        return False
    y, sign = int.from_bytes(raw, "little") & ((1 << 255) - 1), raw[31] >> 7
    if y >= _P:
        return False
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    if (v * x * x - u) % _P:
        x = x * pow(2, (_P - 1) // 4, _P) % _P
        if (v * x * x - u) % _P:
            return False  # not on the curve
    if x == 0 and sign:
        return False  # "−0": a second encoding of a point whose x is 0
    point = (x if x & 1 == sign else _P - x, y)
    for _ in range(3):
        point = _add(point, point)
    return point != (0, 1)  # [8]P is the identity only for the 8 points of small order


def key_id_of(public_key: bytes) -> str:
    """A key's id: the first 16 hex digits of the SHA-256 of its raw 32 bytes."""
    return hashlib.sha256(public_key).hexdigest()[:16]


class PublicKey(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One entry of ``GET /keys``: a public key (raw 32 bytes, hex), from when it signs, and until when (absent: it
    signs still). A rotated key stays listed, so receipts it signed stay checkable."""

    key_id: KeyId
    public_key: Hex64
    not_before: int
    not_after: int | None = None


class KeyList(msgspec.Struct, frozen=True):
    keys: list[PublicKey]
