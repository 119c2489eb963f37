"""The player's own key: made once, kept in a file only its owner reads, and signing every command of a keyed seat.

A keyed seat's commands carry ``sig``, the Ed25519 signature over ``b"free-parking/command/v1\\n"`` followed by the
canonical JSON (keys sorted at every depth, no whitespace, UTF-8) of ``{"command", "command_id", "expected_version",
"game_id"}`` (docs/signed-commands.md). ``command`` must be the command as the service decodes it, defaults omitted:
``commands.body`` makes it so. The log then carries the player's signature on each of their moves, which
``replays verify --player-key`` checks without trusting the service.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PREFIX = b"free-parking/command/v1\n"
_canonical = msgspec.json.Encoder(order="sorted")


def canonical(obj: Any) -> bytes:
    """Sorted keys at every depth, no whitespace, UTF-8: the same bytes the service and a verifier rebuild."""
    return _canonical.encode(obj)


def signed_command(game_id: str, expected_version: int, command_id: str, command: dict[str, Any]) -> bytes:
    """The bytes a player signs for ``command`` (its body as ``commands.body`` gives it) sent at ``expected_version``."""
    return PREFIX + canonical({"command": command, "command_id": command_id, "expected_version": expected_version,
                               "game_id": game_id})


class PlayerKey:
    """An Ed25519 key pair of the player's own. Lose it and a keyed seat cannot move again: ``save`` it (mode 0600)
    and ``load`` it in the next run, or use ``load_or_create``."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public_key: str = private.public_key().public_bytes_raw().hex()
        """The public half as the service takes it: 64 lowercase hex digits."""

    @classmethod
    def generate(cls) -> PlayerKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> PlayerKey:
        """The key whose private half is these 32 bytes (RFC 8032): for known-answer tests and keys kept elsewhere."""
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PlayerKey:
        """The key ``save`` wrote: the private half's 64 hex digits."""
        text = Path(path).read_text().strip()
        try:
            return cls.from_seed(bytes.fromhex(text))
        except ValueError:
            raise ValueError(f"{path} holds no player key (64 hex digits of its private half)") from None

    @classmethod
    def load_or_create(cls, path: str | os.PathLike[str]) -> PlayerKey:
        """The key kept at ``path``; a new one saved there when there is none yet."""
        if Path(path).exists():
            return cls.load(path)
        key = cls.generate()
        key.save(path)
        return key

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the private half to ``path``, readable by its owner only (0600) from the moment it exists: a key
        another user of the machine can read signs moves in the player's name. An existing file is refused, so a key
        in use is never overwritten by accident."""
        raw = self._private.private_bytes_raw().hex().encode() + b"\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, raw)
        finally:
            os.close(fd)

    def sign(self, game_id: str, expected_version: int, command_id: str, command: dict[str, Any]) -> str:
        """``sig`` for ``command`` (its body, defaults omitted) sent with ``command_id`` at ``expected_version``."""
        return self._private.sign(signed_command(game_id, expected_version, command_id, command)).hex()
