"""The embedded store after a restart: every acknowledged write is back, exactly; nothing refused was kept."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest
import redis

from service.store.embedded import EmbeddedStore, _Op
from service.store.journal import Journal, JournalCorrupt
from service.store.keys import STATUSES
from service.store.store import Appended, StoreUnavailable, command_digest
from tests.store.test_store_contract import CREATED_AT, TEMPLATE, as_game, batches, dump, request, run_scenario

ROOT = Path(__file__).resolve().parents[2]


async def everything(store, game_ids: list[str]) -> dict:
    """All a client could read, plus every key (partition-log entry IDs aside: they are minted again)."""
    out = {"keys": await dump(store)}
    for gid in game_ids:
        out[gid] = (await store.read(gid), await store.meta(gid))
    out["lists"] = [await store.list_games(s, 1000) for s in (None, *STATUSES)]
    out["due"] = await store.due_games(CREATED_AT + 10**9, limit=1000)
    return out


def records(data_dir: Path) -> list[_Op]:
    return [msgspec.msgpack.decode(p, type=_Op) for p in Journal.records(data_dir / "journal.bin")]


@pytest.mark.parametrize("fsync", [False, True])
async def test_a_restart_reloads_every_acknowledged_write_exactly(tmp_path, fsync):
    store = await EmbeddedStore(tmp_path, fsync=fsync).open()
    _, keys = await run_scenario(store)
    games = [f"g-same-{i}" for i in range(6)]
    before = await everything(store, games)
    assert before["keys"] == keys
    tokens = {f"{i:064x}": await store.token(f"{i:064x}") for i in range(6)}
    players = {f"p-{i}": await store.player(f"p-{i}") for i in range(6)}
    commands = {gid: await store.r.hgetall(store.keys.commands(gid)) for gid in games}
    await store.close()

    again = await EmbeddedStore(tmp_path, fsync=fsync).open()
    assert await everything(again, games) == before
    assert {t: await again.token(t) for t in tokens} == tokens
    assert {p: await again.player(p) for p in players} == players
    assert {gid: await again.r.hgetall(again.keys.commands(gid)) for gid in games} == commands
    # the partition log holds the same pointers in the same order (their IDs are new)
    assert before["keys"] == await dump(again)

    # and it goes on from there: the next append of a game continues its chain
    b = batches("g-same-0")
    assert await again.append(request("g-same-0", b[3])) == Appended("ok", b[3].last, b[3].first, b[3].last)
    assert await again.read("g-same-0") == [e for x in b[:4] for e in x.envelopes]
    await again.close()


async def test_refused_appends_are_not_journalled(tmp_path):
    store = await EmbeddedStore(tmp_path).open()
    b = batches("g-refused")
    d = command_digest(b"body")
    await store.append(request("g-refused", b[0], key="seat:0:c1", digest=d))
    await store.append(request("g-refused", b[1]))
    journal = tmp_path / "journal.bin"
    size, count = journal.stat().st_size, len(records(tmp_path))
    assert count == 2
    assert (await store.append(request("g-refused", b[2], expected=0))).outcome == "conflict"
    assert (await store.append(request("g-refused", b[2], key="seat:0:c1", digest=d))).outcome == "duplicate"
    assert (await store.append(request("g-refused", b[2], key="seat:0:c1", digest="x"))).outcome == "command_id_reused"
    assert journal.stat().st_size == size
    await store.put_token("t" * 64, b"tok")
    assert [r.op for r in records(tmp_path)] == ["append", "append", "put_token"]
    await store.close()


async def test_a_torn_last_record_loses_only_the_write_it_held(tmp_path):
    b = batches(TEMPLATE)
    full, reference = tmp_path / "full", tmp_path / "reference"
    store, ref = await EmbeddedStore(full).open(), await EmbeddedStore(reference).open()
    for x in b[:6]:
        await store.append(request("g-torn", x))
    for x in b[:5]:
        await ref.append(request("g-torn", x))
    want = await everything(ref, ["g-torn"])
    await store.close()
    await ref.close()

    journal = full / "journal.bin"
    whole = journal.read_bytes()
    starts = []
    for payload in Journal.records(journal):
        starts.append((starts[-1][1] if starts else 0, (starts[-1][1] if starts else 0) + 8 + len(payload)))
    last_start = starts[-1][0]
    for cut in (last_start + 1, last_start + 8, last_start + 9, (last_start + len(whole)) // 2, len(whole) - 1):
        journal.write_bytes(whole[:cut])
        again = await EmbeddedStore(full).open()
        assert await everything(again, ["g-torn"]) == want, cut
        assert journal.stat().st_size == last_start
        assert again.dropped.kind == "torn" and Path(again.dropped.kept).read_bytes() == whole[last_start:cut]
        await again.close()
    again = await EmbeddedStore(full).open()  # and the lost append can be made again
    assert (await again.append(request("g-torn", b[5]))).outcome == "ok"
    await again.close()


async def test_damage_before_the_last_record_stops_the_store_from_opening(tmp_path):
    store = await EmbeddedStore(tmp_path).open()
    for x in batches(TEMPLATE)[:4]:
        await store.append(request("g-damaged", x))
    await store.close()
    journal = tmp_path / "journal.bin"
    data = bytearray(journal.read_bytes())
    data[20] ^= 0x40  # inside the first record's payload
    journal.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match=f"{journal}: byte 0: .*--repair"):
        await EmbeddedStore(tmp_path).open()
    assert journal.read_bytes() == bytes(data)
    assert list(tmp_path.glob("journal.bin.damaged-*")) == []


async def test_a_repair_keeps_what_came_before_the_damage_and_says_what_it_set_aside(tmp_path):
    b = batches(TEMPLATE)
    store = await EmbeddedStore(tmp_path).open()
    for x in b[:2]:
        await store.append(request("g-kept", x))
    await store.put_token("t" * 64, b"tok")
    for x in b[:3]:
        await store.append(request("g-lost", x))
    await store.close()
    journal = tmp_path / "journal.bin"
    whole = journal.read_bytes()
    assert [op.op for op in records(tmp_path)] == ["append", "append", "put_token", "append", "append", "append"]
    start = sum(8 + len(p) for p in list(Journal.records(journal))[:3])
    damaged = bytearray(whole)
    damaged[start + 12] ^= 0x01  # the first append of g-lost
    journal.write_bytes(bytes(damaged))
    with pytest.raises(JournalCorrupt, match=f"byte {start}: a damaged record followed by intact ones"):
        await EmbeddedStore(tmp_path).open()

    again = await EmbeddedStore(tmp_path, repair=True).open()
    assert await again.read("g-kept") == as_game("g-kept", [e for x in b[:2] for e in x.envelopes])
    assert await again.token("t" * 64) == b"tok"
    assert await again.read("g-lost") == []
    assert (again.dropped.kind, again.dropped.offset, again.dropped.intact) == ("corrupt", start, 2)
    assert again.dropped.held == {"append to g-lost": 2}
    assert Path(again.dropped.kept).read_bytes() == bytes(damaged[start:])
    assert (await again.append(request("g-lost", b[0]))).outcome == "ok"  # and the journal goes on
    await again.close()
    again = await EmbeddedStore(tmp_path).open()
    assert again.dropped is None and len(await again.read("g-lost")) == len(b[0].envelopes)
    await again.close()


async def test_a_flipped_bit_in_the_last_acknowledged_append_needs_a_repair(tmp_path):
    """Whole-length but failing its checksum: not a torn write, an acknowledged one damaged since."""
    b = batches(TEMPLATE)
    full, reference = tmp_path / "full", tmp_path / "reference"
    store, ref = await EmbeddedStore(full).open(), await EmbeddedStore(reference).open()
    for x in b[:4]:
        await store.append(request("g-flip", x))
    for x in b[:3]:
        await ref.append(request("g-flip", x))
    want = await everything(ref, ["g-flip"])
    await store.close()
    await ref.close()
    journal = full / "journal.bin"
    whole = journal.read_bytes()
    head = request("g-flip", b[3]).head.encode()  # a byte of the last append that still decodes when flipped
    at = whole.rindex(head)
    damaged = bytearray(whole)
    damaged[at] ^= 0x01
    journal.write_bytes(bytes(damaged))
    with pytest.raises(JournalCorrupt, match="a whole record whose checksum fails .*--repair") as e:
        await EmbeddedStore(full).open()
    assert e.value.dropped.suspect == "append to g-flip" and journal.read_bytes() == bytes(damaged)

    again = await EmbeddedStore(full, repair=True).open()
    assert await everything(again, ["g-flip"]) == want
    assert again.dropped.kind == "damaged" and again.dropped.suspect == "append to g-flip"
    await again.close()


async def test_a_journal_that_does_not_replay_is_refused(tmp_path):
    """Each journalled write took once, so it must take again: an append that conflicts at replay is damage."""
    store = await EmbeddedStore(tmp_path).open()
    b = batches(TEMPLATE)
    await store.append(request("g-twice", b[0]))
    await store.close()
    (first,) = Journal.records(tmp_path / "journal.bin")
    journal = Journal(tmp_path / "journal.bin")
    journal.write(first)  # the same append twice: the second cannot take
    journal.close()
    with pytest.raises(JournalCorrupt, match="record 1"):
        await EmbeddedStore(tmp_path).open()


async def test_a_journal_that_cannot_be_written_stops_every_later_write(tmp_path, monkeypatch):
    store = await EmbeddedStore(tmp_path).open()
    b = batches(TEMPLATE)
    await store.append(request("g-full-disk", b[0]))

    def no_space(payload: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store._journal, "write", no_space)
    with pytest.raises(StoreUnavailable, match="No space left"):
        await store.append(request("g-full-disk", b[1]))
    monkeypatch.undo()
    with pytest.raises(StoreUnavailable):  # memory is ahead of the journal now: nothing more is taken
        await store.append(request("g-other", b[0]))
    with pytest.raises(StoreUnavailable):
        await store.put_token("t" * 64, b"x")
    await store.close()
    again = await EmbeddedStore(tmp_path).open()  # what was acknowledged is there; the failed write is not
    assert await again.read("g-full-disk") == as_game("g-full-disk", b[0].envelopes)
    assert await again.read("g-other") == []
    assert (await again.append(request("g-full-disk", b[1]))).outcome == "ok"
    await again.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from service.store.embedded import EmbeddedStore
    from tests.store.test_store_contract import TEMPLATE, batches, request

    async def main():
        store = await EmbeddedStore(Path(sys.argv[1])).open()
        tmpl = batches(TEMPLATE)
        games = [f"g-kill-{i}" for i in range(8)]

        async def play(gid):
            for i, b in enumerate(tmpl):
                await store.append(request(gid, b))
                print(gid, b.last, flush=True)  # acknowledged
                if i % 3 == 0:
                    await store.put_token(f"{gid}-{b.last}", str(b.last).encode())
                    print("token", gid, b.last, flush=True)

        await asyncio.gather(*(play(g) for g in games))
        print("done", flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


async def test_kill_minus_nine_loses_nothing_acknowledged(tmp_path):
    """A writer killed mid-stream (SIGKILL, no clean-up): every append and token it acknowledged is back."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(  # noqa: ASYNC220 - the writer must be a process of its own, to be killed
        [sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True
    )
    acked: dict[str, int] = {}
    tokens: list[tuple[str, int]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if parts[0] == "token":
                tokens.append((parts[1], int(parts[2])))
            elif parts[0] != "done":
                acked[parts[0]] = int(parts[1])
            if len(acked) == 8 and sum(acked.values()) > 8 * 40 or parts[0] == "done":
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert acked, "the writer acknowledged nothing"
    tmpl = [e for b in batches(TEMPLATE) for e in b.envelopes]
    store = await EmbeddedStore(tmp_path).open()
    for gid, version in acked.items():
        got = await store.read(gid)
        assert len(got) >= version, gid
        assert got == as_game(gid, tmpl[: len(got)])
        assert int((await store.meta(gid))["version"]) == len(got)
    for gid, version in tokens:
        assert await store.token(f"{gid}-{version}") == str(version).encode()
    await store.close()


async def test_concurrent_writes_journal_in_the_order_they_were_applied(tmp_path):
    store = await EmbeddedStore(tmp_path).open()
    tmpl = batches(TEMPLATE)[:5]

    async def play(gid: str) -> None:
        for b in tmpl:
            assert (await store.append(request(gid, b))).outcome == "ok"

    await asyncio.gather(*(play(f"g-order-{i}") for i in range(16)))
    before = await everything(store, [f"g-order-{i}" for i in range(16)])
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    assert await everything(again, [f"g-order-{i}" for i in range(16)]) == before
    await again.close()


async def test_after_a_restart_command_ids_and_due_actions_are_known_as_before(tmp_path):
    """The embedded store answers command ids and whether a game has a due action from its own memory: the journal's
    replay must rebuild that memory, or a resend after a restart would be taken as a new command."""
    store = await EmbeddedStore(tmp_path).open()
    b, digest = batches("g-known"), command_digest(b"the body")
    await store.append(request("g-known", b[0], key="seat:0:c1", digest=digest, due_at=CREATED_AT + 5))
    await store.close()

    again = await EmbeddedStore(tmp_path).open()
    first = Appended("duplicate", b[0].last, b[0].first, b[0].last)
    assert await again.append(request("g-known", b[1], key="seat:0:c1", digest=digest)) == first
    reused = await again.append(request("g-known", b[1], key="seat:0:c1", digest=command_digest(b"another")))
    assert reused.outcome == "command_id_reused"
    assert await again.due_games(CREATED_AT + 5) == [("g-known", CREATED_AT + 5)]
    await again.clear_due("g-known", b[0].last)
    assert await again.due_games(CREATED_AT + 5) == []
    await again.close()


async def test_a_write_that_fails_part_way_stops_every_later_write(tmp_path, monkeypatch):
    """fakeredis may have taken part of a write that then failed: memory is ahead of the journal, so nothing more is
    shown or taken until a restart replays the journal (as when the journal cannot be written)."""
    store = await EmbeddedStore(tmp_path).open()
    b = batches(TEMPLATE)
    await store.append(request("g-torn", b[0]))
    pipeline = store._now.pipeline

    def failing_after_its_commands(**kw):
        pipe = pipeline(**kw)
        execute = pipe.execute

        def execute_then_fail():
            execute()
            raise redis.ResponseError("injected after the commands ran")

        pipe.execute = execute_then_fail
        return pipe

    monkeypatch.setattr(store._now, "pipeline", failing_after_its_commands)
    with pytest.raises(StoreUnavailable, match="part-way"):
        await store.append(request("g-torn", b[1]))
    monkeypatch.undo()
    for refused in (store.read("g-torn"), store.append(request("g-other", b[0])), store.rate_take("b", 0, 10, 1),
                    store.command_record("g-torn", "seat:0:x")):
        with pytest.raises(StoreUnavailable):
            await refused
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    assert await again.read("g-torn") == as_game("g-torn", b[0].envelopes)
    assert (await again.append(request("g-torn", b[1]))).outcome == "ok"
    await again.close()


async def _round_score(store) -> None:
    await store.project_leaderboard("p1", 1, {"all": 12.0})  # a round float: its encoding ends in zero bytes


async def _relay(store) -> None:
    await store.append(msgspec.structs.replace(request("g-relay", batches(TEMPLATE)[0]), told=b'[["p1",{"type":"x"}]]'))
    await store.tell_players("g-relay")


@pytest.mark.parametrize("write", [_round_score, _relay], ids=["round-float", "relay"])
async def test_a_damaged_last_record_is_refused_whatever_bytes_it_ends_in(tmp_path, write):
    """A record whose last bytes are zeros must not pass for a torn write (never acknowledged, dropped at start): its
    checksum damaged, the start refuses it like any damaged acknowledged write."""
    store = await EmbeddedStore(tmp_path).open()
    await write(store)
    await store.close()
    journal = tmp_path / "journal.bin"
    *_, last = Journal.records(journal)
    whole = bytearray(journal.read_bytes())
    crc_at = len(whole) - len(last) - 4  # the record's header is its length, then its checksum
    whole[crc_at] ^= 0x01
    journal.write_bytes(bytes(whole))
    with pytest.raises(JournalCorrupt, match="a whole record whose checksum fails"):
        await EmbeddedStore(tmp_path).open()
