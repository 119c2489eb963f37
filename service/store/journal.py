"""An append-only file of checksummed records: how the embedded store survives a restart.

A record is ``length (4 bytes, big-endian) ‖ CRC-32 of the payload (4 bytes) ‖ payload``. It is
written and flushed to the operating system before the write it records is acknowledged, so a
``kill -9`` loses nothing acknowledged; with ``fsync`` it is also forced to disk (power loss).
Payloads are never empty, so zeros (blocks a crash allocated but never wrote) are not records.

At load the records are read up to the first that is not intact, and what follows is judged before
anything is cut: bytes that may have been acknowledged are never dropped unless ``repair`` says so.

* Dropped: a **torn** last record — fewer bytes than a header, or a header claiming at most ``TORN_MAX``
  bytes, more than the file has left (a write a crash cut short, never acknowledged) — and up to
  ``TORN_MAX`` **zeros** to the end of the file.
* Refused (``JournalCorrupt``) unless ``repair``: damage followed by intact records (``corrupt``); a
  whole-length record whose checksum fails, a length field that no longer matches its record, or bytes
  that are no record at all (``damaged``). With ``repair`` the intact records before it are kept.

Nothing is cut off the file before it has been copied beside it (``journal.bin.damaged-<UTC time>-at-<byte>``);
each cut is logged (``free_parking.journal``) and reported (``Dropped``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import struct
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import msgspec

log = logging.getLogger("free_parking.journal")

_HEAD = struct.Struct(">II")
RECORD_HEAD = _HEAD.size  # the bytes before a record's payload: a record from ``offset`` ends at offset + this + len
TORN_MAX = 1 << 20  # the most a torn write (or a crash's unwritten zeros) may leave; beyond it, damage
_CRC_BUDGET = 8 << 20  # bytes checksummed by a search, beyond 4 × the bytes searched: its work stays linear
_LOOKAHEAD = 2  # headers that must follow a plausible record before its checksum is worth computing

Describe = Callable[[bytes], str] | None


class Dropped(msgspec.Struct, frozen=True, kw_only=True):
    """What follows a journal's last intact record: what a load cut off, or what a refused load would have."""

    path: str
    offset: int  # where the intact records end: the file is cut here
    size: int  # the bytes from there to the end of the file
    kind: Literal["torn", "zeros", "corrupt", "damaged"]
    reason: str
    intact: int = 0  # intact records found in those bytes (each costs a checksum: see ``_search``)
    held: dict[str, int] = msgspec.field(default_factory=dict)  # what they hold, by count
    suspect: str | None = None  # what a whole-length record whose checksum fails seems to hold
    searched: bool = True  # False: the search for intact records stopped at its budget
    kept: str | None = None  # the copy of the dropped bytes, made before the cut

    @property
    def needs_repair(self) -> bool:
        return self.kind in ("corrupt", "damaged")

    def found(self) -> str:
        out = f"{self.intact} intact record{'' if self.intact == 1 else 's'} in them"
        if not self.searched:
            out += " (at least: the search stopped)"
        if self.held:
            most = Counter(self.held).most_common(5)
            out += " (" + ", ".join(f"{n} × {what}" for what, n in most) + (", …" if len(self.held) > 5 else "") + ")"
        if self.suspect:
            out += f"; the record failing its checksum looks like {self.suspect}"
        return out

    def summary(self) -> str:
        kept = f"; kept in {self.kept}" if self.kept else ""
        return f"{self.path}: dropped {self.size} bytes from byte {self.offset}, {self.reason}; {self.found()}{kept}"

    def refusal(self) -> str:
        return (
            f"{self.path}: byte {self.offset}: {self.reason} ({self.size} bytes to the end, {self.found()}); "
            f"start with --repair to keep the records before it and move the rest to "
            f"{Path(self.path).name}.damaged-<time>-at-{self.offset} beside the journal"
        )


