"""The embedded store's journal: checksummed records, a torn tail dropped, damage before it refused."""

from __future__ import annotations

import os
import random
import struct
import zlib

import pytest

from service.events.journal import Journal, JournalCorrupt

HEAD = 8  # length (4 bytes, big-endian) and CRC-32 (4 bytes)


def payloads(n: int = 12, seed: int = 1) -> list[bytes]:
    rnd = random.Random(seed)
    sizes = [1, 2, 7, 8, 9, 255, 256, 4096, 70_000] + [rnd.randrange(1, 600) for _ in range(n)]
    return [rnd.randbytes(size) for size in sizes]


def write(path, items: list[bytes], *, fsync: bool = False) -> list[int]:
    """Write ``items``; answer each record's starting byte."""
    j = Journal(path, fsync=fsync)
    starts = []
    for item in items:
        starts.append(j._file.tell())
        j.write(item)
    j.close()
    return starts


def load(path) -> list[bytes]:
    return list(Journal.records(path))


def test_records_round_trip(tmp_path):
    items = payloads()
    path = tmp_path / "j" / "journal.bin"  # its folder is made on demand
    write(path, items)
    assert load(path) == items
    assert path.stat().st_size == sum(HEAD + len(x) for x in items)
    assert load(path) == items  # reading changes nothing


def test_records_are_appended_across_opens_and_with_fsync(tmp_path):
    path = tmp_path / "journal.bin"
    a, b = payloads(3, seed=2), payloads(3, seed=3)
    write(path, a)
    write(path, b, fsync=True)
    assert load(path) == a + b


def test_each_record_is_on_disk_when_write_returns(tmp_path):
    """Flushed to the operating system before the write is acknowledged: another reader sees it at once."""
    path = tmp_path / "journal.bin"
    j = Journal(path)
    for i, item in enumerate(payloads(5), start=1):
        j.write(item)
        assert len(load(path)) == i
    j.close()


def test_the_record_format_is_length_crc_payload(tmp_path):
    path = tmp_path / "journal.bin"
    write(path, [b"hello"])
    assert path.read_bytes() == struct.pack(">II", 5, zlib.crc32(b"hello")) + b"hello"


def test_a_missing_journal_has_no_records(tmp_path):
    assert load(tmp_path / "absent.bin") == []


def test_an_empty_record_is_refused(tmp_path):
    j = Journal(tmp_path / "journal.bin")
    with pytest.raises(ValueError):
        j.write(b"")
    j.close()


def test_a_torn_last_record_is_dropped_and_cut_off_at_every_offset(tmp_path):
    items = payloads(4) + [bytes(range(256)) + b"tail" * 10]  # the last record: 296 bytes of payload
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    last = starts[-1]
    for cut in range(last, len(whole)):  # every length from "nothing of it" to "all but its last byte"
        path.write_bytes(whole[:cut])
        assert load(path) == items[:-1], cut
        assert path.stat().st_size == last, cut  # the torn tail is gone from the file
        assert load(path) == items[:-1]


def test_after_a_torn_tail_is_cut_the_journal_goes_on(tmp_path):
    items = payloads(3)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    path.write_bytes(path.read_bytes()[: starts[-1] + 5])
    assert load(path) == items[:-1]
    write(path, [b"after"])
    assert load(path) == items[:-1] + [b"after"]


def test_a_garbled_complete_last_record_is_dropped(tmp_path):
    """A power cut without fsync may leave the last (unacknowledged) write as garbage or zeros."""
    items = payloads(3)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = bytearray(path.read_bytes())
    for garbage in (b"\x00" * (len(whole) - starts[-1]), os.urandom(len(whole) - starts[-1])):
        path.write_bytes(bytes(whole[: starts[-1]]) + garbage)
        assert load(path) == items[:-1]
        assert path.stat().st_size == starts[-1]


def test_zeros_after_the_last_record_are_dropped(tmp_path):
    """A file extended by a crash with its new blocks never written reads as zeros: not records."""
    items = payloads(3)
    path = tmp_path / "journal.bin"
    write(path, items)
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"\x00" * 4096)
    assert load(path) == items
    assert path.stat().st_size == size


@pytest.mark.parametrize("where", ["length", "crc", "payload"])
def test_damage_before_the_last_record_is_refused(tmp_path, where):
    items = payloads(6)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    offset = {"length": 0, "crc": 5, "payload": HEAD + 1}[where]
    for i, start in enumerate(starts[:-1]):
        for flip in (0x01, 0x80):
            damaged = bytearray(whole)
            damaged[start + offset] ^= flip
            path.write_bytes(bytes(damaged))
            with pytest.raises(JournalCorrupt):
                load(path)
            assert path.read_bytes() == bytes(damaged), (i, flip)  # the evidence is left as it was


def test_a_lost_span_in_the_middle_is_refused(tmp_path):
    items = payloads(6)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    path.write_bytes(whole[: starts[2] + 3] + whole[starts[3] :])  # most of record 2 missing
    with pytest.raises(JournalCorrupt):
        load(path)


def test_records_before_the_damage_are_read_first(tmp_path):
    items = payloads(4)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    damaged = bytearray(path.read_bytes())
    damaged[starts[2] + HEAD] ^= 0xFF
    path.write_bytes(bytes(damaged))
    got = []
    with pytest.raises(JournalCorrupt, match=f"byte {starts[2]}"):
        for record in Journal.records(path):
            got.append(record)
    assert got == items[:2]
