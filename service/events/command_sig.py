"""A player's signature on a command: the bytes it covers, rebuilt the same way by the service, a verifier and the page.

A keyed seat's player signs ``b"free-parking/command/v1\\n"`` followed by the canonical JSON (keys sorted at every
depth, no whitespace, UTF-8) of ``{"command", "command_id", "expected_version", "game_id"}``, where ``command`` is the
command as the log stores it (``codec.command_body``: its own fields and ``type`` as the service decodes them,
defaults omitted). Each of those is in the log — the command on its batch's first envelope, its id there too, the
version it was decided on one less than that envelope's seq — so anyone holding the log and the player's public key
checks the move was theirs, without the service (docs/signed-commands.md). The prefix keeps the signature from ever
standing for another message the key signs.
"""

from __future__ import annotations

import functools

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .envelope import Envelope, canonical
from .receipt import sound_public_key

PREFIX = b"free-parking/command/v1\n"


def signed_command(game_id: str, expected_version: int, command_id: str, command: bytes) -> bytes:
    """The bytes a player signs for ``command`` (its canonical body) sent at ``expected_version`` with ``command_id``."""
    fields = {"command": msgspec.Raw(command), "command_id": command_id, "expected_version": expected_version,
              "game_id": game_id}
    return PREFIX + canonical(fields)


def signed_in(env: Envelope) -> bytes | None:
    """What the player signed for the command recorded on ``env`` (a batch's first envelope), from the log alone;
    ``None`` when the envelope has no command or no command id (a keyed seat's command always has both)."""
    if env.command_id is None or bytes(env.command) == b"null":
        return None
    return signed_command(env.game_id, env.seq - 1, env.command_id, bytes(env.command))


def signature_holds(public_key: str, sig: str | None, message: bytes) -> bool:
    """Whether ``sig`` is ``public_key``'s Ed25519 signature of ``message``. A key of small order (which "signs" every
    message) or not canonically encoded never holds: with one, anyone could sign in the player's name."""
    verifier = _verifier(public_key)
    if sig is None or verifier is None:
        return False
    try:
        verifier.verify(bytes.fromhex(sig), message)
    except (ValueError, InvalidSignature):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def _verifier(public_key: str) -> Ed25519PublicKey | None:
    """The key, loaded once and checked once (``sound_public_key`` is curve arithmetic in Python: several times the
    cost of a signature check), for every command a seat signs with it; ``None``: no key to check anything against."""
    try:
        raw = bytes.fromhex(public_key)
    except ValueError:
        return None
    if not sound_public_key(raw):
        return None
    return Ed25519PublicKey.from_public_bytes(raw)
