"""How the client tests play: as a bot author would, on the player's stream, with nothing but the client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from free_parking_client import ApiError, Client, GameOver, Turn, View

ROOT = Path(__file__).parents[2]


def bot_seat(url: str, game_id: str, bot: str = "greedy") -> None:
    """A server bot takes the game's next seat (the last one deals the game)."""
    r = httpx.post(f"{url}/games/{game_id}/seats", json={"bot": bot}, timeout=30)
    assert r.status_code == 201, r.text


def two_seats_with_a_bot(fp: Client, url: str) -> str:
    """A two-seat card game: the client's player first, then a bot."""
    game_id = fp.create_game("free-parking", 2).game_id
    fp.join(game_id)
    bot_seat(url, game_id)
    return game_id


def play(fp: Client, game_id: str, moves: int) -> View:
    """On each ``turn`` the player's stream tells of, act from the view's ``legal`` while a move is awaited (a 409:
    read again); after ``moves`` moves resign. Returns the last view once the stream says the game is over."""
    made = 0
    for event in fp.player_events():
        if isinstance(event, GameOver) and event.game_id == game_id:
            return fp.view(game_id)
        if not isinstance(event, Turn) or event.game_id != game_id:
            continue
        view = fp.view(game_id)
        while not view.finished and (view.playable or made >= moves):
            command = view.playable[0] if made < moves else {"type": "resign"}
            try:
                view = fp.act(game_id, command, view=view).view
                made += 1
            except ApiError as e:
                assert e.conflict, e
                view = fp.view(game_id)
    raise AssertionError("the player's stream ended")


def verify(fp: Client, game_id: str, directory: Path) -> subprocess.CompletedProcess[str]:
    """``python -m replays verify`` on the game's export, with the receipts file the client wrote, the service's keys
    and what the player brought (its seat, client seed and key)."""
    log, receipts, keys = directory / f"{game_id}.ndjson", directory / f"{game_id}.receipts.json", directory / "keys.json"
    log.write_bytes(fp.export(game_id))
    assert fp.receipts.write(receipts, game_id) > 0
    keys.write_text(json.dumps(fp.keys()))
    args = fp.receipts.verify_args(game_id, log, receipts, keys)
    return subprocess.run([sys.executable, "-m", "replays", "verify", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
