"""A command answered 503 "nothing was acknowledged" on a full disk is in the log after a restart.

docs/durability.md: "If writing the journal fails (a full disk), the write is answered 503 store_unavailable and every
later write too, until a restart", and "refused appends are not journalled". ``Journal.write`` hands the record to a
buffered file: on ENOSPC ``flush()`` raises, but the bytes it could not write stay in the ``BufferedWriter``'s
buffer. When the service stops (``EmbeddedStore.close`` → ``Journal.close``), the buffer is flushed again — the
operator has freed space by then, the very thing one does about a full disk — and the record lands, whole and
checksummed. The next start replays it: the move the player was told failed ("Retry shortly") was made. A client that
then plays on without the same ``command_id`` (or a person who chose another move) gets both.

Run on a real full filesystem: a 256 KiB tmpfs (needs root to mount; skipped otherwise).
"""

from __future__ import annotations

import contextlib
import os
import subprocess

import pytest

from tests.attack.conftest import ADMIN_HEADERS, bearer, inproc, settings


@contextlib.contextmanager
def tiny_tmpfs(path):
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(check=False, args=["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield path
    finally:
        subprocess.run(check=False, args=["umount", "-l", str(path)], capture_output=True)


async def test_a_command_refused_for_a_full_disk_is_not_in_the_log_after_a_restart(tmp_path):
    with tiny_tmpfs(tmp_path / "disk") as disk:
        data = disk / "data"
        (disk / "filler").write_bytes(bytes(200 * 1024))  # leave some 50 KiB: a few dozen commands
        config = settings(tmp_path, data_dir=data, projector=False, runner=False)
        async with inproc(config) as api:
            game = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
            token = (await api.post(f"/games/{game}/seats", json={"name": "Solo"})).json()["token"]
            view = (await api.get(f"/games/{game}", headers=bearer(token))).json()
            move = next(c for c in view["legal"] if c["type"] == "move")
            refused = None
            for i in range(2000):
                body = dict(move if i % 2 == 0 else {"type": "undo"}, command_id=f"c{i}")
                r = await api.post(f"/games/{game}/commands", json=body, headers=bearer(token))
                if r.status_code != 200:
                    assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable", r.text
                    refused = body["command_id"]
                    break
                acked = r.json()["version"]
            assert refused is not None, "the disk never filled"
            (disk / "filler").unlink()  # the operator frees space, then restarts the service
        async with inproc(config) as api:
            r = await api.get(f"/games/{game}/events", params={"after": acked}, headers=ADMIN_HEADERS)
            after = [(e["seq"], e["type"], e["command_id"]) for e in r.json()["events"]]
            assert not after, f"acknowledged up to version {acked}; {refused} was answered 503, yet the log now holds {after}"
