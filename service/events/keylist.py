"""The key listing as an append-only, hash-chained record (docs/fairness.md, Keys; issue 29).

A plain listing (``{"keys": [...]}``) can be rewritten after the fact: move a retired key's ``not_after`` back, drop a
key, and nothing shows it changed. So every event in the keys' life is an entry of a chain, sealed like a game's log
(``envelope.chain_hash``): ``hash = sha256(prev ‖ canonical entry without hash)``, ``prev`` of the first entry 64 zeros.

- ``listed``: a key signs from ``at`` (its ``not_before``);
- ``retired``: a key stops signing at ``at`` (its ``not_after``). A retirement is an entry of its own, recorded when it
  happens, so a key's window is closed once, at the time it is closed.

Entries' times never go back. Each receipt (v2) names the chain's head it was signed under: a chain rewritten after
that head no longer contains it, and a retirement recorded after it cannot honestly be dated before the receipt's
version. Pure: the service (``service/api/signing.py``) and the verifier (``replays/receipts.py``) share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import msgspec

from .envelope import GENESIS, canonical, chain_hash
from .receipt import Hex64, KeyId, PublicKey, key_id_of, sound_public_key

Time = Annotated[int, msgspec.Meta(ge=0)]


class Listed(msgspec.Struct, frozen=True, kw_only=True, tag="listed", tag_field="type"):
    """``key_id`` (raw public key ``public_key``, hex) signs from ``at``."""

    key_id: KeyId
    public_key: Hex64
    at: Time
    prev: Hex64
    hash: Hex64


class Retired(msgspec.Struct, frozen=True, kw_only=True, tag="retired", tag_field="type"):
    """``key_id`` signs no more from ``at``: its ``not_after``, recorded when it was closed."""

    key_id: KeyId
    at: Time
    prev: Hex64
    hash: Hex64


Entry = Listed | Retired


class ChainBroken(ValueError):
    """A chain that does not hold together, or a listing that rewrites one: said in one line."""


def _body(entry: Entry) -> bytes:
    """What an entry's hash covers: every field but ``hash``, its ``type`` included, as canonical JSON."""
    fields = {f: getattr(entry, f) for f in entry.__struct_fields__ if f != "hash"}
    return canonical({**fields, "type": entry.__struct_config__.tag})


def head(entries: Sequence[Entry]) -> str:
    return entries[-1].hash if entries else GENESIS


def listed(prev: str, key: PublicKey) -> Listed:
    unsealed = Listed(key_id=key.key_id, public_key=key.public_key, at=key.not_before, prev=prev, hash=GENESIS)
    return msgspec.structs.replace(unsealed, hash=chain_hash(prev, _body(unsealed)))


def retired(prev: str, key_id: str, at: int) -> Retired:
    unsealed = Retired(key_id=key_id, at=at, prev=prev, hash=GENESIS)
    return msgspec.structs.replace(unsealed, hash=chain_hash(prev, _body(unsealed)))


def check(entries: Sequence[Entry]) -> None:
    """``ChainBroken`` unless every link checks, times never go back, each key is listed once (a sound key whose id is
    its own) and retired at most once, after it was listed."""
    prev, last, seen, gone = GENESIS, 0, set(), set()
    for n, e in enumerate(entries, start=1):
        where = f"entry {n} of the key listing ({e.__struct_config__.tag} {e.key_id})"
        if e.prev != prev:
            raise ChainBroken(f"{where} is not chained to the entry before it (prev {e.prev[:12]}, not {prev[:12]}): "
                              "the listing was rewritten")
        if chain_hash(prev, _body(e)) != e.hash:
            raise ChainBroken(f"{where} does not hash to its hash {e.hash[:12]}: it was changed after it was sealed")
        if e.at < last:
            raise ChainBroken(f"{where} is dated {e.at}, before the entry before it ({last}): entries' times never go back")
        if isinstance(e, Listed):
            raw = bytes.fromhex(e.public_key)
            if e.key_id in seen or key_id_of(raw) != e.key_id or not sound_public_key(raw):
                raise ChainBroken(f"{where} lists a key already listed, not of its id, or no sound Ed25519 key")
            seen.add(e.key_id)
        elif e.key_id not in seen or e.key_id in gone:
            raise ChainBroken(f"{where} retires a key {'already retired' if e.key_id in gone else 'never listed'}: "
                              "a key's window is closed once, when it is closed")
        else:
            gone.add(e.key_id)
        prev, last = e.hash, e.at


def keys_of(entries: Sequence[Entry]) -> list[PublicKey]:
    """The plain listing a chain stands for (``GET /keys``' ``keys``), in the order the keys were listed."""
    ends = {e.key_id: e.at for e in entries if isinstance(e, Retired)}
    return [PublicKey(key_id=e.key_id, public_key=e.public_key, not_before=e.at, not_after=ends.get(e.key_id))
            for e in entries if isinstance(e, Listed)]


def position(entries: Sequence[Entry], at_head: str) -> int | None:
    """How many entries the chain had when its head was ``at_head`` (0: the empty chain), or ``None``: not one of its heads."""
    if at_head == GENESIS:
        return 0
    return next((n for n, e in enumerate(entries, start=1) if e.hash == at_head), None)


def extended(entries: Sequence[Entry], keys: Sequence[PublicKey]) -> list[Entry]:
    """The chain with what ``keys`` (a plain listing) adds to it: keys newly listed, windows newly closed, in time order
    (a key's listing before a retirement of the same time). ``ChainBroken`` when ``keys`` rewrites the chain — drops a
    key, moves a window it recorded — or dates a new entry before the chain's last: a retirement is recorded when it
    happens, never back-dated. An empty chain takes the whole listing: how a keyring made before chains gets one."""
    check(entries)
    recorded = {k.key_id: k for k in keys_of(entries)}
    given = {k.key_id: k for k in keys}
    for key_id, was in recorded.items():
        now = given.get(key_id)
        if now is None or (now.public_key, now.not_before) != (was.public_key, was.not_before) or (
                was.not_after is not None and now.not_after != was.not_after):
            said = "drops it" if now is None else f"gives it {_window(now)}"
            raise ChainBroken(f"the keys listed disagree with the key listing's chain about key {key_id}: the chain "
                              f"records {_window(was)}, the keys list {said} — an earlier entry was rewritten")
    new = [(k.not_before, 0, k.key_id, k) for k in keys if k.key_id not in recorded]
    new += [(k.not_after, 1, k.key_id, k) for k in keys
            if k.not_after is not None and (k.key_id not in recorded or recorded[k.key_id].not_after is None)]
    out, last = list(entries), (entries[-1].at if entries else 0)
    for at, kind, key_id, key in sorted(new, key=lambda t: t[:3]):
        if at < last:
            raise ChainBroken(f"the keys list {'retires' if kind else 'lists'} key {key_id} at {at}, before the key "
                              f"listing's last entry ({last}): an entry is recorded when it happens, never back-dated")
        out.append(retired(head(out), key_id, at) if kind else listed(head(out), key))
        last = at
    return out


def _window(k: PublicKey) -> str:
    return f"from {k.not_before} until {'now' if k.not_after is None else k.not_after}"


class Listing(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``GET /keys``: the plain ``keys`` as old clients read them, and the chain they come from with its ``head``
    (both absent when the service signs nothing)."""

    keys: list[PublicKey]
    entries: list[Entry] = []
    head: Hex64 | None = None


def listing_of(entries: Sequence[Entry]) -> Listing:
    return Listing(keys=keys_of(entries), entries=list(entries), head=head(entries))
