"""A snapshot of the embedded store's memory, in a format of our own, written as journal records (``compaction.py``).

fakeredis's ``DUMP`` pickles its own internals (a format that changes with its version, and a pickle is code); and it
lacks ``XSETID``, which a stream's restore needs on Redis. So each key is written as what Redis would answer about it,
per type — a string with its expiry, a hash's fields, a list's items, a set's members, a sorted set's members and
scores, a stream's entries with their ids, its last generated id, and each consumer group with its last delivered
id, its consumers and its pending entries (owner, delivery time, delivery count) — and loaded back through ordinary
commands alone, so that what the loaded store answers is what the captured one did:

* a stream's last generated id is restored by adding an entry at it and deleting it (``XDEL``), where the stream no
  longer holds its last entry: a stream that does has it as its last entry already, and one that does not lost it to
  ``XDEL`` (a trim never takes the last entry), so the loaded stream has the deleted id the captured one had;
* a group's pending entry is claimed for its consumer with its delivery time and count (``XCLAIM … TIME RETRYCOUNT
  FORCE``); an entry still pending whose stream entry was deleted since is added in its place first (``ghost``) and
  deleted again once claimed, as it was;
* a group's lag (``XINFO GROUPS``: the entries it has not read) is restored as it was, known or not (``ENTRIESREAD``);
  the stream's own counters it is worked out from (entries added, the largest deleted id) are not kept: nothing
  reads them but that lag;
* a consumer's idle time is not kept (the time of its oldest pending entry stands for it): nothing reads it.

Records: ``snapshot_begin`` (the format, the namespace, how many bytes of records follow), ``snapshot_keys`` (whole
keys — a large one in pieces — up to about ``CHUNK`` bytes each), ``snapshot_end`` (counts and a CRC of every keys
record), each an ``Op`` of ``oplog.py``: a truncated or damaged snapshot is found, never half-loaded.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from .journal import RECORD_HEAD
from .oplog import Op, encode

FORMAT = 1
CHUNK = 256 * 1024
"""The bytes of keys a ``snapshot_keys`` record holds, about: a damaged one is then small beside the whole."""
PIECE = 2048
"""The most items (fields, members, entries) of one key in one piece: a key larger than that spans several."""
GHOST = b"\x00ghost"
"""The field of an entry added only to be deleted again (a pending entry's, or the last generated id's)."""


class Str(msgspec.Struct, tag="s", array_like=True):
    key: bytes
    value: bytes
    expire_at: int | None = None  # Unix time in ms (a reload later does not lengthen its life)


class Hash(msgspec.Struct, tag="h", array_like=True):
    key: bytes
    fields: list[tuple[bytes, bytes]]


class List(msgspec.Struct, tag="l", array_like=True):
    key: bytes
    items: list[bytes]


class Set(msgspec.Struct, tag="S", array_like=True):
    key: bytes
    members: list[bytes]


class Zset(msgspec.Struct, tag="z", array_like=True):
    key: bytes
    members: list[tuple[bytes, float]]


class Pending(msgspec.Struct, array_like=True):
    id: str
    consumer: bytes
    delivered_at: int  # Unix time in ms
    deliveries: int


class Group(msgspec.Struct, array_like=True):
    name: bytes
    last_delivered: str
    lag: int | None  # entries not read yet, as XINFO GROUPS said (``None``: Redis could not say)
    consumers: list[bytes]
    pending: list[Pending]


class Stream(msgspec.Struct, tag="x", array_like=True):
    key: bytes
    entries: list[tuple[str, list[bytes]]]  # an entry without fields: one a group still has pending, deleted since
    last_id: str = ""  # on the last piece only, with the groups
    groups: list[Group] = []


Key = Str | Hash | List | Set | Zset | Stream


class Begin(msgspec.Struct, array_like=True):
    format: int
    namespace: str
    taken_at: int  # Unix time in ms
    rest: int  # the bytes of the records after this one, ``snapshot_end``'s included


class End(msgspec.Struct, array_like=True):
    keys: int  # pieces of keys
    records: int  # ``snapshot_keys`` records
    crc: int  # CRC-32 of their payloads, in order


class BeginRecord(msgspec.Struct, array_like=True):
    op: str
    args: tuple[Begin]
    end: int = 0x7F


class KeysRecord(msgspec.Struct, array_like=True):
    op: str
    args: tuple[list[Key]]
    end: int = 0x7F


class EndRecord(msgspec.Struct, array_like=True):
    op: str
    args: tuple[End]
    end: int = 0x7F


class SnapshotBroken(Exception):
    """A snapshot that cannot be loaded whole: damaged, cut short, or not one this version writes."""


_begin = msgspec.msgpack.Decoder(BeginRecord).decode
_keys = msgspec.msgpack.Decoder(KeysRecord).decode
_end = msgspec.msgpack.Decoder(EndRecord).decode


# --- capture -------------------------------------------------------------------------------------------------------


def capture(r: Any, skip: Callable[[bytes], bool], now_ms: int) -> list[Key]:
    """Every key of the server ``r`` (a synchronous client) but those ``skip`` names, in key order, large ones in
    pieces. Synchronous from its first read to its last: nothing else runs on the event loop meanwhile."""
    names = sorted(k for k in r.keys() if not skip(k))
    pipe = r.pipeline(transaction=False)
    for name in names:
        pipe.type(name)
    out: list[Key] = []
    for name, kind in zip(names, pipe.execute(), strict=True):
        out += _READ[kind](r, name, now_ms)
    return out


def _string(r: Any, name: bytes, now_ms: int) -> list[Key]:
    value, ttl = r.get(name), r.pttl(name)
    return [] if value is None else [Str(name, value, now_ms + ttl if ttl > 0 else None)]


def _hash(r: Any, name: bytes, now_ms: int) -> list[Key]:
    return [Hash(name, part) for part in _pieces(list(r.hgetall(name).items()))]


def _list(r: Any, name: bytes, now_ms: int) -> list[Key]:
    return [List(name, part) for part in _pieces(r.lrange(name, 0, -1))]


def _set(r: Any, name: bytes, now_ms: int) -> list[Key]:
    return [Set(name, part) for part in _pieces(sorted(r.smembers(name)))]


def _zset(r: Any, name: bytes, now_ms: int) -> list[Key]:
    return [Zset(name, part) for part in _pieces(r.zrange(name, 0, -1, withscores=True))]


def _stream(r: Any, name: bytes, now_ms: int) -> list[Key]:
    entries = [(_id(i), [x for kv in fields.items() for x in kv]) for i, fields in r.xrange(name)]
    held = {i for i, _ in entries}
    groups = [_group(r, name, g, now_ms) for g in r.xinfo_groups(name)]
    ghosts = {p.id for g in groups for p in g.pending} - held
    entries = sorted(entries + [(i, []) for i in ghosts], key=lambda e: _key(e[0]))
    pieces = [Stream(name, part) for part in _pieces(entries)] or [Stream(name, [])]
    pieces[-1].last_id, pieces[-1].groups = _id(r.xinfo_stream(name)["last-generated-id"]), groups
    return pieces


def _group(r: Any, name: bytes, info: dict, now_ms: int) -> Group:
    group = info["name"]
    consumers = sorted(c["name"] for c in r.xinfo_consumers(name, group))
    rows = r.xpending_range(name, group, "-", "+", max(int(info["pending"]), 1))
    pending = [Pending(_id(p["message_id"]), p["consumer"], now_ms - int(p["time_since_delivered"]),
                       int(p["times_delivered"])) for p in rows]  # fmt: skip
    lag = info.get("lag")
    return Group(group, _id(info["last-delivered-id"]), None if lag is None else int(lag), consumers, pending)


_READ: dict[bytes, Callable[[Any, bytes, int], list[Key]]] = {
    b"string": _string, b"hash": _hash, b"list": _list, b"set": _set, b"zset": _zset, b"stream": _stream,
}


def _pieces(items: list) -> list[list]:
    return [items[i : i + PIECE] for i in range(0, len(items), PIECE)]


def _id(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


# --- records -------------------------------------------------------------------------------------------------------


def records(keys: list[Key], namespace: str, taken_at: int) -> list[bytes]:
    """The snapshot's journal records (payloads): begin, keys in records of about ``CHUNK`` bytes, end."""
    chunks: list[list[Key]] = [[]]
    size = 0
    for key in keys:
        if size >= CHUNK:
            chunks.append([])
            size = 0
        chunks[-1].append(key)
        size += len(encode(key))
    body = [encode(Op("snapshot_keys", [chunk])) for chunk in chunks if chunk]
    crc = 0
    for payload in body:
        crc = zlib.crc32(payload, crc)
    end = encode(Op("snapshot_end", [End(len(keys), len(body), crc)]))
    rest = sum(RECORD_HEAD + len(p) for p in [*body, end])
    return [encode(Op("snapshot_begin", [Begin(FORMAT, namespace, taken_at, rest)])), *body, end]


