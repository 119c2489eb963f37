"""The demo's own player ("you"): a key and a client seed of its own, a seat taken with them, moves chosen from the
view's ``legal`` and each one signed — and what a player keeps of a game to check it later, as the page does: the
seed commitment it was shown, the receipt of every view and answer it read, its key and its client seed.

Kept apart from ``demo.py``, which runs the games and says what was found; this is the client a player would write
(docs/signed-commands.md, docs/rng.md).
"""

from __future__ import annotations

import asyncio
import random
import secrets
from typing import Any

import httpx
import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.events.command_sig import signed_command
from service.events.envelope import canonical
from service.events.receipt import Receipt

NAME = "You"
MOST = 2_000  # a solitaire's commands: past them the player resigns
SCORING = {"free_parking": 8, "run_errand": 8, "feed_meter": 4, "officer_jones": 4, "talk_out": 4, "end_turn": 3}
"""The card game's commands that score, chosen more often than the rest (weight 1): the game ends sooner."""


class Kept:
    """What a player keeps of one game: the ``replays verify`` arguments it has (none of them the service's word)."""

    def __init__(self, game_id: str, commitment: str) -> None:
        self.game_id, self.commitment = game_id, commitment
        self.receipts: dict[int, dict] = {}  # by version: one a version is as good as every copy of it
        self.seat: int | None = None  # the seat "you" joined (the key and the seed are claimed for it)
        self.public_key: str | None = None
        self.client_seed: str | None = None

    def keep(self, answer: dict) -> dict:
        """``answer`` (a view, or a command's answer), its receipt kept."""
        receipt = answer.get("receipt")
        if receipt is not None and receipt.get("game_id") == self.game_id:
            self.receipts.setdefault(receipt["version"], receipt)
        return answer

    def receipt_list(self) -> list[Receipt]:
        return msgspec.convert(list(self.receipts.values()), list[Receipt])

    def player_keys(self) -> dict[int, str] | None:
        return {self.seat: self.public_key} if self.seat is not None and self.public_key else None

    def client_seeds(self) -> dict[int, str] | None:
        return {self.seat: self.client_seed} if self.seat is not None and self.client_seed else None


class You:
    """A keyed player at one game: joins, then plays until the game ends, every command signed for its version."""

    def __init__(self, api: httpx.AsyncClient, kept: Kept, rnd: random.Random) -> None:
        self.api, self.kept, self.rnd = api, kept, rnd
        self._key = Ed25519PrivateKey.generate()
        self.token = ""
        self.sent = 0

    async def join(self) -> None:
        public_key = self._key.public_key().public_bytes_raw().hex()
        client_seed = secrets.token_hex(32)
        r = await self.api.post(f"/games/{self.kept.game_id}/seats",
                                json={"name": NAME, "public_key": public_key, "client_seed": client_seed})
        r.raise_for_status()
        self.token = r.json()["token"]
        self.kept.seat, self.kept.public_key, self.kept.client_seed = r.json()["seat"], public_key, client_seed

    async def view(self) -> dict:
        r = await self.api.get(f"/games/{self.kept.game_id}", headers={"authorization": f"Bearer {self.token}"})
        r.raise_for_status()
        return self.kept.keep(r.json())

    async def play(self) -> dict:
        """Until the game is over (its last view): acts when the game waits on this seat, else looks again shortly."""
        while (v := await self.view())["status"] != "finished":
            command = choose(v, self.rnd)
            if v["kind"] == "solitaire" and self.sent >= MOST:
                command = {"type": "resign"}  # a hint leading round in a circle
            if command is None:
                await asyncio.sleep(0.02)
                continue
            await self.send(v["version"], command)
        return v

    async def send(self, version: int, command: dict[str, Any]) -> None:
        """``command`` signed for ``version``; a 409 (the game moved on: a bot's move, a deadline) is read again, and
        a 429 (a service's limit on a player's commands, ``--url``'s) waits its ``Retry-After`` first."""
        command_id = f"you-{self.sent}"
        self.sent += 1
        message = signed_command(self.kept.game_id, version, command_id, canonical(command))
        body = {**command, "command_id": command_id, "expected_version": version, "sig": self._key.sign(message).hex()}
        r = await self.api.post(f"/games/{self.kept.game_id}/commands", json=body,
                                headers={"authorization": f"Bearer {self.token}"})
        if r.status_code == 429:
            await asyncio.sleep(float(r.headers.get("retry-after", "1")))
        elif r.status_code != 409:
            r.raise_for_status()
            self.kept.keep(r.json())


def choose(v: dict, rnd: random.Random) -> dict | None:
    """The command to send on view ``v``, ``None`` when the game waits on someone else."""
    legal = v.get("legal") or []
    if not legal:
        return None
    if v["kind"] == "solitaire":
        if v.get("hint"):
            return v["hint"]
        moves = [c for c in legal if c["type"] in ("move", "redeal")]
        return moves[0] if moves else {"type": "resign"}  # stuck: undoing would only go round
    pending = v.get("pending")
    if (pending["seat"] if pending else v.get("turn")) != v["seat"]:
        return None  # a card playable out of turn is there too: this player waits for its turn
    legal = [c for c in legal if c["type"] != "resign"]  # the demo plays a game to its end: it never resigns
    kinds = sorted({c["type"] for c in legal})
    kind = rnd.choices(kinds, [SCORING.get(k, 1) for k in kinds])[0]
    return rnd.choice([c for c in legal if c["type"] == kind])
