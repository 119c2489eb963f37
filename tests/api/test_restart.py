"""The embedded store survives ``kill -9``: every acknowledged event, token and game is there after a restart."""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import httpx
import msgspec

from replays.verify import verify
from service.api.settings import Settings
from service.cli import serve
from service.events.export import load
from service.rules.engine import Game, rules_for
from service.rules.resign import playing_on
from tests.api.helpers import pick, playable
from tests.servers import _children, _kill, free_port, wait_healthy

ADMIN = "restart-admin"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}
    return {**env, "FREE_PARKING_ADMIN_TOKEN": ADMIN, **extra}


def start(data, port: int, *args: str, **env_extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "--data", str(data), "--port", str(port), *args],
        env=_env(**env_extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(port, proc)
    return proc


def test_kill_9_mid_game_loses_nothing_acknowledged(tmp_path):
    """Commands stream in until the service is killed at an arbitrary moment; after a restart every event of
    every answered command is there, byte for byte, and the game plays on."""
    port = free_port()
    proc = start(tmp_path / "data", port)
    base = f"http://127.0.0.1:{port}"
    rnd = random.Random(7)
    acknowledged: dict[int, str] = {}  # seq → hash, from answers the client received
    stop = threading.Event()
    with httpx.Client(base_url=base, timeout=10) as api:
        player = api.post("/players", json={"name": "Ann"}).json()
        game_id = api.post("/games", json={"kind": "free-parking", "seats": 3}).json()["game_id"]
        tokens = [player["token"]]
        assert api.post(f"/games/{game_id}/seats", json={}, headers=_auth(player["token"])).status_code == 201
        for name in ("Bob", "Cy"):
            tokens.append(api.post(f"/games/{game_id}/seats", json={"name": name}).json()["token"])

    def play() -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            while not stop.is_set():
                try:
                    views = [client.get(f"/games/{game_id}", headers=_auth(t)).json() for t in tokens]
                    token, v = next((t, v) for t, v in zip(tokens, views, strict=True) if playable(v["legal"]))
                    r = client.post(f"/games/{game_id}/commands", json=dict(pick(v["legal"], rnd), expected_version=v["version"]), headers=_auth(token))
                except (httpx.HTTPError, StopIteration, ValueError):
                    return
                if r.status_code == 200:
                    acknowledged.update({e["seq"]: e["hash"] for e in r.json()["events"]})

    player_thread = threading.Thread(target=play)
    player_thread.start()
    try:
        deadline = time.time() + 30
        while len(acknowledged) < 40 and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(rnd.random() * 0.2)  # somewhere in the middle of a command
    finally:
        _kill_9(proc)
        stop.set()
        player_thread.join()
    assert len(acknowledged) >= 40

    proc = start(tmp_path / "data", port)
    try:
        with httpx.Client(base_url=base, timeout=10) as api:
            header, envelopes = load(api.get(f"/games/{game_id}/export", headers=_auth(ADMIN)).content)
            assert verify(header, envelopes).ok
            stored = {e.seq: e.hash for e in envelopes}
            assert {seq: stored.get(seq) for seq in acknowledged} == acknowledged
            me = api.get(f"/games/{game_id}", headers=_auth(player["token"])).json()
            assert me["seat"] is not None and me["version"] == len(envelopes)
            assert game_id in [g["game_id"] for g in api.get("/games").json()["games"]]
            # her own stream lost nothing either: a turn for every time the log says her move became awaited, each
            # once (the kill may fall between an append and its relay: the projector relays it after the restart)
            turns = awaited_turns(header, envelopes, player["player_id"])
            said = _player_messages(api, player["token"], lambda m: [d["version"] for d in m if d["type"] == "turn"] == turns)
            assert [d["seat"] for d in said if d["type"] == "seated"][:1] == [0]  # then once per trade of places
            token, v = _someone_to_move(api, game_id, tokens)
            r = api.post(f"/games/{game_id}/commands", json=dict(v["legal"][0], expected_version=v["version"]), headers=_auth(token))
            assert r.status_code == 200, r.text
    finally:
        _kill_9(proc)


def awaited_turns(header, envelopes, player_id: str) -> list[int]:
    """From the game's log alone: the versions (ends of a command's batch) at which ``player_id``'s playing moves
    went from none to some, at whichever seat they sit then (Trade Places moves players between seats) — the ``turn``
    events their stream must hold."""
    config = msgspec.json.decode(header.config, type=rules_for(header.kind).CONFIG)
    game = Game.new(header.kind, header.game_id, config, bytes(32), header.rules_version)  # a fold needs no seed
    ends = [e.seq - 1 for e in envelopes[1:] if bytes(e.command) != b"null"] + [envelopes[-1].seq]
    out, was, done = [], False, 0
    for end in ends:
        game.fold(envelopes[done:end])
        done = end
        seat = next((i for i, st in enumerate(game.state.seats) if st.player and st.player.player_id == player_id), None)
        now = (seat is not None and game.rules.status_of(game.state) == "playing"
               and bool(playing_on(game.rules.legal_commands(game.state, seat))))
        if now and not was:
            out.append(end)
        was = now
    return out


def _player_messages(api: httpx.Client, token: str, until, seconds: float = 60) -> list[dict]:
    """The player's stream's events from the oldest kept, read until ``until(events)`` holds. The stream's pings keep
    a read from ever timing out: a stream that never says what is expected failed a CI run by hanging it, so after
    ``seconds`` of lines it fails, with what it said."""
    said: list[dict] = []
    deadline = time.monotonic() + seconds
    with api.stream("GET", "/players/me/stream", headers=_auth(token), timeout=httpx.Timeout(10, read=30)) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data:"):
                said.append(json.loads(line.removeprefix("data:")))
                if until(said):
                    return said
            if time.monotonic() > deadline:
                break
    raise AssertionError(f"the stream did not say what was expected: {said}")


def test_bot_seats_survive_a_kill_9_and_play_on_after_the_restart(tmp_path):
    """A table filled with server bots is the service's own to play: killed mid-game, the service finds the bots'
    games again at start (the store's due set) and they play to the end with nobody asking."""
    port = free_port()
    slow = {"FREE_PARKING_BOT_DELAY_MS": "30"}  # the games are mid-play when the service dies
    proc = start(tmp_path / "data", port, **slow)
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=10) as api:
        games = []
        for kind, seats, bots in (("free-parking", 3, ("greedy", "random", "greedy")), ("solitaire", 1, ("solver",))):
            game_id = api.post("/games", json={"kind": kind, "seats": seats}).json()["game_id"]
            for name in bots:
                assert api.post(f"/games/{game_id}/seats", json={"bot": name}).status_code == 201
            games.append(game_id)
        deadline = time.time() + 30
        while time.time() < deadline and min(api.get(f"/games/{g}").json()["version"] for g in games) < 12:
            time.sleep(0.05)
        at_kill = {g: api.get(f"/games/{g}").json() for g in games}
    _kill_9(proc)
    assert all(v["status"] == "playing" for v in at_kill.values()), "the bots finished before the kill"

    proc = start(tmp_path / "data", port)
    try:
        with httpx.Client(base_url=base, timeout=10) as api:
            deadline = time.time() + 60
            while time.time() < deadline and any(api.get(f"/games/{g}").json()["status"] != "finished" for g in games):
                time.sleep(0.1)
            for game_id in games:
                v = api.get(f"/games/{game_id}").json()
                assert v["status"] == "finished" and v["version"] > at_kill[game_id]["version"], v["status"]
                header, envelopes = load(api.get(f"/games/{game_id}/export").content)
                assert verify(header, envelopes).ok
    finally:
        _kill_9(proc)