class JournalCorrupt(Exception):
    """The journal holds damage that only a repair may drop: the file needs a person's attention."""

    def __init__(self, message: str, dropped: Dropped | None = None) -> None:
        super().__init__(message)
        self.dropped = dropped


class Journal:
    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        # unbuffered: a record that could not be written (a full disk) must not stay in a buffer that a later flush,
        # at close, would write after all — a write answered "not acknowledged" would then replay at the next start
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if fsync and new:  # a new file's name must survive a power cut too, not only its contents
            fsync_dir(path.parent)

    def write(self, payload: bytes) -> None:
        """Append one record, whole, before returning; if it cannot be (a full disk, an I/O error), the file is cut
        back to where it was, so no part of the record stays, and the error is raised."""
        record = memoryview(Journal.frame(payload))
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while record:
                record = record[os.write(self._fd, record) :]
            if self.fsync:
                os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise

    @staticmethod
    def frame(payload: bytes) -> bytes:
        """A record of ``payload``: its header, then it."""
        if not payload:
            raise ValueError("a journal record must not be empty")
        return _HEAD.pack(len(payload), zlib.crc32(payload)) + payload

    def size(self) -> int:
        """The file's bytes now (every record written is whole: a failed one is cut off again)."""
        return os.fstat(self._fd).st_size

    def close(self) -> None:
        """Once: a store whose compaction closed its journal and could not reopen it is closed again at shutdown, and
        a second ``os.close`` raised there, before the data folder's lock was released."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    @staticmethod
    def load(
        path: Path, *, repair: bool = False, fsync: bool = False, describe: Describe = None
    ) -> tuple[Iterator[bytes], Dropped | None]:
        """Every intact record in order, and what was cut off after them (``None``: nothing was).

        Raises ``JournalCorrupt``, leaving the file as it is, where the cut would need ``repair``.
        ``describe`` names what a record holds, for the report of what is dropped.
        """
        data = _read(path)
        if data is None:
            return iter(()), None
        end = _intact_end(memoryview(data), 0)
        if end == len(data):
            return _payloads(data, end), None
        dropped = _examine(path, data, end, describe)
        if dropped.needs_repair and not repair:
            raise JournalCorrupt(dropped.refusal(), dropped)
        dropped = _set_aside(path, data, dropped, fsync)
        log.warning("%s", dropped.summary())
        return _payloads(data, end), dropped

    @staticmethod
    def cut(
        path: Path, offset: int, reason: str, *, repair: bool = False, fsync: bool = False, describe: Describe = None
    ) -> Dropped:
        """Drop the journal from ``offset`` on, where its reader found a record whose checksum holds but which
        cannot be what it says (it does not replay): refused, the file as it is, unless ``repair``; then set aside
        like any damage, with the intact records after it counted."""
        data = path.read_bytes()
        intact, held, searched = _search(data, offset, len(data), describe)
        dropped = Dropped(path=str(path), offset=offset, size=len(data) - offset, kind="damaged", reason=reason,
                          intact=intact, held=held, searched=searched)  # fmt: skip
        if not repair:
            raise JournalCorrupt(dropped.refusal(), dropped)
        dropped = _set_aside(path, data, dropped, fsync)
        log.warning("%s", dropped.summary())
        return dropped

    @staticmethod
    def records(path: Path, *, repair: bool = False, fsync: bool = False) -> Iterator[bytes]:
        """``load``'s records alone."""
        return Journal.load(path, repair=repair, fsync=fsync)[0]


