"""A receipt: the service's signature over what a game's log said at one version (docs/fairness.md).

The signed bytes are ``b"free-parking/receipt/v1\\n"`` followed by the canonical JSON (sorted keys, no spaces) of
``{"at", "game_id", "head", "key_id", "version"}``: the prefix keeps a receipt's signature from ever standing for any
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
KeyId = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}(?!\n)$")]
Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?!\n)$")]
Signature = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{128}(?!\n)$")]


class Signed(msgspec.Struct, frozen=True, kw_only=True):
    """What a receipt vouches for: the log of ``game_id`` had ``version`` events, the last one's hash ``head`` and
    time ``at`` (ms; 0 and 64 zeros before the first event)."""

    game_id: str
    version: Annotated[int, msgspec.Meta(ge=0)]
    head: Hex64
    at: Annotated[int, msgspec.Meta(ge=0)]
    key_id: KeyId


class Receipt(Signed, frozen=True, kw_only=True):
    sig: Signature


def signed_bytes(what: Signed) -> bytes:
    """The bytes the signature covers: only the five fields, whatever else the object carries."""
    fields = {"at": what.at, "game_id": what.game_id, "head": what.head, "key_id": what.key_id, "version": what.version}
    return PREFIX + canonical(fields)


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
