"""The envelope every event travels in, its canonical bytes, its secret digest and the hash chain.

``hash = sha256(prev_hash ‖ body)`` where ``prev_hash`` is the previous envelope's hash as 64 ASCII
hex digits (64 zeros before seq 1) and ``body`` is the canonical JSON of the envelope without
``hash`` and ``secret``. The hash covers ``secret_digest``, never the secret, so a redacted log
still verifies; ``secret_digest = HMAC-SHA256(key=seed, msg=b"secret:<seq>" ‖ secret)`` so a
published digest cannot be brute-forced into a hand. See ``docs/events.md``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import msgspec

GENESIS = "0" * 64
SERVER = "server"
NULL = msgspec.Raw(b"null")

_encoder = msgspec.json.Encoder(order="sorted")


def canonical(obj: Any) -> bytes:
    """msgspec JSON with sorted keys and defaults omitted (every struct here sets ``omit_defaults``)."""
    return _encoder.encode(obj)


class Body(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """What the hash covers: everything about an event except its secret.

    ``command`` is the command that produced the batch, on its first event, and ``null`` on the others.
    """

    game_id: str
    seq: int
    type: str
    public: msgspec.Raw
    at: int
    prev_hash: str
    command: msgspec.Raw
    actor: str = SERVER
    command_id: str | None = None
    secret_digest: str | None = None
    sig: str | None = None
    """On a command's first event: the signature of the keyed seat's player over the command (``command_sig``)."""


class Envelope(Body, frozen=True, kw_only=True):
    """An event as stored and exported: its body, its hash, and its secret (``null`` when redacted)."""

    hash: str
    secret: msgspec.Raw


_BODY_FIELDS = Body.__struct_fields__


def body_of(env: Envelope) -> Body:
    values = {f: getattr(env, f) for f in _BODY_FIELDS}
    values["actor"] = canonical_actor(env.actor)
    return Body(**values)


def canonical_actor(actor: str) -> str:
    """msgspec omits a default only when the value *is* the default object: a decoded ``"server"`` is equal but
    not identical, so it is swapped for the default here, or the same envelope would hash two ways."""
    return SERVER if actor == SERVER else actor


def chain_hash(prev_hash: str, body: bytes) -> str:
    return hashlib.sha256(prev_hash.encode() + body).hexdigest()


def secret_digest(seed: bytes, seq: int, secret: bytes) -> str:
    """``HMAC-SHA256(key=seed, msg=b"secret:<seq>" ‖ secret)`` in hex; ``hmac.digest`` is the one-shot C path
    (``hmac.new`` builds a Python object per digest, which costs more than the digest itself)."""
    return hmac.digest(seed, b"secret:%d" % seq + secret, "sha256").hex()


def seed_commitment(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def has_secret(env: Envelope) -> bool:
    return env.secret != NULL


def seal(
    *,
    game_id: str,
    seq: int,
    type: str,
    public: bytes,
    secret: bytes | None,
    seed: bytes,
    at: int,
    prev_hash: str,
    actor: str,
    command_id: str | None = None,
    command: bytes | None = None,
    sig: str | None = None,
) -> Envelope:
    """Wrap one event: digest its secret, chain it to the previous hash. Every field is passed by name, not through
    a dict unpacked twice: sealing runs once an event in the service and again in every ``replays verify``."""
    raw_public, raw_command = msgspec.Raw(public), msgspec.Raw(command) if command is not None else NULL
    digest = secret_digest(seed, seq, secret) if secret is not None else None
    body = Body(game_id=game_id, seq=seq, type=type, public=raw_public, at=at, prev_hash=prev_hash,
                command=raw_command, actor=actor, command_id=command_id, secret_digest=digest, sig=sig)
    return Envelope(
        game_id=game_id, seq=seq, type=type, public=raw_public, at=at, prev_hash=prev_hash, command=raw_command,
        actor=actor, command_id=command_id, secret_digest=digest, sig=sig,
        hash=chain_hash(prev_hash, _encoder.encode(body)),
        secret=msgspec.Raw(secret) if secret is not None else NULL,
    )


def redacted(env: Envelope) -> Envelope:
    """The same envelope with its secret withheld; its hash still verifies."""
    return msgspec.structs.replace(env, secret=NULL) if has_secret(env) else env


def actor_name(seat: int | None) -> str:
    return SERVER if seat is None else f"seat:{seat}"


def actor_seat(actor: str) -> int | None:
    return int(actor.removeprefix("seat:")) if actor.startswith("seat:") else None
