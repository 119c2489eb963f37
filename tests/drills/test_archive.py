"""Archiving survives a kill -9 at every step (docs/operating.md, "Archive"): killed after the file is written,
after it is read back and checked, or after the events are removed from the store, the game is readable — from the
store, the archive, or both, never neither — and the next run finishes the job, on the embedded store, Redis and a
Redis Cluster, and with the archive at a ``file://`` URL (through fsspec)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import msgspec
import pytest

from replays.verify import verify
from service.store.stores import open_store
from tests.api.conftest import ADMIN_HEADERS, fresh_app, make_settings
from tests.api.helpers import wait_for
from tests.depth import SOAK
from tests.http import serving
from tests.stores import client_at, drop_namespace_at

STEPS = ("written", "checked", "removed")
STORES = ("embedded", "redis", "cluster", "embedded, file://")
KILLS = [(store, step) for store in STORES for step in STEPS] if SOAK else [
    *(("embedded", step) for step in STEPS),  # every step once, on the store whose data folder the kill must leave whole
    ("redis", "removed"), ("cluster", "removed"),  # the removal is each store's own code (the script, the slots)
    ("embedded, file://", "written"), ("embedded, file://", "checked"),  # the write and read-back through fsspec
]  # fmt: skip
"""The kill points by risk in ``make test``: where two stores run the same code at a step (the archive's file is written
and read back before the store is touched), that step is killed on one; ``make soak`` kills every step on every store."""
LEASE_MS = 500  # the killed run's lease on the game's partition runs out soon: the next run waits on that


async def finished_game(settings) -> tuple[str, int]:
    """A two-bot game played to its end and projected, in the store ``settings`` name; its id and version."""
    app = fresh_app(settings)
    async with serving(app) as api:
        game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=ADMIN_HEADERS)).json()["game_id"]
        for _ in range(2):
            await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})

        async def projected():
            meta = await app.ctx.store.meta(game_id)
            scores = (await api.get(f"/games/{game_id}/scores")).json()
            return meta["status"] == "finished" and scores["version"] == int(meta["version"]) and int(meta["version"])

        return game_id, await wait_for(projected, seconds=60)


def archive_run(settings, crash_at: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FREE_PARKING_") and k != "REDIS_URL"}
    env.update(settings.to_env(), FREE_PARKING_ARCHIVE_CRASH_AT=crash_at)
    return subprocess.run([sys.executable, "-m", "service", "archive", "--data", str(settings.data_dir), "--after-ms", "0",
                           "--lease-ms", str(LEASE_MS)],
                          env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


async def readable(settings, game_id: str, version: int) -> tuple[bool, bool]:
    """The game's whole log verifies, read as the service reads it; and (in the store, in the archive)."""
    store = await open_store(settings.redis_url, settings.data_dir, namespace=settings.namespace, archive=settings.archive_root)
    try:
        envelopes = await store.read(game_id)
        assert len(envelopes) == version and envelopes[-1].seq == version
        in_store = bool(await store.r.exists(store.keys.stream(game_id)))
        assert store.archive.remote == bool(settings.archive_dir)
        archived = store.archive.read(game_id)
        if archived is not None:
            assert verify(*archived).ok and archived[1] == envelopes
        return in_store, archived is not None
    finally:
        await store.close()


async def lease_gone(settings, game_id: str) -> bool:
    """The killed run's lease on the game's partition has run out (on the embedded store it died with the process)."""
    if not settings.redis_url:
        return True
    from service.store.keys import Keys, partition

    async with client_at(settings.redis_url) as client:  # on a cluster, the node that holds the partition's slot
        return not await client.exists(Keys(settings.namespace).lease("archive", partition(game_id)))


@pytest.fixture
async def made(request, tmp_path, kill):
    """A finished game in a store of each kind: (settings, game id, version); the embedded store's data folder is
    copied per step, so each kill starts from the game live. On the cluster the service is given a node's URL and
    finds the cluster by itself (``cluster`` auto), as ``python -m service archive`` does. The last has its archive
    at a ``file://`` URL (through fsspec), inside the data folder so that it is copied with it."""
    kind, _, url = kill[0].partition(", ")
    if kind == "cluster":
        request.getfixturevalue("redis_cluster")
    settings = make_settings(kind, tmp_path, archive_after_ms=0,
                             **({"archive_dir": f"file://{tmp_path / 'data' / 'archive-url'}"} if url else {}))
    yield settings, *(await finished_game(settings))
    if settings.redis_url:
        await drop_namespace_at(settings.redis_url, settings.namespace)


@pytest.mark.parametrize("kill", KILLS, ids=[f"{store}-{step}" for store, step in KILLS])
async def test_a_kill_at_any_step_of_archiving_leaves_the_game_readable_and_the_next_run_finishes(made, kill, tmp_path):
    settings, game_id, version = made
    step = kill[1]
    if not settings.redis_url:  # each step from the game live: a copy of the data folder
        copy = tmp_path / f"data-{step}"
        shutil.copytree(settings.data_dir, copy)
        url = settings.archive_dir and f"file://{copy / 'archive-url'}"
        settings = msgspec.structs.replace(settings, data_dir=copy, archive_dir=url)
    killed = archive_run(settings, crash_at=step)
    assert killed.returncode == 137, killed.stderr
    in_store, in_archive = await readable(settings, game_id, version)
    assert (in_store, in_archive) == {"written": (True, True), "checked": (True, True), "removed": (False, True)}[step]
    await wait_for(lambda: lease_gone(settings, game_id), seconds=30)
    again = archive_run(settings)
    assert again.returncode == 0, again.stderr
    assert ("nothing to archive" if step == "removed" else "1 archived") in again.stdout, again.stdout + again.stderr
    assert await readable(settings, game_id, version) == (False, True)
    assert "nothing to archive" in archive_run(settings).stdout  # done once: the next run finds nothing
