"""The archive: finished games moved out of the store, one gzip'd export per game (docs/operating.md, "Archive").

A file is exactly what ``GET /games/{id}/export`` answers — the header with the seed and the final head's receipt,
then every envelope — gzip'd: ``zcat`` gives back the export ``python -m replays verify`` reads. gzip, not zstandard:
it is in Python's standard library and on every machine, and an archive is written once and read rarely, so the
better ratio and speed of zstandard would not pay for a dependency (a card game's export shrinks about 3×).

The root is a folder (the default, inside ``--data``) or, through fsspec, any URL of object storage (``s3://…``
with the user's own backend installed). How a game is written whole:

* **A folder**, and a ``file://`` URL (the folder it names): to a temporary name, flushed, fsynced, renamed into
  place and its folder fsynced — a crash leaves no file or the whole file, and a power cut after the store removed
  the events cannot take the file with them. Not through fsspec's own local files: they are written in place, and
  never fsynced.
* **An object store** (S3, GCS, Azure…): the whole gzip'd export in one call (``pipe_file``: one PUT, or a multipart
  upload completed at its end). An object store's PUT is atomic — the object appears whole or not at all, and a
  killed writer leaves nothing — so there is no temporary name and no ``mv``: on an object store that is a copy and
  a delete, twice the writes, not atomic itself, and a crash between them leaves a stray object behind.
* **Another filesystem under fsspec** (sftp, smb, hdfs…): ``pipe_file`` writes in place, so a kill mid-write can
  leave part of a file at the game's name. That is safe by the archiver's order (``service/api/archiver.py``): the
  store keeps the game's events until its file has been read back whole, a game with events in the store is never
  read from the archive, the next run writes the file again, and an archived game's file is never written again.
  How durable such a write is, is the backend's to say.

A damaged file is ``ArchiveDamaged``, never a wrong game; any failure of the backend, whatever it raises (botocore's
exceptions are not ``OSError``), is ``ArchiveError``, which the runner and the API answer for. Archived games never
change, so what was read is kept (``CACHE`` games).
"""

from __future__ import annotations

import gzip
import os
import re
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

import msgspec

from service.events.envelope import (
    GENESIS, Envelope, body_of, canonical, chain_hash, has_secret, secret_digest, seed_commitment,
)  # fmt: skip
from service.events.export import ExportError, ExportHeader, load
from .keys import partition

