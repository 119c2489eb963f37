"""The embedded store's journal: checksummed records, a torn tail dropped, other damage refused until a repair,
and nothing cut off the file that is not kept beside it first."""

from __future__ import annotations

import gzip
import logging
import random
import struct
import zlib
from collections import Counter
from pathlib import Path

import pytest

from service.store import journal as journal_module
from service.store.journal import Journal, JournalCorrupt

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
        starts.append(path.stat().st_size if path.exists() else 0)
        j.write(item)
    j.close()
    return starts


def load(path, **kw) -> list[bytes]:
    return list(Journal.records(path, **kw))


def kept(path) -> list:
    """The files the journal at ``path`` set its dropped bytes aside in, oldest name first."""
    return sorted(path.parent.glob(path.name + ".damaged-*"))


def refused(path, *at: str) -> JournalCorrupt:
    """Loading ``path`` is refused with one line naming the file, ``at`` and the way out; nothing is touched."""
    before, copies = path.read_bytes(), kept(path)
    with pytest.raises(JournalCorrupt) as e:
        load(path)
    message = str(e.value)
    assert "\n" not in message and str(path) in message and "--repair" in message, message
    for part in at:
        assert part in message, message
    assert path.read_bytes() == before and kept(path) == copies
    return e.value


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
        records, dropped = Journal.load(path)
        assert list(records) == items[:-1], cut
        assert path.stat().st_size == last, cut  # the torn tail is gone from the file
        if cut > last:  # ... but kept beside it
            assert dropped.kind == "torn" and (dropped.offset, dropped.size) == (last, cut - last), cut
            assert Path(dropped.kept).read_bytes() == whole[last:cut], cut
        assert load(path) == items[:-1]
    assert len(kept(path)) == len(whole) - last - 1  # one file per cut, none written over another


def test_after_a_torn_tail_is_cut_the_journal_goes_on(tmp_path):
    items = payloads(3)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    path.write_bytes(path.read_bytes()[: starts[-1] + 5])
    assert load(path) == items[:-1]
    write(path, [b"after"])
    assert load(path) == items[:-1] + [b"after"]


def test_a_last_record_left_as_zeros_is_dropped(tmp_path):
    """A power cut without fsync may leave the last write's blocks allocated but never written: zeros."""
    items = payloads(3)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    path.write_bytes(whole[: starts[-1]] + bytes(len(whole) - starts[-1]))
    records, dropped = Journal.load(path)
    assert list(records) == items[:-1] and path.stat().st_size == starts[-1]
    assert dropped.kind == "zeros" and not dropped.needs_repair


def test_a_last_record_left_as_garbage_is_refused_until_a_repair(tmp_path):
    """Garbage where a whole record was is not what a torn write leaves: that record may have been acknowledged."""
    items = payloads(3)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    garbage = bytes([0xA5]) + random.Random(4).randbytes(len(whole) - starts[-1] - 1)  # no length that fits
    path.write_bytes(whole[: starts[-1]] + garbage)
    refused(path, f"byte {starts[-1]}")
    assert load(path, repair=True) == items[:-1]
    (copy,) = kept(path)
    assert copy.read_bytes() == garbage and path.stat().st_size == starts[-1]


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
    (copy,) = kept(path)
    assert copy.read_bytes() == bytes(4096) and copy.name.endswith(f"-at-{size}")
    with open(path, "ab") as f:  # more than a crash's few unwritten blocks: acknowledged writes may be gone
        f.write(bytes(2 << 20))
    assert refused(path, f"byte {size}", "zeros").dropped.kind == "damaged"


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
            hit = max(s for s in starts if s <= start + offset)  # a 1-byte payload: HEAD + 1 is the next record's
            refused(path, f"byte {hit}")  # the evidence is left as it was


def test_a_lost_span_in_the_middle_is_refused(tmp_path):
    items = payloads(6)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    path.write_bytes(whole[: starts[2] + 3] + whole[starts[3] :])  # most of record 2 missing
    with pytest.raises(JournalCorrupt):
        load(path)


def test_a_repair_keeps_the_records_before_the_damage_and_sets_the_rest_aside(tmp_path, caplog):
    items = payloads(4)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    damaged = bytearray(path.read_bytes())
    damaged[starts[2] + HEAD] ^= 0xFF
    path.write_bytes(bytes(damaged))
    after = items[3:]
    report = refused(path, f"byte {starts[2]}", f"{len(after)} intact records").dropped
    assert (report.kind, report.offset, report.intact, report.kept) == ("corrupt", starts[2], len(after), None)

    with caplog.at_level(logging.WARNING, logger="free_parking.journal"):
        records, dropped = Journal.load(path, repair=True, describe=lambda p: f"{len(p)} bytes")
    assert list(records) == items[:2] and path.read_bytes() == bytes(damaged[: starts[2]])
    (copy,) = kept(path)
    assert copy.read_bytes() == bytes(damaged[starts[2] :]) and dropped.kept == str(copy)
    assert dropped.held == dict(Counter(f"{len(x)} bytes" for x in after))  # the intact records set aside
    assert dropped.suspect == f"{len(items[2])} bytes"  # and the damaged one, as far as it can be read
    (line,) = [r.getMessage() for r in caplog.records if r.name == "free_parking.journal"]
    assert f"dropped {len(damaged) - starts[2]} bytes from byte {starts[2]}" in line and str(copy) in line
    assert load(path) == items[:2]  # repaired: it loads as it is from now on


