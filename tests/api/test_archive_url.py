"""The service with its archive at a URL (fsspec; docs/operating.md, "Archive"): a ``file://`` root, shared by the
``python -m service archive`` process that writes it and the service that reads it, and a ``memory://`` root in this
process. Every read of an archived game answers as it did live — view (with its receipt), events, audit, move log,
replay, exports, scores — and its export passes ``python -m replays verify`` with the receipt a reader kept; a
damaged object is answered 503 ``archive_damaged``, a backend that fails 503 ``archive_unavailable``, never a 500."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from service.store.keys import partition
from tests.api.conftest import make_settings, served
from tests.api.helpers import wait_for
from tests.api.test_archive import _archived, _scored, _status, answers, finished_bot_game

ROOT = Path(__file__).resolve().parents[2]


async def played(api) -> tuple[str, dict[str, tuple[int, bytes]]]:
    """A bot game played to its end and scored; its id and every read of it, live."""
    game_id = await finished_bot_game(api)
    await wait_for(lambda: _status(api, game_id, "finished"), seconds=60)
    await wait_for(lambda: _scored(api, game_id), seconds=30)
    live = await answers(api, game_id)
    assert {status for status, _ in live.values()} == {200}, live
    return game_id, live


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip


async def test_a_file_url_archive_written_by_the_archive_command_serves_every_read_and_the_export_verifies(tmp_path):
    """``file://``: fsspec's local filesystem, a real folder two processes share — the archive command writes the
    game there, the service (started anew, as a worker that never saw the game live) reads it back through the URL."""
    root = tmp_path / "archive-url"
    settings = make_settings("embedded", tmp_path, archive_dir=f"file://{root}", archive_after_ms=0)  # 0: no runner
    async with served(settings) as api:
        game_id, live = await played(api)
        keys = (await api.get("/keys")).content

    env = {k: v for k, v in os.environ.items() if not k.startswith("FREE_PARKING_") and k != "REDIS_URL"}
    env.update(settings.to_env())
    done = run("-m", "service", "archive", "--data", str(settings.data_dir), "--archive", f"file://{root}",
               "--after-ms", "0", env=env)  # fmt: skip
    assert done.returncode == 0 and "1 archived" in done.stdout, done.stdout + done.stderr
    assert (root / f"{partition(game_id):02d}" / f"{game_id}.ndjson.gz").is_file()  # the URL's folder, on disk

    async with served(settings) as api:
        store = api.app.ctx.store
        assert (await store.meta(game_id))["archived"] == "1" and not await store.r.exists(store.keys.stream(game_id))
        assert await answers(api, game_id) == live
        view = (await api.get(f"/games/{game_id}")).json()
        assert view["receipt"] is not None and view["receipt"]["version"] == view["version"]
        assert (await api.get("/readyz")).json()["archive"] is True

    (tmp_path / "game.ndjson").write_bytes(live["/export"][1])
    (tmp_path / "view.json").write_text(json.dumps(view))
    (tmp_path / "keys.json").write_bytes(keys)
    verified = run("-m", "replays", "verify", str(tmp_path / "game.ndjson"), "--receipts", str(tmp_path / "view.json"),
                   "--key", str(tmp_path / "keys.json"))  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK") and "receipt" in verified.stdout, verified.stdout


async def test_a_memory_url_archive_serves_every_read_and_a_damaged_or_failing_one_is_a_clear_503(tmp_path, monkeypatch):
    """``memory://`` in this process: the runner archives the game there; every read answers as live; then the
    object is damaged (503 ``archive_damaged``, every read), restored (read again), and the backend fails
    (503 ``archive_unavailable``, ``/readyz`` not ready)."""
    settings = make_settings("embedded", tmp_path, archive_dir=f"memory://b-{uuid.uuid4().hex[:8]}/archive",
                             archive_after_ms=1, runner_interval_ms=50)  # fmt: skip
    async with served(settings) as api:
        api.app.ctx.runner.archiver.after_ms = 3_600_000  # hold it back while the game is read live
        game_id, live = await played(api)
        api.app.ctx.runner.archiver.after_ms = 1
        await api.app.ctx.runner.act(game_id)
        assert await _archived(api, game_id)
        archive = api.app.ctx.store.archive
        assert archive.remote and not archive.folder and type(archive.fs).__name__ == "MemoryFileSystem"
        whole = archive.fs.cat_file(archive._path(game_id))
        api.app.ctx.games.cache.clear()  # as a worker that never saw the game live
        archive._cache.clear()
        assert await answers(api, game_id) == live
        assert (await api.get("/readyz")).json()["archive"] is True

        archive.fs.pipe_file(archive._path(game_id), whole[: len(whole) // 2])  # cut short
        api.app.ctx.games.cache.clear()
        archive._cache.clear()
        damaged = await answers(api, game_id)
        assert damaged.pop("/scores") == live["/scores"]  # a read model the store keeps, not read from the archive
        assert {status for status, _ in damaged.values()} == {503}, damaged
        assert {json.loads(body)["error"]["code"] for _, body in damaged.values()} == {"archive_damaged"}, damaged
        assert (await api.get("/readyz")).json()["archive"] is True  # the archive answers; one game in it is damaged

        archive.fs.pipe_file(archive._path(game_id), whole)  # restored from a backup
        assert await answers(api, game_id) == live

        def down(*args, **kwargs):
            raise TimeoutError("the object store does not answer")

        api.app.ctx.games.cache.clear()
        archive._cache.clear()
        monkeypatch.setattr(archive.fs, "cat_file", down)
        monkeypatch.setattr(archive.fs, "ls", down)
        unavailable = (await api.get(f"/games/{game_id}/events"))
        assert unavailable.status_code == 503 and unavailable.json()["error"]["code"] == "archive_unavailable"
        ready = await api.get("/readyz")
        assert ready.status_code == 503 and ready.json()["archive"] is False
        monkeypatch.undo()
        assert (await api.get("/readyz")).status_code == 200
