"""The player a bot plays as, kept between runs: a rating is a player's, so a bot registered anew on every run would
start from nothing each time (and leave a trail of one-run players in the ratings).

The file holds the player's id and token — the token acts as the player, so it is written readable by its owner only
(0600), like the key — with the service it was registered at and the public key it was registered with. A run uses it
only where all of that still holds: the same service, the same key, and a service that still knows the player and its
token (a service started on an empty store does not); otherwise it registers anew and writes the file again.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec


class NotAPlayerFile(ValueError):
    """The file named for the saved player holds something else."""


class SavedPlayer(msgspec.Struct, frozen=True, kw_only=True):
    url: str
    player_id: str
    token: str
    name: str
    account: str = "person"
    public_key: str | None = None
    last_event: str | None = None
    """The id of the last event of the player's stream the last run read: the next reads from there, so that it
    takes up a game that run left unfinished and not the notices of games long over."""

    def fits(self, url: str, public_key: str | None) -> bool:
        """Whether this player may be played at ``url`` with the key whose public half is ``public_key``: every seat
        it takes is keyed with the key it registered, so another key could not sign its moves."""
        return self.url == same_url(url) and self.public_key == public_key


def same_url(url: str) -> str:
    return url.rstrip("/")


def load(path: Path) -> SavedPlayer | None:
    """The player kept at ``path``; ``None`` when there is none. A file that is not one is an error naming it, never
    overwritten: it may be a file the author keeps for something else."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return msgspec.json.decode(raw, type=SavedPlayer)
    except msgspec.DecodeError as e:
        raise NotAPlayerFile(f"{path} holds no saved player ({e}); move it away to register a new player") from None


def save(path: Path, player: SavedPlayer) -> None:
    """Write ``player`` to ``path`` atomically (a run killed while writing leaves the old file or the new one), readable
    by its owner only from the moment it exists."""
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, msgspec.json.format(msgspec.json.encode(player)) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(part, path)
