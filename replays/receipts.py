"""Receipts against a log: what the service signed a player was shown must be what the log says (docs/fairness.md).

A receipt signs ``(game_id, version, head, at)`` with the service's Ed25519 key. A log that verifies on its own — chain,
seed, every command re-decided — may still be a history rebuilt after the seed was revealed; one honest receipt
issued after the fork disagrees with it at its version. So for each receipt of the log's game: its signature checks
out under a key given (``--key``: a public key's 64 hex digits, or the JSON of ``GET /keys``), the log reaches its
version, and the log's envelope there has its head and time. Receipts come as a JSON list, one JSON object a line, or
anything the service answered with a ``receipt`` in it (a view, a command answer, an export's header): several
players' files merge by being given together.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from service.events.envelope import GENESIS, Envelope
from service.events.receipt import PublicKey, Receipt, key_id_of, signed_bytes

Keys = dict[str, Ed25519PublicKey]


class ReceiptsUnreadable(ValueError):
    """A receipts or keys file that is not one."""


def _items(data: bytes) -> list[Any]:
    text = data.removeprefix(b"\xef\xbb\xbf").strip()  # a BOM a text editor may have written
    if not text:
        return []
    try:
        whole = msgspec.json.decode(text)
        return whole if isinstance(whole, list) else [whole]
    except RecursionError:  # nested deeper than the decoder goes: no receipt is
        raise ReceiptsUnreadable("not JSON receipts: nested too deep") from None
    except msgspec.DecodeError:
        pass
    out = []
    for n, line in enumerate(text.split(b"\n"), start=1):
        if line.strip():
            try:
                out.append(msgspec.json.decode(line))
            except (msgspec.DecodeError, RecursionError) as e:
                raise ReceiptsUnreadable(f"line {n}: not JSON ({e})") from None
    return out


def load_receipts(data: bytes) -> list[Receipt]:
    """Every receipt in ``data``: bare receipts, or objects that carry one as ``receipt`` (views, answers, headers)."""
    out = []
    for n, item in enumerate(_items(data), start=1):
        if isinstance(item, dict) and "sig" not in item and isinstance(item.get("receipt"), dict):
            item = item["receipt"]
        if isinstance(item, dict) and item.get("receipt", 0) is None:
            continue  # an answer of a service that signs nothing
        try:
            out.append(msgspec.convert(item, Receipt))
        except msgspec.ValidationError as e:
            raise ReceiptsUnreadable(f"item {n} is not a receipt: {e}") from None
    return out


def load_keys(texts: Iterable[str | bytes]) -> Keys:
    """Public keys by key_id: each text a key's 64 hex digits, or the JSON of ``GET /keys`` (or a list of its keys)."""
    keys: Keys = {}
    for text in texts:
        raw = text.strip() if isinstance(text, bytes) else text.strip().encode()
        if len(raw) == 64 and all(c in b"0123456789abcdefABCDEF" for c in raw):
            public = bytes.fromhex(raw.decode())
            keys[key_id_of(public)] = Ed25519PublicKey.from_public_bytes(public)
            continue
        try:
            listed = msgspec.json.decode(raw)
            entries = listed["keys"] if isinstance(listed, dict) else listed
            for entry in msgspec.convert(entries, list[PublicKey]):
                public = bytes.fromhex(entry.public_key)
                if key_id_of(public) != entry.key_id:
                    raise ReceiptsUnreadable(f"key {entry.key_id} is not the id of its public key ({key_id_of(public)})")
                keys[entry.key_id] = Ed25519PublicKey.from_public_bytes(public)
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError, TypeError, RecursionError) as e:
            raise ReceiptsUnreadable(f"not a public key (64 hex digits) nor the keys of GET /keys: {e}") from None
    return keys


def signature_ok(receipt: Receipt, keys: Keys) -> bool:
    key = keys.get(receipt.key_id)
    if key is None:
        return False
    try:
        key.verify(bytes.fromhex(receipt.sig), signed_bytes(receipt))
    except InvalidSignature:
        return False
    return True


class Disagreement(msgspec.Struct, frozen=True):
    """What a receipt says against the log: ``version`` it vouches for, and what each side has there."""

    version: int
    what: str
    receipt: str
    log: str


def disagreement(receipt: Receipt, envelopes: list[Envelope]) -> Disagreement | None:
    """Why ``receipt`` (of this log's game) refutes the log, or ``None`` when the log agrees with it."""
    v = receipt.version
    if v > len(envelopes):
        return Disagreement(v, "version (the log ends before it)", f"version {v} at head {receipt.head}",
                            f"{len(envelopes)} events, ending at head {envelopes[-1].hash if envelopes else GENESIS}")
    head, at = (envelopes[v - 1].hash, envelopes[v - 1].at) if v else (GENESIS, 0)
    if receipt.head != head:
        return Disagreement(v, "head", receipt.head, head)
    if receipt.at != at:
        return Disagreement(v, "time of the last event", str(receipt.at), str(at))
    return None


class ReceiptReport(msgspec.Struct, kw_only=True):
    """How a log fared against receipts: ``checked`` of this game (each signature checked when ``signatures``), the
    versions of those ``set_aside`` (a signature that does not check out, or a key not given: they prove nothing, for
    the log or against it), and the first ``disagreement`` of one that counts, by version."""

    checked: int = 0
    other_games: int = 0
    signatures: bool = False
    latest: int = 0
    set_aside: list[int] = []
    disagreement: Disagreement | None = None


def check(game_id: str, envelopes: list[Envelope], receipts: list[Receipt], keys: Keys | None) -> ReceiptReport:
    """Every receipt of ``game_id`` against the log. With ``keys``, only receipts whose signature checks out count: one
    that does not is set aside (a hostile holder cannot make an honest log fail by adding one, nor hide a genuine
    refutation behind it). The earliest version that disagrees is the one reported."""
    mine = sorted((r for r in receipts if r.game_id == game_id), key=lambda r: r.version)
    report = ReceiptReport(other_games=len(receipts) - len(mine), signatures=keys is not None)
    counted = [r for r in mine if keys is None or signature_ok(r, keys)]
    report.set_aside = [r.version for r in mine if keys is not None and not signature_ok(r, keys)]
    report.checked, report.latest = len(counted), counted[-1].version if counted else 0
    for receipt in counted:
        found = disagreement(receipt, envelopes)
        if found is not None:
            report.disagreement = found
            break
    return report
