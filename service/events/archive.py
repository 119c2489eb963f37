"""The archive: finished games moved out of the store, one gzip'd export per game (docs/operating.md, "Archive").

A file is exactly what ``GET /games/{id}/export`` answers — the header with the seed and the final head's receipt,
then every envelope — gzip'd: ``zcat`` gives back the export ``python -m replays verify`` reads. gzip, not zstandard:
it is in Python's standard library and on every machine, and an archive is written once and read rarely, so the
better ratio and speed of zstandard would not pay for a dependency (a card game's export shrinks about 3×).

The root is a folder (the default, inside ``--data``) or, through fsspec, any URL of object storage (``s3://…``
with the user's own backend installed). A local file is written whole to a temporary name, flushed, fsynced,
renamed into place and its folder fsynced: a crash leaves the old state or the new file, never half a file. Object
stores put an object whole. Archived games never change, so what was read is kept (``CACHE`` games).
"""

from __future__ import annotations

import gzip
import os
import re
from collections import OrderedDict
from pathlib import Path

from .envelope import Envelope
from .export import ExportError, ExportHeader, load
from .keys import partition

CACHE = 256
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Only an id of this shape names a file: anything else (``..``, ``/``, a NUL) is no archived game."""


class ArchiveError(Exception):
    """The archive cannot be written or read (a full disk, a backend that refuses, a damaged file)."""


class Archive:
    def __init__(self, root: str | Path) -> None:
        self.root = str(root)
        self.remote = "://" in self.root
        if self.remote:
            try:
                import fsspec
            except ImportError as e:
                raise ArchiveError(f"the archive {self.root} is a URL, and fsspec is not installed (pip install fsspec "
                                   "and the backend of its scheme, e.g. s3fs)") from e
            self.fs, self.base = fsspec.core.url_to_fs(self.root)
        self._cache: OrderedDict[str, tuple[ExportHeader, list[Envelope]]] = OrderedDict()

    def name(self, game_id: str) -> str:
        """The game's file, in a folder per partition (so no folder holds every game)."""
        return f"{partition(game_id):02d}/{game_id}.ndjson.gz"

    def _path(self, game_id: str) -> str:
        return f"{self.base.rstrip('/')}/{self.name(game_id)}" if self.remote else os.path.join(self.root, self.name(game_id))

    def write(self, game_id: str, export: bytes) -> None:
        """Put the game's export in the archive for good, or raise ``ArchiveError`` (then nothing was put there)."""
        data = gzip.compress(export, compresslevel=6, mtime=0)  # mtime 0: the same game is the same file
        try:
            if self.remote:
                self.fs.makedirs(self._path(game_id).rpartition("/")[0], exist_ok=True)
                with self.fs.open(self._path(game_id), "wb") as f:
                    f.write(data)
            else:
                _write_durably(Path(self._path(game_id)), data)
        except OSError as e:
            raise ArchiveError(f"the archive {self.root} cannot be written ({e})") from e
        self._cache.pop(game_id, None)

    def read(self, game_id: str) -> tuple[ExportHeader, list[Envelope]] | None:
        """The archived export of ``game_id``, or ``None`` when the archive has no such game."""
        if not GAME_ID.match(game_id):
            return None
        if game_id in self._cache:
            self._cache.move_to_end(game_id)
            return self._cache[game_id]
        try:
            if self.remote:
                if not self.fs.exists(self._path(game_id)):
                    return None
                with self.fs.open(self._path(game_id), "rb") as f:
                    data = f.read()
            else:
                data = Path(self._path(game_id)).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ArchiveError(f"the archive {self.root} cannot be read ({e})") from e
        try:
            export = load(gzip.decompress(data))
        except (OSError, EOFError, ExportError) as e:
            raise ArchiveError(f"the archived game {game_id} is damaged ({e})") from e
        self._cache[game_id] = export
        if len(self._cache) > CACHE:
            self._cache.popitem(last=False)
        return export

    def reachable(self) -> bool:
        """Whether the archive's root can be listed (``/readyz``)."""
        try:
            if self.remote:
                self.fs.makedirs(self.base, exist_ok=True)
                return self.fs.isdir(self.base)
            Path(self.root).mkdir(parents=True, exist_ok=True)
            return os.access(self.root, os.W_OK)
        except OSError:
            return False


def _write_durably(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
