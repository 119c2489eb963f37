"""Compaction survives a kill -9 at every step (docs/durability.md, "Compaction"): the service, compacting on its own
under a load of guests' commands and bot games, kills itself after a named step (``FREE_PARKING_COMPACT_CRASH_AT``);
opened again (as a start opens it), the journal loads, every event a client was answered is in its game's log, byte for
byte, every game made is there, no leftover of the compaction is left, and writes go on. Before the rename the old journal is the store; after it, the new one."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import threading
import time

import httpx
import pytest

from service.store.compaction import STEPS
from service.store.stores import open_store
from service.store.journal import Journal
from service.store.oplog import decode_op
from tests.api.helpers import pick, playable
from tests.api.test_restart import _auth, _env, _kill_9
from tests.depth import SOAK
from tests.servers import free_port, wait_healthy
from tests.store.test_store_contract import batches, request

ROUNDS = 3
"""Kills per step under ``make soak``, each at another moment of its load."""
GROWTH = 60_000
"""The bytes the journal grows by under the load before compaction is due: a second or two of it."""


def serve(data, port: int, crash_at: str = "", **settings: str) -> subprocess.Popen:
    env = _env(FREE_PARKING_COMPACT_CRASH_AT=crash_at, FREE_PARKING_ARCHIVE_AFTER_MS="1", FREE_PARKING_RUNNER_INTERVAL_MS="50",
               FREE_PARKING_PROJECTOR_POLL_MS="50", FREE_PARKING_RATE_LIMITS="false", FREE_PARKING_HUMAN_PACE_MS="0",
               FREE_PARKING_HUMAN_CHANCE_MS="0", **settings)  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "service", "--data", str(data), "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_healthy(port, proc)
    return proc


class Load:
    """A guests' game played command after command (every event answered kept: seq → hash) and bot games created
    beside it (the finished ones archived: the journal grows, its live share falls), until ``stop``."""

    def __init__(self, base: str, seed: int) -> None:
        self.base, self.rnd = base, random.Random(seed)
        self.acknowledged: dict[int, str] = {}
        self.bot_games: list[str] = []
        self.stop = threading.Event()
        with httpx.Client(base_url=base, timeout=10) as api:
            self.game_id = api.post("/games", json={"kind": "free-parking", "seats": 3}).json()["game_id"]
            self.tokens = [api.post(f"/games/{self.game_id}/seats", json={"name": n}).json()["token"] for n in "ABC"]
        self.threads = [threading.Thread(target=self._play), threading.Thread(target=self._bots)]
        for thread in self.threads:
            thread.start()

    def _play(self) -> None:
        with httpx.Client(base_url=self.base, timeout=10) as client:
            while not self.stop.is_set():
                try:
                    views = [client.get(f"/games/{self.game_id}", headers=_auth(t)).json() for t in self.tokens]
                    token, v = next((t, v) for t, v in zip(self.tokens, views, strict=True) if playable(v["legal"]))
                    body = dict(pick(v["legal"], self.rnd), expected_version=v["version"])
                    r = client.post(f"/games/{self.game_id}/commands", json=body, headers=_auth(token))
                except (httpx.HTTPError, StopIteration, ValueError):
                    return
                if r.status_code == 200:
                    self.acknowledged.update({e["seq"]: e["hash"] for e in r.json()["events"]})

    def _bots(self) -> None:
        """Two-bot games one after the other, each played to its end (then archived) before the next is made."""
        with httpx.Client(base_url=self.base, timeout=10) as client:
            while not self.stop.is_set():
                try:
                    game_id = client.post("/games", json={"kind": "free-parking", "seats": 2}).json()["game_id"]
                    for _ in range(2):
                        client.post(f"/games/{game_id}/seats", json={"bot": "greedy"}).raise_for_status()
                    self.bot_games.append(game_id)
                    while not self.stop.is_set() and client.get(f"/games/{game_id}").json()["status"] != "finished":
                        time.sleep(0.05)
                except (httpx.HTTPError, ValueError, KeyError):
                    return

    def end(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


def first_op(data) -> str:
    return decode_op(next(iter(Journal.records(data / "journal.bin")))).op


KILLS = [s for s in STEPS for _ in range(ROUNDS)] if SOAK else ["tail-copied", "renamed"]
"""The kill points in ``make test``: the last step before the rename (the old journal whole, the leftover beside it) and
the first after it (the new journal, its folder not yet fsynced); ``make soak`` kills every step, three times each."""


@pytest.mark.parametrize("step", KILLS)
async def test_a_kill_at_any_step_of_a_compaction_loses_nothing_acknowledged_and_the_journal_starts(tmp_path, step):
    data, port = tmp_path / "data", free_port()
    proc = serve(data, port, crash_at=step, FREE_PARKING_COMPACT_RATIO="1.5",
                 FREE_PARKING_COMPACT_MIN_BYTES=str(GROWTH))  # fmt: skip
    work = Load(f"http://127.0.0.1:{port}", seed=STEPS.index(step))
    try:
        deadline = time.monotonic() + 120  # a bound only to fail rather than hang
        while proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert proc.poll() == 137, "the service did not kill itself at the step"
    finally:
        await asyncio.to_thread(work.end)
        _kill_9(proc)
    assert len(work.acknowledged) > 0 and work.bot_games
    renamed = STEPS.index(step) >= STEPS.index("renamed")
    assert (first_op(data) == "snapshot_begin") == renamed  # before the rename the old journal, after it the new
    assert (data / "journal.bin.compact").exists() == (step in ("snapshot-written", "tail-copied"))

    store = await open_store(None, data, archive=data / "archive")  # the journal starts, as the service opens it
    try:
        assert not (data / "journal.bin.compact").exists() and store.dropped is None
        stored = {e.seq: e.hash for e in await store.read(work.game_id)}
        assert {seq: stored.get(seq) for seq in work.acknowledged} == work.acknowledged
        assert None not in await store.metas(work.bot_games)
        assert (await store.append(request("g-after", batches("g-after")[0]))).outcome == "ok"  # and it goes on
    finally:
        await store.close()
