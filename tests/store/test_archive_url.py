"""The archive at a URL, through fsspec (service/store/archive.py): ``memory://`` in this process, an object store's
ways (``objstore://`` below: S3's, as s3fs shows them) and ``file://`` (a real folder, by fsspec's URL). What was
written reads back as the export; a game never archived is ``None``; a damaged object is ``ArchiveError``, never a
wrong game; a backend that fails is ``ArchiveError`` whatever it raises; ``reachable`` says whether the root answers.
The service end to end on a ``file://`` and a ``memory://`` archive: ``tests/api/test_archive_url.py``."""

from __future__ import annotations

import gzip
import os
import uuid
from io import BytesIO
from pathlib import Path

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFile, MemoryFileSystem

from service.store.archive import Archive, ArchiveDamaged, ArchiveError
from service.events.export import dumps, load
from service.rules.engine import export_header


class ObjectStore(MemoryFileSystem):
    """``memory://``'s objects with an object store's ways, as s3fs shows S3: no folders — ``makedirs`` makes nothing
    below the bucket, and a prefix is a folder only while some object's name starts with it (``isdir`` of an empty
    prefix is false, ``ls`` of it ``FileNotFoundError``) — and an object is put whole when its writer closes,
    nothing before."""

    protocol = "objstore"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, global_store=False, **kwargs)
        self.puts: list[str] = []  # every object put, in order (one instance for every bucket: fsspec keeps it)

    @classmethod
    def _strip_protocol(cls, path):
        return super()._strip_protocol(str(path).removeprefix("objstore://"))

    def mkdir(self, path, create_parents=True, **kwargs) -> None:
        pass

    def makedirs(self, path, exist_ok=False) -> None:
        pass

    def isdir(self, path) -> bool:
        prefix = self._strip_protocol(path).rstrip("/")
        return any(name.startswith(prefix + "/") for name in self.store)

    def ls(self, path, detail=True, **kwargs):
        prefix = self._strip_protocol(path).rstrip("/")
        if not self.isdir(prefix):
            raise FileNotFoundError(path)
        return super().ls(path, detail=detail, **kwargs)

    def _open(self, path, mode="rb", **kwargs):
        if "w" not in mode:
            return super()._open(path, mode, **kwargs)
        return _Upload(self, self._strip_protocol(path), kwargs.get("data"))


class _Upload(BytesIO):
    def __init__(self, fs: ObjectStore, path: str, data: bytes | None) -> None:
        super().__init__(data or b"")
        self.seek(0, 2)
        self.fs, self.path = fs, path

    def close(self) -> None:
        if not self.closed:
            self.fs.store[self.path] = MemoryFile(self.fs, self.path, self.getvalue())
            self.fs.puts.append(self.path)
        super().close()


fsspec.register_implementation("objstore", ObjectStore, clobber=True)


@pytest.fixture
def game_export(finished_game) -> tuple[str, bytes]:
    """A finished game's id and export (the session's four-seat greedy game)."""
    return finished_game.game.game_id, dumps(export_header(finished_game.game, with_seed=True), finished_game.envelopes)


@pytest.fixture(params=["memory", "objstore", "file"])
def archive(request, tmp_path) -> Archive:
    """An archive at a root of its own: each test's own bucket (fsspec keeps one filesystem per protocol)."""
    if request.param == "file":
        return Archive(f"file://{tmp_path}/archive")
    return Archive(f"{request.param}://b-{uuid.uuid4().hex[:8]}/games")


def test_a_game_written_reads_back_as_its_export_and_the_object_is_its_export_gzipd(archive, game_export):
    game_id, data = game_export
    assert archive.reachable()
    archive.write(game_id, data)
    header, envelopes = archive.read(game_id)
    assert (header, envelopes) == load(data)
    assert gzip.decompress(archive.fs.cat_file(archive._path(game_id))) == data  # zcat gives the export back
    assert archive._path(game_id).endswith(f"/{archive.name(game_id)}")
    archive._cache.clear()  # read from the backend again, not what this process kept
    assert archive.read(game_id) == (header, envelopes)


def test_a_game_never_archived_is_none_and_a_name_that_is_no_game_id_is_never_looked_up(archive, game_export):
    game_id, data = game_export
    assert archive.read(game_id) is None
    archive.write(game_id, data)
    assert archive.read("g-never-archived") is None
    assert archive.read("../" + game_id) is None and archive.read(f"{game_id}/x") is None


