"""Attacks on the embedded store's journal compaction (service/store/compaction.py): each case failed before its fix."""

from __future__ import annotations

import asyncio
import os

import pytest

from service.api.settings import Settings, SettingsError
from service.cli.serve import _ratio
from service.store.embedded import EmbeddedStore
from service.store.journal import JournalCorrupt


async def _until(condition, timeout: float = 10.0) -> None:
    """Wait on a condition (no sleep as synchronisation: each turn yields to the loop only)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.001)


@pytest.mark.parametrize("ratio", ["1", "0.5", "1e-9"])
def test_a_ratio_that_cannot_shrink_the_journal_is_refused(ratio):
    """A journal just compacted is 1 × its live size: with a ratio of 1 or less it is due again at once, and the service
    rewrote it — a capture of the whole store under its write lock, a file written and fsynced — every second for ever
    (``test_a_ratio_of_one_compacts_an_idle_store_once``). Such a ratio is refused, like a negative one."""
    with pytest.raises(ValueError):
        _ratio(ratio)
    with pytest.raises(SettingsError, match="COMPACT_RATIO"):
        Settings.from_env({"FREE_PARKING_COMPACT_RATIO": ratio})


def test_an_infinite_ratio_is_refused_from_the_environment_as_by_the_flag():
    with pytest.raises(ValueError):
        _ratio("inf")
    with pytest.raises(SettingsError, match="COMPACT_RATIO"):
        Settings.from_env({"FREE_PARKING_COMPACT_RATIO": "inf"})


async def test_a_ratio_of_one_compacts_an_idle_store_once(tmp_path):
    """What the refusal above keeps out: the watch given ratio 1 on a store nobody writes to."""
    store = await EmbeddedStore(tmp_path).open()
    try:
        for i in range(50):  # a journal several times its live size: one compaction is due
            await store.put_player("p1", {"name": f"n{i}" * 50})
        stop, looks, size = asyncio.Event(), [], store.compaction.journal_bytes
        store.compaction.journal_bytes = lambda: looks.append(1) or size()  # each second's look at the journal
        task = asyncio.create_task(store.compaction.watch(stop, 1.0, 0, every=0.001))
        await _until(lambda: len(looks) >= 6)
        stop.set()
        await task
        assert store.compaction.runs <= 1
    finally:
        await store.close()


async def _compacted(tmp_path) -> bytes:
    """A journal that is a snapshot alone (no tail), of a store with a few keys; its bytes."""
    store = await EmbeddedStore(tmp_path).open()
    for i in range(20):
        await store.put_player(f"p{i}", {"name": f"player {i}"})
    await store.compaction.run()
    await store.close()
    return (tmp_path / "journal.bin").read_bytes()


@pytest.mark.parametrize("cut", [1, 5, 20, "begin"])
async def test_a_snapshot_cut_short_is_refused_with_the_file_as_it_was(tmp_path, cut):
    """A snapshot is fsynced before it takes the journal's place, so one cut short is damage, never a torn write: its
    cut end was taken for a torn last record and cut off (the start's refusal then changed the file it refused), and a
    cut inside its first record left an empty journal: the whole store gone, the service started empty."""
    data = await _compacted(tmp_path)
    journal = tmp_path / "journal.bin"
    short = data[:30] if cut == "begin" else data[:-cut]
    journal.write_bytes(short)
    with pytest.raises(JournalCorrupt, match="snapshot"):
        await EmbeddedStore(tmp_path).open()
    assert journal.read_bytes() == short and not [f for f in os.listdir(tmp_path) if "damaged" in f]
    store = await EmbeddedStore(tmp_path, repair=True).open()  # set aside whole, in one file
    try:
        assert store.dropped is not None and store.dropped.offset == 0
        kept = [f for f in os.listdir(tmp_path) if "damaged" in f]
        assert len(kept) == 1 and (tmp_path / kept[0]).read_bytes() == short
    finally:
        await store.close()


async def test_a_leftover_that_is_a_symlink_to_the_journal_does_not_truncate_it(tmp_path):
    """``journal.bin.compact`` was opened with O_TRUNC, following a symlink: one to the journal (or any file) had it
    truncated and overwritten with the snapshot, then renamed to a symlink loop — every write refused, the journal's
    records gone. The leftover is removed and the copy made with O_EXCL | O_NOFOLLOW."""
    store = await EmbeddedStore(tmp_path).open()
    try:
        await store.put_player("p1", {"name": "one"})
        os.symlink(tmp_path / "journal.bin", tmp_path / "journal.bin.compact")
        await store.compaction.run()
        await store.put_player("p2", {"name": "two"})
    finally:
        await store.close()
    again = await EmbeddedStore(tmp_path).open()
    try:
        assert await again.r.hget(again.keys.player("p1"), "name") == b"one"
        assert await again.r.hget(again.keys.player("p2"), "name") == b"two"
    finally:
        await again.close()


async def test_a_leftover_that_is_a_directory_is_refused_in_one_line(tmp_path):
    """It crashed the start with ``IsADirectoryError`` and a traceback."""
    (tmp_path / "journal.bin.compact").mkdir()
    with pytest.raises(JournalCorrupt, match=r"journal\.bin\.compact: not a regular file") as e:
        await EmbeddedStore(tmp_path).open()
    assert "\n" not in str(e.value)


async def test_a_store_whose_journal_could_not_be_reopened_closes_and_starts_again(tmp_path, monkeypatch):
    """A compaction renamed into place, then failing to reopen the journal (out of file descriptors), left the store
    refusing writes, as it should — but its close closed the journal's descriptor a second time, raised ``EBADF``, and
    never released the data folder's lock."""
    from service.store import compaction

    class Unopenable(compaction.Journal):
        def __init__(self, *args, **kwargs):
            raise OSError(24, "Too many open files")

    store = await EmbeddedStore(tmp_path).open()
    await store.put_player("p1", {"name": "one"})
    monkeypatch.setattr(compaction, "Journal", Unopenable)
    with pytest.raises(OSError):
        await store.compaction.run()
    monkeypatch.undo()
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    try:
        assert await again.r.hget(again.keys.player("p1"), "name") == b"one"
    finally:
        await again.close()


async def test_a_journal_that_is_a_symlink_stays_where_it_leads(tmp_path):
    """A journal kept on another disk through a symlink (the journal's reader follows one) was replaced by the compacted
    copy made beside the link: the journal moved into the data folder's disk, the link gone, and the old journal left
    whole where the link led — a second copy of the store, stale, for an operator to take for the real one."""
    data, elsewhere = tmp_path / "data", tmp_path / "disk2"
    data.mkdir(), elsewhere.mkdir()
    (elsewhere / "journal.bin").touch()
    (data / "journal.bin").symlink_to(elsewhere / "journal.bin")
    store = await EmbeddedStore(data).open()
    try:
        for i in range(20):
            await store.put_player("p1", {"name": f"name {i}"})
        await store.compaction.run()
        await store.put_player("p2", {"name": "two"})
    finally:
        await store.close()
    assert (data / "journal.bin").is_symlink()
    assert not (data / "journal.bin.compact").exists() and sorted(os.listdir(elsewhere)) == ["journal.bin"]
    again = await EmbeddedStore(data).open()
    try:
        assert await again.r.hget(again.keys.player("p1"), "name") == b"name 19"
        assert await again.r.hget(again.keys.player("p2"), "name") == b"two"
    finally:
        await again.close()


async def test_the_journal_size_of_a_store_whose_journal_could_not_be_reopened_is_still_read(tmp_path, monkeypatch):
    """``/metrics`` reads ``journal_bytes`` (an ``fstat`` of the journal's descriptor): after a compaction that renamed
    into place and could not reopen the journal, the descriptor was closed and the read raised ``EBADF`` — a 500 on
    ``/metrics`` for as long as the broken store ran. It reads the file's size then."""
    from service.store import compaction

    class Unopenable(compaction.Journal):
        def __init__(self, *args, **kwargs):
            raise OSError(24, "Too many open files")

    store = await EmbeddedStore(tmp_path).open()
    try:
        await store.put_player("p1", {"name": "one"})
        monkeypatch.setattr(compaction, "Journal", Unopenable)
        with pytest.raises(OSError):
            await store.compaction.run()
        assert store.compaction.journal_bytes() == (tmp_path / "journal.bin").stat().st_size
    finally:
        monkeypatch.undo()
        await store.close()


def test_compact_by_hand_on_a_folder_without_a_journal_makes_nothing(tmp_path, capsys, monkeypatch):
    """A mistyped ``--data`` had ``compact`` make the folder, a lock and a journal of an empty snapshot, and say it
    compacted "0 bytes → 69 bytes" with exit 0: no sign that the store it was meant for was never touched."""
    from service.__main__ import main

    for name in ("REDIS_URL", "REDIS_SENTINEL", "FREE_PARKING_REDIS_URL", "FREE_PARKING_REDIS_SENTINEL"):
        monkeypatch.delenv(name, raising=False)  # CI sets REDIS_URL: compact is then refused for another reason

    missing = tmp_path / "typo"
    assert main(["compact", "--data", str(missing)]) == 2
    assert "no journal" in capsys.readouterr().out
    assert not missing.exists()
    (tmp_path / "empty").mkdir()
    assert main(["compact", "--data", str(tmp_path / "empty")]) == 2
    assert os.listdir(tmp_path / "empty") == []


async def test_damage_inside_a_snapshot_is_set_aside_whole_in_one_file(tmp_path):
    """A damaged record inside the snapshot, intact ones after it: ``--repair`` cut the journal at the damage (the
    snapshot's first records kept), then found the snapshot short and set the rest aside — the store's one state split
    over two files. A snapshot's damage is now judged before the journal's reader cuts anything."""
    store = await EmbeddedStore(tmp_path).open()
    for i in range(40):  # three or more keys records of ~256 KiB
        await store.put_player(f"p{i}", {"name": "x" * 20_000})
    await store.compaction.run()
    await store.put_player("late", {"name": "tail"})
    await store.close()
    journal = tmp_path / "journal.bin"
    data = bytearray(journal.read_bytes())
    data[300_000] ^= 0x01  # inside the second keys record
    journal.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="snapshot"):
        await EmbeddedStore(tmp_path).open()
    assert journal.read_bytes() == bytes(data)
    store = await EmbeddedStore(tmp_path, repair=True).open()
    try:
        kept = [f for f in os.listdir(tmp_path) if "damaged" in f]
        assert len(kept) == 1 and (tmp_path / kept[0]).read_bytes() == bytes(data)
    finally:
        await store.close()


async def test_a_snapshot_whose_end_was_zeroed_is_refused_with_the_file_as_it_was(tmp_path):
    """Zeros over the last bytes of a snapshot-only journal read as a torn last record, cut off before the refusal."""
    data = bytearray(await _compacted(tmp_path))
    data[-6:] = bytes(6)
    journal = tmp_path / "journal.bin"
    journal.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="snapshot"):
        await EmbeddedStore(tmp_path).open()
    assert journal.read_bytes() == bytes(data) and not [f for f in os.listdir(tmp_path) if "damaged" in f]