def test_a_journal_cut_short_keeps_what_was_cut_and_says_so(tmp_path, caplog):
    """A file cut in the middle of a record looks like a torn write, so it starts: with the cut-off part kept
    beside it and a warning naming where, how much, and where it went."""
    items = payloads(30)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    cut = len(whole) // 2
    n = max(i for i, s in enumerate(starts) if s <= cut)
    path.write_bytes(whole[:cut])
    with caplog.at_level(logging.WARNING, logger="free_parking.journal"):
        assert load(path) == items[:n]
    (copy,) = kept(path)
    assert copy.read_bytes() == whole[starts[n] : cut]
    (line,) = [r.getMessage() for r in caplog.records if r.name == "free_parking.journal"]
    assert f"dropped {cut - starts[n]} bytes from byte {starts[n]}, a torn last record" in line and str(copy) in line


def test_a_flipped_bit_in_the_last_complete_record_is_refused_until_a_repair(tmp_path):
    """The record is whole-length, so no crash tore it: it was an acknowledged write, damaged since."""
    items = payloads(3) + [bytes(range(200))]
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    last = starts[-1]
    for at in range(last, len(whole)):  # every byte of it: length, checksum, payload
        for flip in (0x01, 0x10, 0x80):
            damaged = bytearray(whole)
            damaged[at] ^= flip
            path.write_bytes(bytes(damaged))
            assert refused(path, f"byte {last}").dropped.kind == "damaged", (at, flip)
    assert "a whole record whose checksum fails" in str(refused(path))
    records, dropped = Journal.load(path, repair=True)
    assert list(records) == items[:-1] and path.stat().st_size == last
    (copy,) = kept(path)
    assert copy.read_bytes() == bytes(damaged[last:]) and dropped.kind == "damaged"


def test_a_file_with_no_intact_record_is_refused_until_a_repair(tmp_path):
    """Someone put a gzip'd copy where the journal goes: starting empty would lose everything in it."""
    path = tmp_path / "journal.bin"
    write(path, [b"game %d " % i * 50 for i in range(40)])
    packed = gzip.compress(path.read_bytes())
    path.write_bytes(packed)
    assert refused(path, "byte 0", "no readable record").dropped.intact == 0
    assert load(path, repair=True) == []
    (copy,) = kept(path)
    assert copy.read_bytes() == packed and path.stat().st_size == 0


def test_a_garbage_tail_is_refused_and_its_intact_records_counted(tmp_path):
    """A mebibyte of garbage with records after it: one pass finds them, the refusal counts them."""
    items = payloads(6)
    path = tmp_path / "journal.bin"
    starts = write(path, items)
    whole = path.read_bytes()
    garbage = random.Random(8).randbytes(1 << 20)
    path.write_bytes(whole[: starts[3]] + garbage + whole[starts[3] :])
    after = len(items) - 3
    report = refused(path, f"byte {starts[3]}", f"{after} intact records").dropped
    assert (report.kind, report.intact, report.searched) == ("corrupt", after, True)
    path.write_bytes(whole + garbage)
    report = refused(path, f"byte {len(whole)}").dropped
    assert (report.kind, report.intact, report.size) == ("damaged", 0, len(garbage))


def test_a_kept_file_is_never_written_over(tmp_path, monkeypatch):
    monkeypatch.setattr(journal_module, "_stamp", lambda: "20250101T000000Z")  # two repairs in the same second
    items = payloads(3)
    path = tmp_path / "journal.bin"
    write(path, items)
    whole = path.read_bytes()
    tails = [b"\xa5" * 40, b"\x5a" * 40]
    for tail in tails:
        path.write_bytes(whole + tail)
        assert load(path, repair=True) == items
    assert [f.read_bytes() for f in kept(path)] == tails
    assert [f.name for f in kept(path)] == [f"journal.bin.damaged-20250101T000000Z-at-{len(whole)}{s}" for s in ("", ".2")]


@pytest.mark.parametrize("fill", ["random", "zeros"])
def test_the_search_after_damage_checksums_a_linear_number_of_bytes(tmp_path, monkeypatch, fill):
    """Each damaged byte is looked at once, and a checksum is taken only where a record plausibly starts: the
    bytes checksummed grow with the garbage, not with its cube (16 MiB of garbage once took 32 s)."""
    crc = {"calls": 0, "bytes": 0}

    class Counting:
        @staticmethod
        def crc32(data, *args):
            crc["calls"] += 1
            crc["bytes"] += len(data)
            return zlib.crc32(data, *args)

    monkeypatch.setattr(journal_module, "zlib", Counting)
    items = payloads(3)
    path = tmp_path / "journal.bin"
    write(path, items)
    whole = path.read_bytes()
    work = {}
    for size in (1 << 20, 16 << 20):
        garbage = random.Random(size).randbytes(size) if fill == "random" else bytes(size)
        path.write_bytes(whole + bytes([0xA5]) + garbage)  # 0xA5: no length that fits, not zeros
        crc.update(calls=0, bytes=0)
        with pytest.raises(JournalCorrupt):
            load(path)
        work[size] = dict(crc)
        assert crc["bytes"] <= len(whole) + 2 * size, (size, crc)
    assert work[16 << 20]["bytes"] <= 32 * max(work[1 << 20]["bytes"], len(whole)), work
