"""An append-only file of checksummed records: how the embedded store survives a restart.

A record is ``length (4 bytes, big-endian) ‖ CRC-32 of the payload (4 bytes) ‖ payload``. It is
written and flushed to the operating system before the write it records is acknowledged, so a
``kill -9`` loses nothing acknowledged; with ``fsync`` it is also forced to disk (power loss).
At load, a torn or corrupt *last* record — a write cut short by the kill — is dropped and the file
truncated there; corruption anywhere before the last record is refused, never silently skipped.
A damaged record is taken for the torn last one only if no intact record follows it anywhere in
the file: a corrupt length field must not pass for a torn tail and cut off every record after it.
Payloads are never empty, so zeros (blocks a crash allocated but never wrote) are not records.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

_HEAD = struct.Struct(">II")


class JournalCorrupt(Exception):
    """A record other than the last is damaged: the file needs a person's attention."""


class Journal:
    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        self._file = open(path, "ab")  # noqa: SIM115 - held open for the store's life
        if fsync and new:  # a new file's name must survive a power cut too, not only its contents
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def write(self, payload: bytes) -> None:
        if not payload:
            raise ValueError("a journal record must not be empty")
        self._file.write(_HEAD.pack(len(payload), zlib.crc32(payload)) + payload)
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    @staticmethod
    def records(path: Path) -> Iterator[bytes]:
        """Every intact record in order; a torn tail is cut off the file."""
        if not path.exists():
            return
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            if not _intact(data, pos):
                if any(_intact(data, q) for q in range(pos + 1, len(data) - _HEAD.size)):
                    raise JournalCorrupt(f"{path}: record at byte {pos} is damaged and is not the last one")
                break
            length = _HEAD.unpack_from(data, pos)[0]
            yield data[pos + _HEAD.size : pos + _HEAD.size + length]
            pos += _HEAD.size + length
        if pos < len(data):
            with open(path, "r+b") as f:
                f.truncate(pos)


def _intact(data: bytes, pos: int) -> bool:
    """Whether a whole, non-empty record whose checksum matches starts at ``pos``."""
    end = pos + _HEAD.size
    if end > len(data):
        return False
    length, crc = _HEAD.unpack_from(data, pos)
    return 0 < length <= len(data) - end and zlib.crc32(data[end : end + length]) == crc