def begins(payload: bytes) -> Begin | None:
    """The ``snapshot_begin`` this record is, or ``None`` when it is another record."""
    try:
        record = _begin(payload)
    except msgspec.MsgspecError:
        return None
    return record.args[0] if record.op == "snapshot_begin" else None


def read(first: Begin, payloads: Iterator[bytes], apply: Callable[[list[Key]], None]) -> int:
    """Hand every keys record after ``first`` to ``apply``, in order, up to ``snapshot_end``; the bytes read (``first``
    not counted). ``SnapshotBroken`` when the records stop before the end, are not the snapshot's, or do not add up:
    the caller then throws away whatever ``apply`` did."""
    if first.format != FORMAT:
        raise SnapshotBroken(f"a snapshot of format {first.format}, which this version does not read")
    read_bytes = count = keys = crc = 0
    for payload in payloads:
        read_bytes += RECORD_HEAD + len(payload)
        try:
            record = _keys(payload)
        except msgspec.MsgspecError:
            _end_of(payload, End(keys, count, crc))
            return read_bytes
        if record.op != "snapshot_keys":
            raise SnapshotBroken(_inside(payload))
        apply(record.args[0])
        count, keys, crc = count + 1, keys + len(record.args[0]), zlib.crc32(payload, crc)
    raise SnapshotBroken("the snapshot stops before its end (snapshot_end): cut short")


