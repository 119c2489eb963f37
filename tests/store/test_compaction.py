"""Compaction of the embedded store's journal (service/store/compaction.py): the store after a compaction and a restart
is the store before it, writes made while it runs are kept, and a snapshot that does not load whole is refused like a
damaged journal — kept beside it with ``--repair``, never destroyed."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import msgspec
import pytest

from service.store import compaction
from service.store.embedded import EmbeddedStore
from service.store.journal import Journal, JournalCorrupt
from service.store.oplog import Op
from service.store.store import Appended
from tests.store.test_embedded_restart import everything
from tests.store.test_store_contract import batches, dump, request, run_scenario

GAMES = [f"g-same-{i}" for i in range(6)]


def remembered(store: EmbeddedStore) -> tuple:
    """What the store keeps beside fakeredis, which a load must rebuild as a replay does."""
    return store._version, store._status, store._commands, store._due


@pytest.fixture
async def scenario(tmp_path):
    """A store of the contract's scenario (every kind of write), its projectors' group part read, and all of it seen;
    each test closes it."""
    store = await EmbeddedStore(tmp_path).open()
    await run_scenario(store)
    log = store.keys.log(store._partition("g-same-0"))
    await store.r.xgroup_create(log, "projectors", id="0")
    await store.r.xreadgroup("projectors", "w1", {log: ">"}, count=2)
    return store, await everything(store, GAMES), remembered(store)


async def test_a_compacted_journal_restarts_into_the_same_store_and_goes_on(scenario, tmp_path):
    store, before, caches = scenario
    journal = tmp_path / "journal.bin"
    size = journal.stat().st_size
    done = await store.compaction.run()
    assert done.before == size and done.after == journal.stat().st_size == done.live and done.tail == 0
    assert done.after < size
    groups = await store.r.xinfo_groups(store.keys.log(store._partition("g-same-0")))
    await store.close()

    again = await EmbeddedStore(tmp_path).open()
    assert await everything(again, GAMES) == before and remembered(again) == caches
    assert await again.r.xinfo_groups(again.keys.log(again._partition("g-same-0"))) == groups  # resumes where it was
    assert again.compaction.live == done.live
    b = batches("g-same-0")
    assert await again.append(request("g-same-0", b[3])) == Appended("ok", b[3].last, b[3].first, b[3].last)
    await again.close()
    third = await EmbeddedStore(tmp_path).open()  # the write after the snapshot replays after it
    assert await third.read("g-same-0") == [e for x in b[:4] for e in x.envelopes]
    await third.close()


async def test_writes_made_while_the_snapshot_is_written_follow_it(scenario, tmp_path, monkeypatch):
    store, _, _ = scenario
    written, go_on = threading.Event(), threading.Event()
    write = compaction._write

    def slow_write(path, payloads):
        written.set()
        go_on.wait(30)
        write(path, payloads)

    monkeypatch.setattr(compaction, "_write", slow_write)
    running = asyncio.create_task(store.compaction.run())
    await asyncio.to_thread(written.wait, 30)
    b = batches("g-same-0")
    assert (await store.append(request("g-same-0", b[3]))).outcome == "ok"
    await store.put_token("f" * 64, b"late")
    go_on.set()
    done = await running
    assert done.tail > 0
    await store.put_player("p-late", {"name": "Late"})  # written to the new journal
    after = await everything(store, GAMES)
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    assert await everything(again, GAMES) == after
    assert await again.token("f" * 64) == b"late" and await again.player("p-late") == {"name": "Late"}
    await again.close()


async def test_a_leftover_of_a_compaction_killed_before_its_rename_is_removed(scenario, tmp_path):
    store, before, _ = scenario
    await store.close()
    leftover = tmp_path / "journal.bin.compact"
    leftover.write_bytes(b"half a snapshot")
    again = await EmbeddedStore(tmp_path).open()
    assert not leftover.exists() and await everything(again, GAMES) == before
    await again.close()


async def compacted(tmp_path, store) -> bytes:
    await store.compaction.run()
    await store.close()
    return (tmp_path / "journal.bin").read_bytes()


async def test_a_flipped_byte_in_the_snapshot_is_refused_naming_it_and_repair_keeps_it_beside(scenario, tmp_path):
    store, _, _ = scenario
    data = bytearray(await compacted(tmp_path, store))
    journal = tmp_path / "journal.bin"
    data[len(data) // 3] ^= 0x40
    journal.write_bytes(data)
    with pytest.raises(JournalCorrupt, match=r"in the snapshot the journal begins with \(bytes 0–\d+"):
        await EmbeddedStore(tmp_path).open()
    assert journal.read_bytes() == data  # refused: untouched
    repaired = await EmbeddedStore(tmp_path, repair=True).open()
    assert await dump(repaired) == {} and journal.read_bytes() == b""  # the whole snapshot went: it is one state
    kept = list(tmp_path.glob("journal.bin.damaged-*"))  # whole, in one file (not split at the damaged byte)
    assert len(kept) == 1 and kept[0].read_bytes() == data
    await repaired.close()


async def test_a_snapshot_cut_short_before_its_end_is_refused_never_half_loaded(scenario, tmp_path):
    store, _, _ = scenario
    await compacted(tmp_path, store)
    records = list(Journal.records(tmp_path / "journal.bin"))
    assert [msgspec.msgpack.decode(p, type=Op).op for p in records[:1] + records[-1:]] == ["snapshot_begin", "snapshot_end"]
    journal = tmp_path / "journal.bin"
    journal.write_bytes(b"".join(Journal.frame(p) for p in records[:-1]))  # begin and keys, no end …
    late = await EmbeddedStore(tmp_path / "other").open()
    await late.put_token("e" * 64, b"after")  # … then an ordinary write
    await late.close()
    with open(journal, "ab") as f:
        f.write((tmp_path / "other" / "journal.bin").read_bytes())
    with pytest.raises(JournalCorrupt, match="put_token.* record inside the snapshot, before its end"):
        await EmbeddedStore(tmp_path).open()
    refused = journal.read_bytes()
    repaired = await EmbeddedStore(tmp_path, repair=True).open()
    assert await dump(repaired) == {} and repaired.dropped.offset == 0
    assert Path(repaired.dropped.kept).read_bytes() == refused and journal.read_bytes() == b""
    await repaired.close()


async def test_a_snapshot_taken_under_another_namespace_loads_under_this_one(scenario, tmp_path):
    store, _, _ = scenario
    await compacted(tmp_path, store)
    other = await EmbeddedStore(tmp_path, namespace="club").open()
    assert len(await other.read("g-same-0")) == 3
    assert other._version and all(k.startswith(b"club:") for k in await other.r.keys())
    await other.close()
