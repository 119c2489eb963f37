"""The embedded store: fakeredis in this process, every write journalled to a file under ``--data``.

One process owns the data, so the append contract is carried out in Python under a lock instead of
by the Lua script (fakeredis interprets Lua at a few thousand calls a second); the store contract
tests run the same cases against both and against the script on a real server. Writes are journalled
as ``(op, args)`` records and replayed through the same code at start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import fakeredis
import msgspec

from .journal import Journal
from .keys import STATUSES
from .store import AppendRequest, Appended, Store, append_args

_record = msgspec.msgpack.Encoder()


class _Op(msgspec.Struct, array_like=True):
    op: str
    args: list[Any]


_decode_op = msgspec.msgpack.Decoder(_Op)
_decode_request = msgspec.msgpack.Decoder(AppendRequest)


class EmbeddedStore(Store):
    name = "embedded"

    def __init__(self, data_dir: Path | None, namespace: str = "fp", *, fsync: bool = False) -> None:
        super().__init__(fakeredis.FakeAsyncRedis(decode_responses=False), namespace)
        self._lock = asyncio.Lock()
        self._journal_path = data_dir / "journal.bin" if data_dir else None
        self._journal: Journal | None = None
        self._fsync = fsync

    async def open(self) -> EmbeddedStore:
        """Replay the journal into a fresh in-memory server, then start journalling."""
        if self._journal_path is not None:
            for payload in Journal.records(self._journal_path):
                op = _decode_op.decode(payload)
                args = [_decode_request.decode(op.args[0])] if op.op == "append" else op.args
                await getattr(self, f"_op_{op.op}")(*args)
            self._journal = Journal(self._journal_path, fsync=self._fsync)
        return self

    async def _write(self, op: str, *args: Any) -> Any:
        async with self._lock:
            result = await getattr(self, f"_op_{op}")(*args)
            if self._journal is not None and _changed(result):
                stored = [_record.encode(args[0])] if op == "append" else list(args)
                self._journal.write(_record.encode(_Op(op, stored)))
            return result

    async def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
        await super().close()

    async def _op_append(self, req: AppendRequest) -> Appended:
        """The append script's contract, step for step (``append.lua``)."""
        keys, _ = append_args(self.keys, req)
        stream, meta, commands, log, *indexes, due = keys
        r = self.r
        if req.command_key:
            record = await r.hget(commands, req.command_key)
            if record is not None:
                first, last = (int(x) for x in record.decode().split(":")[1:])
                same = record.decode().startswith(req.command_digest)
                return Appended("duplicate" if same else "command_id_reused", last, first, last)
        version = int(await r.hget(meta, "version") or 0)
        if version != req.expected_version:
            return Appended("conflict", version)
        last = version + len(req.entries)
        pipe = r.pipeline(transaction=True)
        for i, entry in enumerate(req.entries, start=1):
            pipe.xadd(stream, {"e": entry}, id=f"{version + i}-0")
        pipe.hset(meta, mapping={"version": last, "head": req.head, "status": req.status, **req.meta})
        if req.command_key:
            pipe.hset(commands, req.command_key, f"{req.command_digest}:{version + 1}:{last}")
        pipe.xadd(log, {"game": req.game_id, "from": version + 1, "to": last})
        for index in indexes:
            pipe.zrem(index, req.game_id)
        pipe.zadd(indexes[STATUSES.index(req.status)], {req.game_id: req.created_at})
        if req.due_at is not None:
            pipe.zadd(due, {req.game_id: req.due_at})
        else:
            pipe.zrem(due, req.game_id)
        await pipe.execute()
        return Appended("ok", last, version + 1, last)


def _changed(result: Any) -> bool:
    """Whether a write op wrote anything (an append that was refused did not)."""
    return not isinstance(result, Appended) or result.outcome == "ok"