def _end_of(payload: bytes, found: End) -> None:
    """Check the record that is no keys record: the snapshot's end, counting what was read — or what breaks it."""
    try:
        record = _end(payload)
    except msgspec.MsgspecError:
        raise SnapshotBroken(_inside(payload)) from None
    if record.op != "snapshot_end":
        raise SnapshotBroken(_inside(payload))
    if record.args[0] != found:
        raise SnapshotBroken(f"the snapshot's end counts {record.args[0]}, its records add up to {found}")


def _inside(payload: bytes) -> str:
    try:
        what = f"a {msgspec.msgpack.decode(payload, type=Op).op[:40]!r} record"
    except msgspec.MsgspecError:
        what = "a record that is no store operation"
    return f"{what} inside the snapshot, before its end: not a whole snapshot"


# --- load ----------------------------------------------------------------------------------------------------------


class Loader:
    """Writes keys into a server through its synchronous client ``r``, in the order ``capture`` gave them; a stream's
    last piece restores its groups."""

    def __init__(self, r: Any, rename: Callable[[bytes], bytes] = lambda k: k) -> None:
        self.r = r
        self.rename = rename
        self._added: dict[bytes, list[str]] = {}  # each stream's ids added so far (ghosts too), in order
        self._ghosts: dict[bytes, list[str]] = {}

    def __call__(self, keys: list[Key]) -> None:
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            name = self.rename(key.key)
            if isinstance(key, Stream):
                pipe.execute()
                self._stream(name, key)
                pipe = self.r.pipeline(transaction=False)
            else:
                _WRITE[type(key)](pipe, name, key)
        pipe.execute()

    def _stream(self, name: bytes, piece: Stream) -> None:
        added, ghosts = self._added.setdefault(name, []), self._ghosts.setdefault(name, [])
        pipe = self.r.pipeline(transaction=False)
        for entry_id, fields in piece.entries:
            pipe.xadd(name, dict(zip(fields[::2], fields[1::2], strict=True)) or {GHOST: b""}, id=entry_id)
            added.append(entry_id)
            if not fields:
                ghosts.append(entry_id)
        pipe.execute()
        if not piece.last_id:
            return
        if _key(piece.last_id) > (_key(added[-1]) if added else (0, 0)):
            self.r.xadd(name, {GHOST: b""}, id=piece.last_id)
            added.append(piece.last_id)
            ghosts.append(piece.last_id)
        if not added:  # a stream that never had an entry (made by XGROUP CREATE … MKSTREAM)
            self.r.xgroup_create(name, GHOST, id="0", mkstream=True)
            self.r.xgroup_destroy(name, GHOST)
        for group in piece.groups:
            self._group(name, group, len(added))
        if ghosts:
            self.r.xdel(name, *ghosts)
        del self._added[name], self._ghosts[name]

    def _group(self, name: bytes, group: Group, added: int) -> None:
        read = None if group.lag is None else added - group.lag  # the entries read that leave the lag as it was
        self.r.xgroup_create(name, group.name, id=group.last_delivered, entries_read=read)
        for consumer in group.consumers:
            self.r.xgroup_createconsumer(name, group.name, consumer)
        for p in group.pending:
            claimed = self.r.xclaim(name, group.name, p.consumer, 0, [p.id], time=p.delivered_at, retrycount=p.deliveries,
                                    force=True, justid=True)  # fmt: skip
            if [_id(c) for c in claimed] != [p.id]:
                raise SnapshotBroken(f"the pending entry {p.id} of {name!r}'s group {group.name!r} could not be restored")


def _write_str(pipe: Any, name: bytes, key: Str) -> None:
    pipe.set(name, key.value, pxat=key.expire_at)


def _write_hash(pipe: Any, name: bytes, key: Hash) -> None:
    pipe.hset(name, mapping=dict(key.fields))


def _write_list(pipe: Any, name: bytes, key: List) -> None:
    pipe.rpush(name, *key.items)


def _write_set(pipe: Any, name: bytes, key: Set) -> None:
    pipe.sadd(name, *key.members)


def _write_zset(pipe: Any, name: bytes, key: Zset) -> None:
    pipe.zadd(name, dict(key.members))


_WRITE: dict[type, Callable[[Any, bytes, Any], None]] = {
    Str: _write_str, Hash: _write_hash, List: _write_list, Set: _write_set, Zset: _write_zset,
}
