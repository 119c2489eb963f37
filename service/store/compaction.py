"""Compaction: the embedded store's journal rewritten to what is live — a snapshot of the store (``snapshot.py``)
followed by the records written since — so that it stops growing with every write ever made (archived games
included) and a start stops replaying them.

While the service runs: under the store's write lock the snapshot is taken in memory (synchronous reads: nothing else
runs meanwhile) and the journal's length noted; the lock is let go while ``journal.bin.compact`` is written and
fsynced; then under the lock again the records written meanwhile (the tail, from the noted length) are copied after
it, the copy fsynced and renamed over ``journal.bin``, the folder fsynced, and the store writes to the new file from
then on. A kill at any step leaves either the old journal whole (and a ``.compact`` leftover, removed at the next
start) or the new one whole: ``FREE_PARKING_COMPACT_CRASH_AT`` kills the process after a named step (the drill).

At start a journal that begins with a snapshot is loaded from it, then the records after it are replayed as ever. A
snapshot that does not load whole — damaged, cut short, not one this version reads — is refused like a damaged
journal (``JournalCorrupt``); with ``--repair`` the whole file is set aside beside it (the snapshot is one state:
half of it is no state the store was ever in) and the store starts empty.

Not in a snapshot: the rate limits' buckets and the archiver's leases (never journalled; a restart drops them today
too). In it, beyond what a replay gives: the projectors' consumer groups with their pending entries — a replay
re-creates each group at the log's start (the logs as last trimmed: trims are journalled), and the projector
acknowledges what is left there again; loaded from a snapshot, it resumes where it stood.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import mmap
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from redis import exceptions as rex

from . import snapshot
from .journal import RECORD_HEAD, Dropped, Journal, JournalCorrupt, fsync_dir, intact_length
from .keys import PARTITIONS
from .oplog import describe

log = logging.getLogger("free_parking.store")

CRASH_AT = os.environ.get("FREE_PARKING_COMPACT_CRASH_AT", "")
"""For the drill only: a step after which the process kills itself (``STEPS``)."""
STEPS = ("captured", "snapshot-written", "tail-copied", "renamed", "synced")
LEFTOVER = ".compact"
_BEGIN = b"\x93\xaesnapshot_begin"
"""How a ``snapshot_begin`` record starts (``Op``'s msgpack): a journal whose first record, cut short, starts so."""
CHECK_EVERY_S = 1.0
"""How often a running service looks at its journal's size (a ``stat``: nothing more, until compaction is due)."""
REMEASURE = 2
REMEASURE_FROM = 64 * 1024
"""The live size is measured again (a capture) each time the journal has grown ``REMEASURE`` times since the last
measure, and past ``REMEASURE`` times this at least (a new journal is measured at 0 bytes)."""
RETRY_S = 60.0
"""How long after a failed compaction (a full disk) the next is tried."""


class Compacted(msgspec.Struct, frozen=True):
    """What one compaction did."""

    before: int  # the journal's bytes before
    after: int  # and after
    live: int  # the snapshot's bytes: the live size
    tail: int  # bytes written while the snapshot was written, copied after it
    keys: int  # keys (pieces of the large ones) in the snapshot
    seconds: float


class Compaction:
    """One embedded store's compaction, and what it knows of the journal's live size (``live``)."""

    def __init__(self, store: Any) -> None:
        self.store = store  # an ``EmbeddedStore``: its lock, its journal and its server are this module's to use
        self.live: int | None = None  # bytes of the last snapshot taken (at start, at a compaction, or measured)
        self.measured_at = 0  # the journal's bytes when it was taken
        self.runs = 0
        self.measures = 0  # snapshots taken, compactions or not
        self.last: Compacted | None = None
        self._one = asyncio.Lock()

    @property
    def path(self) -> Path:
        """The journal's file, where a symlink leads (another disk): the copy is made beside it and renamed over it, so
        the link stays — renamed over the link, the journal moved to the data folder's disk and the old one stayed."""
        return Path(os.path.realpath(self.store._journal_path))

    def journal_bytes(self) -> int | None:
        """The journal's size (``/metrics``): the file's, where the store's descriptor is gone (a compaction that could
        not reopen it: an ``fstat`` of it raised, and ``/metrics`` answered 500 until a restart)."""
        journal = self.store._journal
        if journal is None:
            return None
        try:
            return journal.size()
        except OSError:
            with contextlib.suppress(OSError):
                return self.path.stat().st_size
            return None

    # --- at start ---------------------------------------------------------------------------------------------------

    def clear_leftover(self) -> None:
        """A ``.compact`` beside the journal is a compaction killed before its rename: the journal is whole, the
        leftover a partial copy of it; removed."""
        leftover = self.path.with_name(self.path.name + LEFTOVER)
        with contextlib.suppress(FileNotFoundError):
            mode = leftover.lstat().st_mode
            if stat.S_ISDIR(mode):  # none we made: a person's, to move away (a start must not crash on it)
                raise JournalCorrupt(f"{leftover}: not a regular file, where compaction writes its copy; move it away")
            size = leftover.lstat().st_size
            leftover.unlink()
            log.warning("removed %s (%d bytes): a compaction stopped before it took the journal's place", leftover, size)

    def check_whole(self) -> Dropped | None:
        """Before the journal is read: the snapshot it begins with, if it does, judged whole or not — every byte of it
        there in intact records. A snapshot is fsynced before it takes the journal's place, so one cut short or damaged
        is damage, never the torn write the journal's reader would take its end for and cut off (changing the file
        before the refusal; cut in its first record, starting the store empty), nor a place to cut at with ``--repair``
        (the store's one state split over two files). Refused with the file as it is; with ``--repair`` set aside whole,
        in one file (what was cut)."""
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):
                return None  # a named pipe would block the open for ever: the journal's reader refuses what is no file
            with open(self.path, "rb") as f:
                head = f.read(RECORD_HEAD + len(_BEGIN))
                if not (len(head) > RECORD_HEAD and _BEGIN.startswith(head[RECORD_HEAD:])):
                    return None  # no snapshot: the journal's reader judges it all
                size = _snapshot_size(self.path)
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError:
            return None  # no journal, or none to read: the journal's reader says so
        with mapped, memoryview(mapped) as view:
            pos = 0  # the intact records' end, up to the snapshot's: whether they hold the snapshot is its reader's call
            while size is not None and pos < size and (length := intact_length(view, pos)) is not None:
                pos += RECORD_HEAD + length
            if size is not None and pos >= size:
                return None
            total = len(view)
        where = f"bytes 0–{size}, written by a compaction" if size is not None else "its first record"
        how = f"cut short at byte {total}" if size is not None and pos == total else f"damaged at byte {pos}"
        store = self.store
        return Journal.cut(self.path, 0, f"in the snapshot the journal begins with ({where}): {how}",
                           repair=store._repair, fsync=store._fsync, describe=describe)  # fmt: skip

    def refusal(self, e: JournalCorrupt) -> JournalCorrupt:
        """A refusal of damage inside the snapshot the journal begins with, said so (the whole snapshot is at stake)."""
        if e.dropped is None or (size := _snapshot_size(self.path)) is None or e.dropped.offset >= size:
            return e
        return JournalCorrupt(f"in the snapshot the journal begins with (bytes 0–{size}, written by a compaction): {e}",
                              e.dropped)  # fmt: skip

    def load(self, records: Iterator[bytes]) -> tuple[int, Iterator[bytes], dict[str, str]]:
        """Load the snapshot the journal begins with, if it does: the bytes it took, the records after it, and each
        game's kind (``_with_kind``'s memory)."""
        first = next(records, None)
        begin = snapshot.begins(first) if first is not None else None
        if first is None or begin is None:
            return 0, itertools.chain([first] if first is not None else [], records), {}
        size = RECORD_HEAD + len(first) + begin.rest
        r, ns = self.store._now, self.store.keys.ns
        old = f"{begin.namespace}:".encode()
        new = f"{ns}:".encode()
        rename = (lambda k: k) if old == new else (lambda k: new + k[len(old) :] if k.startswith(old) else k)
        try:
            read = snapshot.read(begin, records, snapshot.Loader(r, rename))
            if read != begin.rest:
                raise snapshot.SnapshotBroken(f"its records take {read} bytes, its first says {begin.rest}")
        except (snapshot.SnapshotBroken, rex.ResponseError, msgspec.MsgspecError, ValueError, TypeError) as e:
            r.flushall()  # half a snapshot is no state the store was ever in
            store = self.store
            store.dropped = Journal.cut(self.path, 0, f"the snapshot (bytes 0–{size}) does not load: {e}"[:300],
                                        repair=store._repair, fsync=store._fsync, describe=describe)  # fmt: skip
            return 0, iter(()), {}
        self.live = size
        return size, records, self._caches()

    def _caches(self) -> dict[str, str]:
        """What the store remembers of each game (version, status, command ids, due entries), read back from the keys
        loaded, as a replay of the journal would have left it; and each game's kind."""
        store, r, kinds = self.store, self.store._now, {}
        prefix = f"{store.keys.ns}:meta:"
        for name in r.scan_iter(match=f"{prefix}*", count=10_000):
            game_id = name.decode()[len(prefix) :].split("}:", 1)[1]
            version, status, kind = r.hmget(name, "version", "status", "kind")
            if version is not None:
                store._version[game_id], store._status[game_id] = int(version), status.decode()
            if kind is not None:
                kinds[game_id] = kind.decode()
        prefix = f"{store.keys.ns}:cmds:"
        for name in r.scan_iter(match=f"{prefix}*", count=10_000):
            game_id = name.decode()[len(prefix) :].split("}:", 1)[1]
            store._commands[game_id] = {k.decode(): v.decode() for k, v in r.hgetall(name).items()}
        for p in range(PARTITIONS):
            store._due.update(g.decode() for g in r.zrange(store.keys.due(p), 0, -1))
        return kinds

    # --- while running ----------------------------------------------------------------------------------------------

    async def run(self, due: Callable[[int, int], bool] | None = None) -> Compacted | None:
        """Compact now, or, given ``due(journal_bytes, live_bytes)``, only if it says so once the live size is
        measured (``None``: it did not; the measure is kept). One at a time."""
        store = self.store
        if store._journal is None:
            raise ValueError("an embedded store without a data folder has no journal to compact")
        async with self._one:
            started = time.perf_counter()
            async with store._lock:
                store._refuse_if_broken()
                now = int(time.time() * 1000)
                keys = snapshot.capture(store._now, self._unjournalled(), now)
                offset = store._journal.size()
            payloads = snapshot.records(keys, store.keys.ns, now)
            self.live = sum(RECORD_HEAD + len(p) for p in payloads)
            self.measured_at = offset
            self.measures += 1
            if due is not None and not due(offset, self.live):
                return None
            _crash_after("captured")
            temp = self.path.with_name(self.path.name + LEFTOVER)
            try:
                await asyncio.to_thread(_write, temp, payloads)
                _crash_after("snapshot-written")
                async with store._lock:
                    store._refuse_if_broken()
                    tail = await self._switch(temp, offset)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    temp.unlink()  # still there: it never took the journal's place
            self.runs += 1
            self.last = done = Compacted(offset + tail, self.live + tail, self.live, tail, len(keys), time.perf_counter() - started)
            log.info("compacted %s: %d bytes → %d (live %d, tail %d, %d keys) in %.2f s", self.path, done.before,
                     done.after, done.live, done.tail, done.keys, done.seconds)  # fmt: skip
            return done

    async def _switch(self, temp: Path, offset: int) -> int:
        """Under the write lock: the tail after the snapshot, the rename, the store's journal reopened on the new file.
        Once the rename is done the old file is gone, so a failure after it leaves the store refusing writes."""
        store = self.store
        tail = await asyncio.to_thread(_copy_tail, self.path, offset, temp)
        _crash_after("tail-copied")
        os.replace(temp, self.path)
        try:
            _crash_after("renamed")
            await asyncio.to_thread(fsync_dir, self.path.parent)
            _crash_after("synced")
            store._journal.close()
            store._journal = Journal(self.path, fsync=store._fsync)
        except BaseException as e:
            store._broken = f"the journal {self.path} was compacted, then could not be reopened ({e}); restart the service"
            raise
        return tail

    def _unjournalled(self) -> Callable[[bytes], bool]:
        """The keys a replay of the journal never makes: the rate limits' buckets and the archiver's leases."""
        ns = self.store.keys.ns
        prefixes = (self.store.keys.bucket("").encode(), f"{ns}:lease:".encode())
        return lambda name: name.startswith(prefixes)

    async def watch(self, stop: asyncio.Event, ratio: float, min_bytes: int, every: float = CHECK_EVERY_S) -> None:
        """Measure the live size once, then compact whenever the journal is ``ratio`` times it and at least
        ``min_bytes`` (``ratio`` 0: never), until ``stop``. A failed compaction is logged and tried again later."""

        def due(journal: int, live: int) -> bool:  # and something to gain: a ratio ≤ 1 made a compacted journal due
            return ratio > 0 and journal >= min_bytes and journal >= ratio * live and journal > live

        def stale(journal: int) -> bool:
            """The journal has doubled since the live size was measured: /metrics' live share would mislead (a store
            measured empty at start said 5% live for ever below --compact-min-bytes). A capture a doubling is cheap."""
            return ratio > 0 and journal >= REMEASURE * max(self.measured_at, REMEASURE_FROM)

        first = True
        while not stop.is_set():
            size, pause = self.journal_bytes(), every
            if size is not None and (first or (self.live is not None and (due(size, self.live) or stale(size)))):
                first = False
                try:
                    await self.run(due=due)
                except Exception as e:  # a full disk, a store refusing writes: the journal is as it was
                    log.error("compaction of %s failed (tried again in a minute): %s", self.path, e)
                    pause = RETRY_S
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)


