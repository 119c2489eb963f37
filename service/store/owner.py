"""One process owns an embedded store's data folder: an exclusive ``flock`` on ``<data>/lock``, held while the store
is open.

The embedded store is a journal replayed into this process's memory: a second process on the same folder would
replay the same journal, append to it from a memory that does not hold the first one's writes, and each restart
would then replay both interleaved — what one acknowledged the other's next write may contradict. So the second
is refused, in one line naming the first one's pid.

``flock`` is the kernel's: it goes with the open file, so a process that dies (``kill -9`` included) releases it, and
a lock file left behind blocks nothing. The folder is locked as well as the file, so deleting the file beside a
running owner lets no second one in. The pid written into the file is only what the refusal says; the lock is
the file's ``flock``, never its content. The file is never removed: one process removing it while another opens it
would let a third lock a new file of the same name beside the second's.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

LOCK = "lock"


class DataInUse(Exception):
    """Another process holds the folder (``pid``: the one its lock file names, ``None`` when it names none)."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        self.folder, self.pid = folder, pid
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"the data folder {folder} is in use by {who} (it holds {folder / LOCK}): one process owns the "
                         "embedded store — stop that one first, or give this one another --data")


class Owner:
    """The held lock of one data folder; ``release`` (or the process's end) lets the next process have it."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / LOCK
        # O_CLOEXEC: a program this process starts does not inherit the lock and outlive it holding the folder
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._dir: int | None = None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # and the folder itself: the lock file can be deleted as "stale" beside a running owner (a new file of the
            # same name is then free to lock); a folder holding a journal is not removed without the journal
            self._dir = _locked_folder(folder)
        except BlockingIOError:
            pid = _pid_in(self._fd)
            self.release()
            raise DataInUse(folder, pid) from None
        except BaseException:
            self.release()
            raise
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        for fd in (self._dir, self._fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)  # closing the last descriptor of the open file releases its flock
        self._fd = self._dir = None


def _locked_folder(folder: Path) -> int | None:
    """The folder open and ``flock``-ed (``BlockingIOError`` when another process holds it); ``None`` where a folder
    cannot be locked at all (NFS emulates ``flock`` with POSIX locks, which want a file open for writing): the lock
    file's lock is then the only one, as it was before."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
            return None
        raise
    return fd


def _pid_in(fd: int) -> int | None:
    """The pid the holder wrote (``None`` if it has not written it yet, or the file says something else)."""
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None