@pytest.mark.parametrize("damage", ["not gzip", "cut short", "not an export"])
def test_a_damaged_object_is_an_archive_error_never_a_game(archive, game_export, damage):
    game_id, data = game_export
    archive.write(game_id, data)
    whole = gzip.compress(data)
    bad = {"not gzip": b"\x00" * 64, "cut short": whole[: len(whole) // 2], "not an export": gzip.compress(b"{}\n")}[damage]
    archive.fs.pipe_file(archive._path(game_id), bad)
    archive._cache.clear()
    with pytest.raises(ArchiveDamaged, match=f"the archived game {game_id} is damaged"):
        archive.read(game_id)
    archive.write(game_id, data)  # an operator restores it: read again, it is the game
    assert archive.read(game_id) == load(data)


def test_a_backend_that_fails_is_an_archive_error_whatever_it_raises(archive, game_export, monkeypatch):
    """A backend's own exceptions are not all OSError (botocore's are not): each is told as ``ArchiveError``, which
    the runner and the API answer for, never an unexpected error."""
    game_id, data = game_export

    class BackendDown(Exception):
        pass

    def down(*args, **kwargs):
        raise BackendDown("the backend does not answer")

    for name in ("cat_file", "pipe_file", "open", "makedirs", "ls", "exists", "isdir", "info"):
        monkeypatch.setattr(archive.fs, name, down, raising=False)
    monkeypatch.setattr("service.store.archive._write_durably", down)  # a file:// root's writes
    monkeypatch.setattr(Path, "mkdir", down)  # and its reachable
    with pytest.raises(ArchiveError, match="cannot be written.*does not answer"):
        archive.write(game_id, data)
    with pytest.raises(ArchiveError, match="cannot be read.*does not answer"):
        archive.read(game_id)
    assert not archive.reachable()


def test_an_empty_root_is_reachable_on_an_object_store(game_export):
    """An object store has no folders: a root no game was written under yet is an empty prefix, and it is
    reachable (``/readyz``) — else a new deployment would wait, not ready, for a first game that never comes."""
    archive = Archive(f"objstore://b-{uuid.uuid4().hex[:8]}/games")
    assert not archive.fs.isdir(archive.base)  # as s3fs says of a prefix no object has
    assert archive.reachable()


def test_an_object_store_is_sent_each_game_whole_in_one_put(game_export):
    """A PUT is whole on an object store (an object appears at once, or not at all): the game is sent in one, and
    never under another name first (a temporary object and ``mv``: a copy and a delete there, not a rename)."""
    game_id, data = game_export
    archive = Archive(f"objstore://b-{uuid.uuid4().hex[:8]}/games")
    archive.write(game_id, data)
    ours = [name for name in archive.fs.puts if name.startswith(archive.base + "/")]
    assert ours == [archive._path(game_id)]
    assert [name for name in archive.fs.store if name.startswith(archive.base + "/")] == ours


def test_a_file_url_is_written_as_a_folder_is_a_temporary_name_renamed_into_place(tmp_path, game_export, monkeypatch):
    """fsspec's own local files are written in place and never fsynced: a ``file://`` root is written as a folder
    root is — a temporary name, fsynced, renamed into place — so a crash before the rename leaves no file at the
    game's name (the game stays in the store) and a power cut after the removal cannot lose it."""
    game_id, data = game_export
    archive = Archive(f"file://{tmp_path}/archive")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))

    def crash(src, dst):
        raise OSError("killed before the rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(ArchiveError):
        archive.write(game_id, data)
    assert archive.read(game_id) is None and not (tmp_path / "archive" / archive.name(game_id)).exists()
    monkeypatch.undo()
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    synced.clear()
    archive.write(game_id, data)
    assert len(synced) == 2  # the file, then its folder
    assert gzip.decompress((tmp_path / "archive" / archive.name(game_id)).read_bytes()) == data


def test_a_url_whose_backend_is_not_installed_is_refused_clearly():
    with pytest.raises(ArchiveError, match="s3fs|backend"):
        Archive("s3://some-bucket/games")
    with pytest.raises(ArchiveError, match="nope"):
        Archive("nope://x/games")


@pytest.mark.parametrize("loss", ["every event", "one event in the middle", "the last event"])
def test_a_file_whose_header_is_whole_but_which_lost_events_is_damaged_not_a_shorter_game(archive, game_export, loss):
    """Found by review: such a file (re-gzipped, so the gzip is whole) read as the game at an earlier version."""
    game_id, data = game_export
    lines = data.splitlines(keepends=True)
    kept = {"every event": lines[:1], "one event in the middle": lines[:5] + lines[6:], "the last event": lines[:-1]}[loss]
    archive.fs.makedirs(archive._path(game_id).rpartition("/")[0], exist_ok=True)
    archive.fs.pipe_file(archive._path(game_id), gzip.compress(b"".join(kept)))
    with pytest.raises(ArchiveDamaged, match=f"the archived file of {game_id} is not its whole log"):
        archive.read(game_id)


def test_two_writes_of_one_game_at_once_in_one_process_both_land(tmp_path, game_export):
    """A folder's write goes through a temporary name: two at once in one process (two threads) must not share it,
    or the second rename finds the first one's file gone."""
    from concurrent.futures import ThreadPoolExecutor

    archive = Archive(tmp_path / "archive")
    game_id, data = game_export
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: archive.write(game_id, data), range(32)))
    assert archive.read(game_id) == load(data)
    assert [p.name for p in archive_files(tmp_path / "archive")] == [f"{game_id}.ndjson.gz"]


def archive_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())
