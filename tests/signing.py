"""A player's own key as a test client holds it: makes the seat's key and signs its commands the way API.md says."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.events.command_sig import signed_command
from service.events.envelope import canonical

TRANSPORT = ("command_id", "expected_version", "sig")


class PlayerKey:
    """An Ed25519 key pair of a player's own; ``signed`` adds ``command_id``, ``expected_version`` and ``sig``."""

    def __init__(self, seed: int | None = None) -> None:
        self.private = (Ed25519PrivateKey.from_private_bytes(seed.to_bytes(32, "big")) if seed is not None
                        else Ed25519PrivateKey.generate())
        self.public_key = self.private.public_key().public_bytes_raw().hex()

    def signature(self, game_id: str, version: int, command_id: str, command: dict[str, Any]) -> str:
        body = {k: v for k, v in command.items() if k not in TRANSPORT}
        return self.private.sign(signed_command(game_id, version, command_id, canonical(body))).hex()

    def signed(self, game_id: str, version: int, command_id: str, command: dict[str, Any]) -> dict[str, Any]:
        """``command`` ready to send at ``version``: it was read at that version, and is signed for it alone."""
        sig = self.signature(game_id, version, command_id, command)
        return {**command, "command_id": command_id, "expected_version": version, "sig": sig}