def _read(path: Path) -> bytes | None:
    """The journal's bytes (``None``: there is no journal yet), or ``JournalCorrupt`` for a path that is no regular
    file — a directory, a named pipe (reading one would block for ever), a symlink that leads nowhere (the service
    would start empty, its data elsewhere) or loops."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise JournalCorrupt(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist") from None
        return None
    except OSError as e:
        raise JournalCorrupt(f"{path}: cannot be read as a journal ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise JournalCorrupt(f"{path}: not a regular file; move it away (or point --data elsewhere)")
    try:
        return path.read_bytes()
    except OSError as e:
        raise JournalCorrupt(f"{path}: cannot be read ({e.strerror or e})") from None


def _payloads(data: bytes, end: int) -> Iterator[bytes]:
    pos = 0
    while pos < end:
        length = _HEAD.unpack_from(data, pos)[0]
        yield data[pos + _HEAD.size : pos + _HEAD.size + length]
        pos += _HEAD.size + length


def _intact(view: memoryview, pos: int) -> int | None:
    """The length of the whole, non-empty record whose checksum matches at ``pos``, if there is one."""
    end = pos + _HEAD.size
    if end > len(view):
        return None
    length, crc = _HEAD.unpack_from(view, pos)
    if 0 < length <= len(view) - end and zlib.crc32(view[end : end + length]) == crc:
        return length
    return None


intact_length = _intact  # compaction.py's judgement of a snapshot, before this reader may cut one


def _intact_end(view: memoryview, pos: int) -> int:
    """Where the run of intact records from ``pos`` ends."""
    while (length := _intact(view, pos)) is not None:
        pos += _HEAD.size + length
    return pos


def _examine(path: Path, data: bytes, pos: int, describe: Describe) -> Dropped:
    """Judge the bytes from ``pos`` (the first that are not an intact record) to the end of the file."""
    zeros, body = _zeros_from(data), memoryview(data)[pos + _HEAD.size :]
    header = len(data) - pos >= _HEAD.size
    length, crc = _HEAD.unpack_from(data, pos) if header else (0, 0)
    whole = 0 < length <= len(body)  # every byte it claims is there, so its checksum is what failed
    intact, held, searched = _search(data, pos + 1, zeros, describe)
    if intact:
        kind, reason = "corrupt", "a damaged record followed by intact ones"
    elif zeros <= pos and header and len(data) - pos <= TORN_MAX:
        kind, reason = "zeros", "zeros to the end (blocks a crash allocated, never written)"
    elif zeros <= pos and header:
        kind, reason = "damaged", "more than 1 MiB of zeros to the end (writes a crash may have lost)"
    elif whole and zeros < pos + _HEAD.size + length and len(data) - pos <= TORN_MAX:
        kind, reason = "torn", "a torn last record and the zeros a crash left after it (never acknowledged)"
    elif whole:
        kind, reason = "damaged", "a whole record whose checksum fails (an acknowledged write)"
    elif not header or (0 < length <= TORN_MAX and searched):
        if len(body) and zlib.crc32(body) == crc:  # every byte of it is there: its length field is what is damaged
            kind, reason = "damaged", "a whole record with a damaged length (an acknowledged write)"
        else:
            kind, reason = "torn", "a torn last record (a write cut short, never acknowledged)"
    elif pos == 0:
        kind, reason = "damaged", "no readable record (is this a journal?)"
    else:
        kind, reason = "damaged", "bytes that are neither records nor a torn one"
    suspect = _what(describe, body[:length]) if whole else None
    return Dropped(path=str(path), offset=pos, size=len(data) - pos, kind=kind, reason=reason, intact=intact,
                   held=held, suspect=suspect, searched=searched)  # fmt: skip


def _search(data: bytes, start: int, zeros: int, describe: Describe) -> tuple[int, dict[str, int], bool]:
    """The intact records from ``start`` on, what they hold, and whether the search went to the end.

    One forward pass (a rescan from every damaged offset took minutes on 16 MiB of garbage). A checksum costs
    the length it covers, so one is computed only where a record plausibly starts (``_plausible``): random
    bytes pass that about once in 16 MiB. A budget on the bytes checksummed keeps even a pathological file
    linear; a search stopped by it is reported as such and never taken for one that found nothing.
    """
    view, budget = memoryview(data), _CRC_BUDGET + 4 * (len(data) - start)
    count, held = 0, Counter[str]()
    q = start
    while (found := _plausible(data, q, zeros)) is not None:
        q, length = found
        budget -= length
        if budget < 0:
            return count, dict(held), False
        body = view[q + _HEAD.size : q + _HEAD.size + length]
        if zlib.crc32(body) == _HEAD.unpack_from(data, q)[1]:
            count, q = count + 1, q + _HEAD.size + length
            if (what := _what(describe, body)) is not None:
                held[what] += 1
        else:
            q += 1
    return count, dict(held), True


def _plausible(data: bytes, q: int, zeros: int) -> tuple[int, int] | None:
    """The next offset from ``q`` where a header claims a length under 16 MiB that fits, followed by what may
    follow a record (``_continues``), with that length. Cheap: no checksum, and C-speed skips to the next zero
    byte (the first byte of such a length) and over runs of zeros."""
    n = len(data)
    while 0 <= (q := data.find(b"\0", q)) <= n - _HEAD.size:
        length = int.from_bytes(data[q : q + 4], "big")
        if length == 0:  # in a run of zeros: the next length that is not zero starts at most 3 bytes before its end
            q = max(q + 1, _nonzero_from(data, q) - 3)
        elif length <= n - q - _HEAD.size and _continues(data, q + _HEAD.size + length, zeros):
            return q, length
        else:
            q += 1
    return None


def _continues(data: bytes, end: int, zeros: int) -> bool:
    """Whether the record ending at ``end`` is followed by what may follow one, for ``_LOOKAHEAD`` records:
    the end of the file, zeros to it, or a header whose length fits (or a torn last record)."""
    for _ in range(_LOOKAHEAD):
        left = len(data) - end
        if left < _HEAD.size or end >= zeros:
            return True
        length = int.from_bytes(data[end : end + 4], "big")
        if not 0 < length <= max(left - _HEAD.size, TORN_MAX):
            return False
        if length > left - _HEAD.size:
            return True
        end += _HEAD.size + length
    return True


def _nonzero_from(data: bytes, q: int) -> int:
    """The first offset from ``q`` holding a byte that is not zero (``len(data)``: none does)."""
    step = 64
    while q < len(data):
        chunk = data[q : q + step]
        rest = chunk.lstrip(b"\0")
        if rest:
            return q + len(chunk) - len(rest)
        q, step = q + len(chunk), min(step * 2, 1 << 16)
    return len(data)


def _zeros_from(data: bytes) -> int:
    """Where the zeros that end ``data`` begin (``len(data)``: it does not end in zeros)."""
    end = len(data)
    while end > 0:
        chunk = data[max(0, end - (1 << 16)) : end]
        kept = chunk.rstrip(b"\0")
        if kept:
            return end - len(chunk) + len(kept)
        end -= len(chunk)
    return 0


def _what(describe: Describe, body: memoryview) -> str | None:
    if describe is None:
        return None
    try:
        return describe(bytes(body))
    except (ValueError, TypeError, LookupError, msgspec.MsgspecError):  # damaged or foreign: the report must not fail
        return "an undecodable record"


def _set_aside(path: Path, data: bytes, dropped: Dropped, fsync: bool) -> Dropped:
    """Copy the bytes to be dropped to a new file beside the journal (never over an earlier one), then cut them off."""
    stem = f"{path.name}.damaged-{_stamp()}-at-{dropped.offset}"
    n = 1
    while True:
        kept = path.with_name(stem if n == 1 else f"{stem}.{n}")
        try:
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            n += 1
    with open(fd, "wb") as f:
        f.write(memoryview(data)[dropped.offset :])
        f.flush()
        if fsync:
            os.fsync(f.fileno())
    if fsync:
        fsync_dir(path.parent)
    with open(path, "r+b") as f:
        f.truncate(dropped.offset)
        if fsync:
            os.fsync(f.fileno())
    return msgspec.structs.replace(dropped, kept=str(kept))


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
