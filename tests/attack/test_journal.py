"""Journals that are damaged in ways the checksums do not see, or are not a file at all.

docs/durability.md: a journal only ``--repair`` may cut is refused at start with **one line** on stderr naming the
file and ``--repair``, exit status 2 (``serve.py`` checks it before Sanic starts a worker, because "a refusal there
is a traceback and a worker Sanic gives up on"), and ``--repair`` then starts the service.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import zlib
from pathlib import Path

import msgspec
import pytest

from service.store.journal import Journal, JournalCorrupt


def refusal_lines(stderr: str) -> list[str]:
    return [line for line in stderr.strip().splitlines() if "Deprecat" not in line and "warn(" not in line]


def _journal(data: Path) -> bytes:
    """A real journal: what the embedded store writes for a player, a game and a few of its events."""
    import asyncio

    from service.api.games import Games
    from service.events.base import Player
    from service.store.embedded import EmbeddedStore

    async def fill() -> None:
        store = await EmbeddedStore(data).open()
        await store.put_player("p_0123456789abcdef", {"name": "Ann", "created_at": "1"})
        games = Games(store)
        game = await games.create("free-parking", 2, {}, None)
        for i in range(2):
            await games.seat(game.game_id, Player(name=f"p{i}", player_id=f"g_{i:016x}", guest=True))
        await store.close()

    asyncio.run(fill())
    return (data / "journal.bin").read_bytes()


def _records(whole: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(whole):
        (n,) = struct.unpack_from(">I", whole, pos)
        out.append(whole[pos : pos + 8 + n])
        pos += 8 + n
    return out


def _record(payload: bytes) -> bytes:
    return struct.pack(">II", len(payload), zlib.crc32(payload)) + payload


@pytest.mark.parametrize("damage", ["last_record_twice", "foreign_payload", "unknown_op"])
def test_a_journal_whose_intact_records_do_not_replay_is_refused_in_one_line_and_repairable(tmp_path, proc_service, damage):
    """Every record's checksum holds, yet the journal does not replay: the last record written twice (a restore
    or copy that repeated a block, ``cat journal.bin.damaged-… >> journal.bin``), a checksummed payload that is not
    a store operation, or an operation this version does not know. Found: the check in ``serve.py`` passes, the
    worker's ``EmbeddedStore.open`` raises (``JournalCorrupt`` "did not apply again", ``msgspec.DecodeError`` or
    ``AttributeError``) — a 40-line traceback, Sanic's "Not all workers acknowledged a successful startup", exit
    status -9/137 — and **``--repair`` cannot start it either** (it fails the same way): nothing but editing the
    binary file by hand brings the service back."""
    data = tmp_path / "data"
    whole = _journal(data)
    extra = {
        "last_record_twice": _records(whole)[-1],
        "foreign_payload": _record(b"\x93\xa5hello\x01\x02 not a store operation"),
        "unknown_op": _record(msgspec.msgpack.encode(["drop_everything", []])),
    }[damage]
    (data / "journal.bin").write_bytes(whole + extra)
    refused = proc_service(["--data", str(data)], FREE_PARKING_RATE_LIMITS="false").run(timeout=30)
    lines = refusal_lines(refused.stderr)
    assert refused.returncode == 2 and len(lines) == 1 and "--repair" in lines[0], (
        f"exit {refused.returncode}, {len(lines)} lines on stderr, the last: {lines[-1] if lines else ''}")


@pytest.mark.parametrize("shape", ["directory", "fifo", "symlink_loop", "data_dir_is_a_file"])
def test_a_journal_that_is_not_a_regular_file_is_refused_in_one_line(tmp_path, proc_service, shape):
    """``journal.bin`` a directory, a named pipe or a symlink loop, or ``--data`` a file: found, a traceback (exit 1
    from ``serve.py``'s own check, or -9 from the worker), or — for a FIFO — a service that hangs at start forever,
    printing nothing (``Path.read_bytes`` blocks on it). Expected: one line naming the path, a non-zero exit."""
    data = tmp_path / "data"
    data.mkdir()
    path = data / "journal.bin"
    if shape == "directory":
        path.mkdir()
    elif shape == "fifo":
        os.mkfifo(path)
    elif shape == "symlink_loop":
        path.symlink_to("journal.bin")
    else:
        data.rmdir()
        data.write_bytes(b"not a folder")
    service = proc_service(["--data", str(data)], FREE_PARKING_RATE_LIMITS="false")
    try:  # the bound only turns a hang (the FIFO's) into a failure: a loaded CI host took over 8 s merely to exit
        refused = service.run(timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the service neither started nor refused within 90 s: {type(e).__name__}")
    lines = refusal_lines(refused.stderr)
    assert refused.returncode != 0 and len(lines) == 1 and str(data) in lines[0], (
        f"exit {refused.returncode}, {len(lines)} lines on stderr, the last: {lines[-1] if lines else ''}")


@pytest.mark.parametrize("written", [3, 8 + 100], ids=["half_a_header", "header_and_part_of_the_payload"])
def test_a_torn_last_write_followed_by_a_crash_s_zeros_is_dropped_not_refused(tmp_path, written):
    """A write cut short by a crash, in a file the crash extended with zeros (the block allocated, never written):
    a torn record followed by zeros to the end. Each alone is dropped at start (docs/durability.md: a torn last record,
    and up to 1 MiB of zeros); together the zeros make the torn header "fit", and the tail is refused as "a whole
    record whose checksum fails (an acknowledged write)", so the service does not come back after the crash until a
    person runs --repair. A record is never acknowledged before its last byte is written: this one cannot have been."""
    path = tmp_path / "journal.bin"
    journal = Journal(path)
    items = [random.Random(i).randbytes(300) for i in range(4)]
    for item in items[:-1]:
        journal.write(item)
    journal.close()
    whole = path.read_bytes()
    torn = (_record(items[-1]))[:written]
    path.write_bytes(whole + torn + bytes(4096 - (len(whole) + len(torn)) % 4096))
    try:
        records, dropped = Journal.load(path)
    except JournalCorrupt as e:
        pytest.fail(f"refused: {e}")
    assert list(records) == items[:-1] and dropped is not None and not dropped.needs_repair


def test_repair_starts_a_service_whose_journal_does_not_replay(tmp_path, proc_service):
    """The way out the docs give for a damaged journal, ``--repair``, does not apply here: the worker fails the same
    way with it, so the service cannot be started at all."""
    data = tmp_path / "data"
    whole = _journal(data)
    (data / "journal.bin").write_bytes(whole + _records(whole)[-1])
    service = proc_service(["--data", str(data), "--repair"], FREE_PARKING_RATE_LIMITS="false")
    service.start(seconds=20)  # fails the test (with the service's log) if it exits instead of answering /healthz
