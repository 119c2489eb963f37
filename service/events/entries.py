"""A game's events as Redis stream entries: the compact form a stream holds, and reading ranges of it."""

from __future__ import annotations

import msgspec

from .envelope import GENESIS, NULL, Envelope, canonical_actor, has_secret


class StoredEvent(msgspec.Struct, array_like=True, frozen=True):
    """An envelope as a stream entry holds it: msgpack, without what the entry's place already says.

    The game id is the stream's key, the seq its entry ID, the previous hash the previous entry's hash;
    hashes are 32 raw bytes, not 64 hex digits. Less than half the bytes of the JSON envelope, which is
    what a server holding many live games pays for. ``public``, ``command`` and ``secret`` are the exact
    canonical bytes the hash and digest were computed over.
    """

    type: str
    public: bytes
    at: int
    actor: str
    hash: bytes
    command_id: str | None = None
    command: bytes | None = None
    secret_digest: bytes | None = None
    secret: bytes | None = None
    sig: bytes | None = None  # last: entries stored before signed commands end before it


_stored = msgspec.msgpack.Encoder()
_stored_event = msgspec.msgpack.Decoder(StoredEvent)


def encode_entry(env: Envelope) -> bytes:
    return _stored.encode(
        StoredEvent(
            type=env.type,
            public=bytes(env.public),
            at=env.at,
            actor=env.actor,
            hash=bytes.fromhex(env.hash),
            command_id=env.command_id,
            command=None if env.command == NULL else bytes(env.command),
            secret_digest=bytes.fromhex(env.secret_digest) if env.secret_digest else None,
            secret=bytes(env.secret) if has_secret(env) else None,
            sig=bytes.fromhex(env.sig) if env.sig else None,
        )
    )


def decode_entries(game_id: str, rows: list[tuple[bytes, dict[bytes, bytes]]], prev_hash: str) -> list[Envelope]:
    """Envelopes from stream rows; ``prev_hash`` is the hash of the entry before the first row."""
    out = []
    for entry_id, fields in rows:
        e = _stored_event.decode(fields[b"e"])
        digest = e.secret_digest.hex() if e.secret_digest is not None else None
        env = Envelope(
            game_id=game_id,
            seq=int(entry_id.split(b"-", 1)[0]),
            type=e.type,
            public=msgspec.Raw(e.public),
            at=e.at,
            prev_hash=prev_hash,
            command=msgspec.Raw(e.command) if e.command is not None else NULL,
            actor=canonical_actor(e.actor),
            command_id=e.command_id,
            secret_digest=digest,
            hash=e.hash.hex(),
            secret=msgspec.Raw(e.secret) if e.secret is not None else NULL,
            sig=e.sig.hex() if e.sig is not None else None,
        )
        out.append(env)
        prev_hash = env.hash
    return out


def xrange_bounds(after: int, count: int | None) -> tuple[str, int | None]:
    """The XRANGE start and count that read seq > ``after`` (at most ``count``) and, when ``after`` > 0, the entry
    at ``after`` too, for the hash the next one chains to."""
    if after <= 0:
        return "1-0", count
    return f"{after}-0", None if count is None else count + 1


def envelopes_after(game_id: str, after: int, rows: list[tuple[bytes, dict[bytes, bytes]]]) -> list[Envelope]:
    if after <= 0:
        return decode_entries(game_id, rows, GENESIS)
    if not rows or rows[0][0] != f"{after}-0".encode():
        return []
    before = _stored_event.decode(rows[0][1][b"e"]).hash.hex()
    return decode_entries(game_id, rows[1:], before)