CACHE = 256
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Only an id of this shape names a file: anything else (``..``, ``/``, a NUL) is no archived game."""


class ArchiveError(Exception):
    """The archive cannot be written or read (a full disk, a backend that refuses or does not answer)."""


class ArchiveDamaged(ArchiveError):
    """A game's archived file is there and is not its export (cut short, not gzip, not an export): it will not mend
    by itself — the operator restores it from a backup (or the game's own players' copies)."""


class Archive:
    def __init__(self, root: str | Path) -> None:
        self.root = str(root)
        self.remote = "://" in self.root
        self.folder = not self.remote  # written with _write_durably: a folder, or the one a file:// URL names
        if self.remote:
            try:
                import fsspec
                from fsspec.implementations.local import LocalFileSystem
            except ImportError as e:
                raise ArchiveError(f"the archive {self.root} is a URL, and fsspec is not installed (pip install fsspec "
                                   "and the backend of its scheme, e.g. s3fs)") from e
            try:
                self.fs, self.base = fsspec.core.url_to_fs(self.root)
            except ImportError as e:  # a scheme fsspec knows, whose backend is not installed: fsspec names it
                raise ArchiveError(f"the archive {self.root} cannot be opened: {e}") from e
            except ValueError as e:  # a scheme fsspec does not know
                raise ArchiveError(f"the archive {self.root} cannot be opened: {e} (a scheme of fsspec's, with its "
                                   "backend installed)") from e
            self.folder = isinstance(self.fs, LocalFileSystem)
        self._cache: OrderedDict[str, tuple[ExportHeader, list[Envelope]]] = OrderedDict()
        self._lock = threading.Lock()  # reads run in threads (the store's), several at once

    def name(self, game_id: str) -> str:
        """The game's file, in a folder per partition (so no folder holds every game)."""
        return f"{partition(game_id):02d}/{game_id}.ndjson.gz"

    def _path(self, game_id: str) -> str:
        return f"{self.base.rstrip('/')}/{self.name(game_id)}" if self.remote else os.path.join(self.root, self.name(game_id))

    def write(self, game_id: str, export: bytes) -> None:
        """Put the game's export in the archive for good, or raise ``ArchiveError`` (then nothing was put there, or
        — on a filesystem that writes in place — part of a file the next write replaces; see the module's doc)."""
        data = gzip.compress(export, compresslevel=6, mtime=0)  # mtime 0: the same game is the same file
        path = self._path(game_id)
        try:
            if self.folder:
                _write_durably(Path(path), data)
            else:
                self.fs.makedirs(path.rpartition("/")[0], exist_ok=True)  # an object store has no folders: nothing
                self.fs.pipe_file(path, data)
        except Exception as e:  # OSError from a disk; from a backend, whatever it raises
            raise ArchiveError(f"the archive {self.root} cannot be written ({e})") from e
        with self._lock:
            self._cache.pop(game_id, None)

    def cached(self, game_id: str) -> tuple[ExportHeader, list[Envelope]] | None:
        """The export of ``game_id`` if it was read lately: no I/O, so the event loop may ask."""
        with self._lock:
            found = self._cache.get(game_id)
            if found is not None:
                self._cache.move_to_end(game_id)
            return found

    def exists(self, game_id: str) -> bool:
        """Whether the archive holds a file of ``game_id`` (not read: a rebuild's check before it drops anything)."""
        if not GAME_ID.match(game_id):
            return False
        try:
            return self.fs.exists(self._path(game_id)) if self.remote else Path(self._path(game_id)).is_file()
        except Exception as e:
            raise ArchiveError(f"the archive {self.root} cannot be read ({e})") from e

    def read(self, game_id: str) -> tuple[ExportHeader, list[Envelope]] | None:
        """The archived export of ``game_id``, or ``None`` when the archive has no such game. Blocking (a file, a
        GET): the store calls it in a thread, and it may run in several at once."""
        if not GAME_ID.match(game_id):
            return None
        if (found := self.cached(game_id)) is not None:
            return found
        try:
            # one request of an object store (a GET), not two (a HEAD first): a missing object is FileNotFoundError
            data = self.fs.cat_file(self._path(game_id)) if self.remote else Path(self._path(game_id)).read_bytes()
        except FileNotFoundError:
            return None
        except Exception as e:
            raise ArchiveError(f"the archive {self.root} cannot be read ({e})") from e
        try:
            export = load(gzip.decompress(data))
        except (OSError, EOFError, ExportError) as e:
            raise ArchiveDamaged(f"the archived game {game_id} is damaged ({e})") from e
        header, envelopes = export
        if header.game_id != game_id or any(env.game_id != game_id for env in envelopes[:1] + envelopes[-1:]):
            raise ArchiveDamaged(f"the archived file of {game_id} holds another game ({header.game_id})")
        if (gap := _gap(header, envelopes)) is not None:
            raise ArchiveDamaged(f"the archived file of {game_id} is not its whole log: {gap}")
        if (wrong := _unsealed(header, envelopes)) is not None:
            raise ArchiveDamaged(f"the archived file of {game_id} was changed: {wrong}")
        with self._lock:
            self._cache[game_id] = export
            if len(self._cache) > CACHE:
                self._cache.popitem(last=False)
        return export

    def reachable(self) -> bool:
        """Whether the archive's root answers (``/readyz``): a folder that is there (made if not) and writable; a
        URL's root made if it can be and listed — on an object store an empty root (a prefix no object has yet)
        is not found, and that is an answer: it has no folders."""
        try:
            if self.folder:
                root = self.base if self.remote else self.root
                Path(root).mkdir(parents=True, exist_ok=True)
                return os.access(root, os.W_OK)
            self.fs.makedirs(self.base, exist_ok=True)  # a missing bucket is made, where the backend may
            try:
                self.fs.ls(self.base, detail=False)
            except FileNotFoundError:
                pass
            return True
        except Exception:  # noqa: BLE001 - whatever the backend raises, the answer is: not reachable
            return False


def _gap(header: ExportHeader, envelopes: list[Envelope]) -> str | None:
    """Where a file's envelopes stop being the log its header names (seqs 1 to ``version``, each chained to the one
    before and hashing to its own ``hash``, the last at ``head``): a file that lost events — its header whole — would
    read as a shorter game, and one whose event was edited by hand with every hash kept (the winner's seat changed in
    ``game_won``) would be served as the game under a genuine receipt head. So every envelope is hashed again, as
    ``replays verify`` hashes it: a sha256 an event, once a file is read (then it is cached)."""
    prev = GENESIS
    for seq, env in enumerate(envelopes, start=1):
        if env.seq != seq or env.prev_hash != prev:
            return f"seq {env.seq} where seq {seq}, chained to {prev[:12]}, was due"
        if chain_hash(prev, canonical(body_of(env))) != env.hash:
            return f"seq {seq} does not hash to the hash it carries (its content was changed)"
        prev = env.hash
    if len(envelopes) != header.version or prev != header.head:
        return f"{len(envelopes)} events ending at {prev[:12]}, where the header names {header.version} ending at {header.head[:12]}"
    return None


def _unsealed(header: ExportHeader, envelopes: list[Envelope]) -> str | None:
    """The first secret of the file that is not the one its digest was made of: an envelope's hash covers its
    ``secret_digest``, never its ``secret`` (so that a redacted log verifies), and a deck edited by hand with its digest
    kept chains and hashes whole. An archived file carries its seed: the seed must be the one committed to when the
    game was created, and each secret must give its digest again (one HMAC a secret, once a file is read)."""
    if header.seed is None:
        return "it carries no seed (an archived game's file always does)"
    seed = bytes.fromhex(header.seed)
    committed = {header.seed_commitment}
    if envelopes and envelopes[0].type == "game_created":
        committed.add(msgspec.json.decode(envelopes[0].public).get("seed_commitment", header.seed_commitment))
    if committed != {seed_commitment(seed)}:
        return "its seed is not the one the game committed to"
    for env in envelopes:
        if has_secret(env) and secret_digest(seed, env.seq, bytes(env.secret)) != env.secret_digest:
            return f"the secret of seq {env.seq} is not the one its digest was made of"
    return None


def _write_durably(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")  # two writes of one game never share it
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