def _write(path: Path, payloads: list[bytes]) -> None:
    """The snapshot's records in a new file, fsynced. Whatever is at ``path`` is removed first and the file made anew
    (O_EXCL, O_NOFOLLOW): a symlink left there had the file it leads to — the journal itself — truncated."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with open(fd, "wb", closefd=False) as f:
            for payload in payloads:
                f.write(Journal.frame(payload))
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_tail(journal: Path, offset: int, temp: Path) -> int:
    """Append the journal's records from ``offset`` on to ``temp``, fsynced; their bytes."""
    with open(journal, "rb") as f:
        f.seek(offset)
        tail = f.read()
    with open(temp, "ab") as f:
        f.write(tail)
        f.flush()
        os.fsync(f.fileno())
    return len(tail)


def _snapshot_size(path: Path) -> int | None:
    """The bytes of the snapshot the journal at ``path`` begins with, read off its first record (``None``: none)."""
    try:
        with open(path, "rb") as f:
            head = f.read(RECORD_HEAD)
            length = int.from_bytes(head[:4], "big") if len(head) == RECORD_HEAD else 0
            begin = snapshot.begins(f.read(length)) if 0 < length <= 1 << 20 else None
    except OSError:
        return None
    return RECORD_HEAD + length + begin.rest if begin is not None else None


def _crash_after(step: str) -> None:
    if CRASH_AT == step:
        log.warning("compaction drill: killed after the step %r", step)
        os._exit(137)