def test_a_damaged_journal_stops_the_service_with_one_line_until_it_is_repaired(tmp_path):
    """The last acknowledged write damaged since (a flipped bit): the service refuses to start — one line on
    stderr, exit status 2, the file untouched — and with --repair starts, the damaged record kept beside it."""
    data, port = tmp_path / "data", free_port()
    proc = start(data, port)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as api:
        assert "token" in api.post("/players", json={"name": "Ann"}).json()
    _kill_9(proc)
    journal = data / "journal.bin"
    damaged = bytearray(journal.read_bytes())
    damaged[-1] ^= 0x01  # the last record's last byte: whole-length, its checksum fails
    journal.write_bytes(bytes(damaged))

    refused = subprocess.run(
        [sys.executable, "-m", "service", "serve", "--data", str(data), "--port", str(port)],
        env=_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert str(journal) in line and "byte " in line and "--repair" in line, line
    assert journal.read_bytes() == bytes(damaged) and list(data.glob("journal.bin.damaged-*")) == []

    proc = start(data, port, "--repair")  # answers /healthz
    try:
        (kept,) = data.glob("journal.bin.damaged-*")
        assert bytes(damaged).endswith(kept.read_bytes()) and journal.stat().st_size == len(damaged) - kept.stat().st_size
    finally:
        _kill_9(proc)


def _kill_9(proc: subprocess.Popen) -> None:
    """SIGKILL the service — its main process and its worker at once, as ``kill -9`` of a process group (or the OOM
    killer taking the whole service) would: a worker left behind would go on answering on the port with the old
    data, and a test of the restart would read from it."""
    children = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    for pid in children:
        _kill(pid)
    proc.wait()


def test_repair_is_a_flag_and_a_setting():
    p = argparse.ArgumentParser()
    serve.add_arguments(p)
    assert serve.settings_from(p.parse_args(["--repair"])).repair is True
    assert serve.settings_from(p.parse_args([])).repair is Settings.from_env().repair
    assert Settings.from_env({"FREE_PARKING_REPAIR": "true"}).repair is True


def _auth(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_a_start_says_where_to_open_the_service_and_what_store_and_durability_are_in_force(tmp_path):
    """`make run`'s first words: the address to open, the store and its durability (docs/durability.md), and no
    warning of anything deprecated."""
    data, port = tmp_path / "data", free_port()
    proc = subprocess.Popen([sys.executable, "-m", "service", "--data", str(data), "--port", str(port)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        wait_healthy(port, proc)
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    (line,) = [line for line in output.splitlines() if "open http://" in line]
    assert f"open http://127.0.0.1:{port}/" in line and f"store: embedded ({data})" in line, line
    assert "durability: " in line and "durability: ;" not in line, line
    assert "deprecat" not in output.lower() and "warning" not in output.lower(), output


def _someone_to_move(api: httpx.Client, game_id: str, tokens: list[str]) -> tuple[str, dict]:
    """A seat with a legal command, and its view: at once, or once the server has done what it owes the game after the
    restart (a wait whose deadline passed while the service was down is the runner's to time out) — a condition
    waited on, with a bound only to fail rather than hang."""
    views: list[dict] = []
    for _ in range(600):
        views = [api.get(f"/games/{game_id}", headers=_auth(t)).json() for t in tokens]
        found = next(((t, v) for t, v in zip(tokens, views, strict=True) if playable(v.get("legal") or [])), None)
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no seat can move after the restart: {[(v.get('status'), v.get('pending'), v.get('turn')) for v in views]}")
