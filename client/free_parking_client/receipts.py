"""What a player keeps of each game to check it later without trusting the service (docs/api.md, "Evidence a player
keeps"): every receipt it was shown, the seed commitment, its seat, client seed and key. ``write`` saves the receipts
as the file ``python -m replays verify LOG --receipts FILE`` reads (a JSON list of receipts), and ``verify_args``
gives the rest of that command line.

Receipts are kept as the service sent them, not re-encoded: a field a later receipt version adds stays, and with it
the signature's meaning.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec


@dataclass
class Evidence:
    """One game's: its receipts by (version, key, signature), and what the player brought to it."""

    game_id: str
    receipts: dict[tuple[int, str, str], dict[str, Any]] = field(default_factory=dict)
    commitment: str | None = None
    seat: int | None = None
    client_seed: str | None = None
    public_key: str | None = None


def _receipt_in(item: Any) -> dict[str, Any] | None:
    """The receipt ``item`` is, or carries as ``receipt`` (a view, a command's answer, an event, a page)."""
    if isinstance(item, msgspec.Struct):
        item = msgspec.to_builtins(item)
    if not isinstance(item, dict):
        return None
    if "sig" in item and "head" in item and "version" in item:
        return item
    inner = item.get("receipt")
    return inner if isinstance(inner, dict) and "sig" in inner else None


class Receipts:
    """Every receipt the client was shown, per game; the evidence of each game it played."""

    def __init__(self) -> None:
        self.games: dict[str, Evidence] = {}

    def evidence(self, game_id: str) -> Evidence:
        return self.games.setdefault(game_id, Evidence(game_id))

    def keep(self, item: Any) -> None:
        """Keep the receipt ``item`` is or carries (one per version and key: every copy is the same)."""
        receipt = _receipt_in(item)
        if receipt is None or not isinstance(receipt.get("game_id"), str):
            return
        key = (receipt["version"], receipt.get("key_id", ""), receipt["sig"])
        self.evidence(receipt["game_id"]).receipts.setdefault(key, receipt)

    def of(self, game_id: str) -> list[dict[str, Any]]:
        """The game's receipts, by version."""
        kept = self.games.get(game_id)
        return [kept.receipts[k] for k in sorted(kept.receipts)] if kept else []

    def write(self, path: str | os.PathLike[str], game_id: str | None = None) -> int:
        """Write the receipts of ``game_id`` (every game's when ``None``) to ``path`` as a JSON list, the file
        ``replays verify --receipts`` reads; returns how many."""
        games = [game_id] if game_id is not None else sorted(self.games)
        receipts = [r for g in games for r in self.of(g)]
        Path(path).write_bytes(msgspec.json.encode(receipts) + b"\n")
        return len(receipts)

    def read(self, path: str | os.PathLike[str]) -> int:
        """Keep every receipt of a file ``write`` made (a JSON list), or of one answer a line; returns how many."""
        data = Path(path).read_bytes().strip()
        if not data:
            return 0
        try:
            items = msgspec.json.decode(data)
        except msgspec.DecodeError:
            items = [msgspec.json.decode(line) for line in data.splitlines() if line.strip()]
        items = items if isinstance(items, list) else [items]
        for item in items:
            self.keep(item)
        return len(items)

    def verify_args(self, game_id: str, log: str | os.PathLike[str], receipts: str | os.PathLike[str],
                    keys: str | os.PathLike[str] | None = None) -> list[str]:
        """The arguments of ``python -m replays verify`` for the game: its exported ``log``, the ``receipts`` file
        written for it, the service's ``keys`` (``GET /keys`` saved), and what the player brought to it."""
        kept = self.evidence(game_id)
        args = [str(log), "--receipts", str(receipts)]
        if keys is not None:
            args += ["--key", str(keys)]
        if kept.commitment:
            args += ["--commitment", kept.commitment]
        if kept.seat is not None and kept.client_seed:
            args += ["--client-seed", f"{kept.seat}:{kept.client_seed}"]
        if kept.seat is not None and kept.public_key:
            args += ["--player-key", f"{kept.seat}:{kept.public_key}"]
        return args
