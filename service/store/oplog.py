"""What a record of the embedded store's journal holds: one write, ``(op, args)``, replayed at start through the same
``_op_<op>`` that carried it out (``embedded.py``); or one record of a snapshot (``snapshot.py``), which a compacted
journal begins with (``compaction.py``)."""

from __future__ import annotations

from typing import Any

import msgspec

from .store import AppendRequest


class Op(msgspec.Struct, array_like=True):
    op: str
    args: list[Any]
    # A record must not end in zero bytes, or a damaged last record reads as a torn write — one never acknowledged,
    # dropped at start instead of refused (journal.py's judgement) — and an empty ``bytes`` or a round float ends so.
    # 0x7F: no flipped bit makes it zero. Records written before it have no ``end``.
    end: int = 0x7F


encode = msgspec.msgpack.Encoder().encode
decode_op = msgspec.msgpack.Decoder(Op).decode
decode_request = msgspec.msgpack.Decoder(AppendRequest).decode


def describe(payload: bytes) -> str:
    """What a journal record holds, in a few words: for the report of what a damaged journal loses."""
    op = decode_op(payload)
    return f"append to {decode_request(op.args[0]).game_id}" if op.op == "append" else op.op
