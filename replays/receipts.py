"""Receipts against a log: what the service signed a player was shown must be what the log says (docs/fairness.md).

A receipt signs ``(game_id, version, head, at)`` with the service's Ed25519 key. A log that verifies on its own — chain,
seed, every command re-decided — may still be a history rebuilt after the seed was revealed; one honest receipt
issued after the fork disagrees with it at its version. So for each receipt of the log's game: its signature checks
out under a key given (``--key``: a public key's 64 hex digits, or the JSON of ``GET /keys``), the log reaches its
version, and the log's envelope there has its head and time. A receipt whose signature checks out under a key given
is the service's word and is never set aside in silence: one dated after its key's listed ``not_after`` that disagrees
with the log makes the verdict CONTESTED — either the retired key leaked, or its listing was changed after the fact
(the operator back-dated a retirement to disown what the key signed) — and one within its key's window that disagrees
REJECTS the log. Two listings that give one key different windows are reported, never reconciled. Keys of small order (which "sign" every message) are refused.

A listing served as a hash-chained record (``entries`` and ``head``, ``service/events/keylist.py``) must check link by
link and agree with its own ``keys``. A receipt v2 names the head of the listing it was signed under: a chain given
that does not contain that head was rewritten after it (reported, naming the receipt, and a disagreement of that
receipt is then contested); a chain that does, but retires the receipt's key in a later entry dated before the
receipt's version, back-dated the retirement — shown false by the service's own signature — so that receipt is in
its key's window and a disagreement REJECTS the log. Receipts under a key no listing names are set aside, unless the
listings given leave times the log was played at without a key signing: then they dropped a key, and such receipts
that disagree contest the log. Receipts come as a JSON list, one JSON object a line, or
anything the service answered with a ``receipt`` in it (a view, a command answer, an export's header): several
players' files merge by being given together.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from service.events import keylist
from service.events.envelope import GENESIS, Envelope
from service.events.keylist import ChainBroken, Entry
from service.events.receipt import PublicKey, Receipt, key_id_of, signed_bytes, sound_public_key


class Keys(dict[str, Ed25519PublicKey]):
    """Public keys by key_id, and each one's ``windows`` (not_before, not_after) as a listing gave it (a bare hex key
    has none: ``(0, None)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: dict[str, tuple[int, int | None]] = {}
        self.listed: dict[str, list[tuple[int, int | None]]] = {}
        """Every window a listing gave each key, in the order given (a bare hex key gives none)."""
        self.listings = 0
        """How many listings (``GET /keys`` JSON) were given."""
        self.chains: list[list[Entry]] = []
        """The hash-chained listings given (``entries``), each checked link by link."""
        self.bare = False
        """Whether a bare public key (no window: it covers every time) was given."""

    def add(self, public: bytes, not_before: int = 0, not_after: int | None = None, *, listed: bool = True) -> None:
        """One key more. ``windows`` holds the earliest ``not_after`` any listing gave it — a receipt dated after that is
        *late* under some listing, and its disagreement with the log is contested, not set aside — and ``listed``
        every window, so that listings that disagree are reported (``conflicts``)."""
        key_id = key_id_of(public)
        if not sound_public_key(public):
            raise ReceiptsUnreadable(f"key {key_id} is no Ed25519 public key (of small order, or not canonically "
                                     "encoded): under it anyone can make a receipt that checks out")
        ends = [t for t in (not_after, self.windows.get(key_id, (0, None))[1]) if t is not None]
        self[key_id] = Ed25519PublicKey.from_public_bytes(public)
        self.windows[key_id] = (not_before, min(ends) if ends else None)
        if listed:
            self.listed.setdefault(key_id, []).append((not_before, not_after))

    def disputed(self, key_id: str) -> bool:
        """Whether the listings given disagree about ``key_id``: other windows, or some listing not naming it at all."""
        windows = self.listed.get(key_id, [])
        return bool(windows) and (len(set(windows)) > 1 or len(windows) < self.listings)

    def conflicts(self) -> list[str]:
        """Each key the listings given disagree about, in words: which window each listing gave it, or how many of the
        listings name it (a key only some name was added to, or dropped from, a listing after the fact)."""
        out = []
        for key_id, windows in self.listed.items():
            if len(windows) < self.listings:
                out.append(f"the key listings given disagree about key {key_id}: {len(windows)} of the {self.listings} "
                           "name it — reported, not reconciled: one of them was changed after the fact")
            elif len(set(windows)) > 1:
                given = "; ".join(f"from {a} until {'now' if b is None else b}" for a, b in dict.fromkeys(windows))
                out.append(f"the key listings given disagree about key {key_id} ({given}): reported, not reconciled "
                           "— a listing that moved a key's retirement was changed after the fact")
        return out


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
    """Every receipt in ``data``, refusing the file for one item that is not one (``read_receipts`` sets it aside)."""
    receipts, notes = read_receipts(data)
    if notes:
        raise ReceiptsUnreadable(notes[0])
    return receipts


def read_receipts(data: bytes) -> tuple[list[Receipt], list[str]]:
    """Every receipt in ``data`` (bare receipts, or objects that carry one as ``receipt``: views, answers, headers), and
    a note for each item that is not one. Such an item is set aside, not the file refused: the page keeps what a
    service answered, and one item a service made malformed must not hide the genuine receipts beside it."""
    out, notes = [], []
    for n, item in enumerate(_items(data), start=1):
        if isinstance(item, dict) and "sig" not in item and isinstance(item.get("receipt"), dict):
            item = item["receipt"]
        if isinstance(item, dict) and item.get("receipt", 0) is None:
            continue  # an answer of a service that signs nothing
        try:
            out.append(msgspec.convert(item, Receipt))
        except msgspec.ValidationError as e:
            notes.append(f"item {n} is not a receipt: {e}")
    return out, notes


def load_keys(texts: Iterable[str | bytes]) -> Keys:
    """Public keys by key_id: each text a key's 64 hex digits, or the JSON of ``GET /keys`` (or a list of its keys)."""
    keys = Keys()
    for text in texts:
        raw = text.strip() if isinstance(text, bytes) else text.strip().encode()
        if len(raw) == 64 and all(c in b"0123456789abcdefABCDEF" for c in raw):
            keys.add(bytes.fromhex(raw.decode()), listed=False)
            keys.bare = True
            continue
        try:
            listed = msgspec.json.decode(raw)
            entries = msgspec.convert(listed["keys"] if isinstance(listed, dict) else listed, list[PublicKey])
            if isinstance(listed, dict) and "entries" in listed:
                keys.chains.append(_chain(listed, entries))
            ids = [e.key_id for e in entries]
            if twice := sorted({i for i in ids if ids.count(i) > 1}):  # one listing, two windows: which is the key's?
                raise ReceiptsUnreadable(f"key {', '.join(twice)} is listed twice (the service lists each key once)")
            keys.listings += 1
            for entry in entries:
                public = bytes.fromhex(entry.public_key)
                if key_id_of(public) != entry.key_id:
                    raise ReceiptsUnreadable(f"key {entry.key_id} is not the id of its public key ({key_id_of(public)})")
                keys.add(public, entry.not_before, entry.not_after)
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError, TypeError, RecursionError) as e:
            raise ReceiptsUnreadable(f"not a public key (64 hex digits) nor the keys of GET /keys: {e}") from None
    return keys


def _chain(listed: dict[str, Any], keys: list[PublicKey]) -> list[Entry]:
    """The chain of a listing served with one: every link checked, its ``head`` its last hash, its ``keys`` the ones it
    records (a listing whose keys and chain say two things is refused: which would a verifier believe?)."""
    chain = msgspec.convert(listed["entries"], list[Entry])
    try:
        keylist.check(chain)
    except ChainBroken as e:
        raise ReceiptsUnreadable(f"a key listing's chain does not check: {e}") from None
    if listed.get("head", keylist.head(chain)) != keylist.head(chain):
        raise ReceiptsUnreadable(f"a key listing names the head {listed.get('head')}, its chain ends at {keylist.head(chain)}")
    if sorted(keys, key=lambda k: k.key_id) != sorted(keylist.keys_of(chain), key=lambda k: k.key_id):
        raise ReceiptsUnreadable("a key listing's keys are not the ones its own chain records: one of them was edited")
    return chain


def signature_ok(receipt: Receipt, keys: Keys, *, in_window: bool = True) -> bool:
    """Whether ``receipt`` counts: its signature checks out under its key, and its version's ``at`` is not after the
    key's ``not_after``. (Not held to ``not_before``: a key signs every version read while it is current, one whose
    last event came before a rotation too.) ``in_window=False``: the signature alone."""
    key = keys.get(receipt.key_id)
    if key is None or (in_window and late(receipt, keys)):
        return False
    try:
        key.verify(bytes.fromhex(receipt.sig), signed_bytes(receipt))
    except InvalidSignature:
        return False
    return True


def late(receipt: Receipt, keys: Keys) -> bool:
    """Whether ``receipt`` vouches for a version whose last event came after its key stopped signing."""
    until = getattr(keys, "windows", {}).get(receipt.key_id, (0, None))[1]
    return until is not None and receipt.at > until


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
    the log or against it), of those ``late`` (the service's signature, on a version after its key's listed
    ``not_after``), the first ``disagreement`` of a receipt within its key's window, by version (the log is refuted;
    ``back_dated`` says why when a listing's retirement of its key was shown back-dated), and the versions of receipts
    in doubt that disagree, ``contested``, with their keys (the log is refuted unless a key leaked or a listing was
    rewritten: CONTESTED)."""

    checked: int = 0
    other_games: int = 0
    signatures: bool = False
    latest: int = 0
    set_aside: list[int] = []
    late: list[int] = []
    disagreement: Disagreement | None = None
    back_dated: str = ""
    contested: list[int] = []
    contested_keys: list[str] = []
    first_contested: Disagreement | None = None
    listing_conflicts: list[str] = []


class _Chains(msgspec.Struct):
    """What the chained listings given say of each receipt v2: which of them a chain shows in its key's window (a
    retirement back-dated behind it, with why), and which a chain was rewritten after."""

    in_window: dict[int, str] = {}
    rewritten: set[int] = set()
    notes: list[str] = []


def _against_chains(receipts: list[Receipt], keys: Keys) -> _Chains:
    out = _Chains()
    for r in (r for r in receipts if r.listing is not None):
        for chain in keys.chains:
            at = keylist.position(chain, r.listing)
            if at is None:
                out.rewritten.add(id(r))
                out.notes.append(f"the key listing given that ends at head {keylist.head(chain)[:12]} does not hold the "
                                 f"head {r.listing[:12]} the receipt of version {r.version} was signed under: it was "
                                 "rewritten after that head")
                continue
            end = next((e for e in chain[at:] if isinstance(e, keylist.Retired) and e.key_id == r.key_id), None)
            if end is not None and end.at < r.at:
                out.in_window[id(r)] = (f"the key listing given that ends at head {keylist.head(chain)[:12]} retires key "
                                        f"{r.key_id} at {end.at}, in an entry after the head {r.listing[:12]} under which "
                                        f"it signed version {r.version} of time {r.at}: the retirement was back-dated")
    out.notes = list(dict.fromkeys(out.notes))
    return out


def _uncovered(keys: Keys, envelopes: list[Envelope]) -> bool:
    """Whether the listings given leave a time the log was played at when no key of theirs signed: an honest listing
    has none (a rotation closes one key's window as it opens the next's), so a key was dropped from it."""
    if keys.bare or not keys.listings:
        return False
    windows = [w for ws in keys.listed.values() for w in ws]
    return any(not any(a <= e.at and (b is None or e.at <= b) for a, b in windows) for e in envelopes)


def check(game_id: str, envelopes: list[Envelope], receipts: list[Receipt], keys: Keys | None) -> ReceiptReport:
    """Every receipt of ``game_id`` against the log. With ``keys``, only receipts whose signature checks out count: one
    that does not is set aside (a hostile holder cannot make an honest log fail by adding one, nor hide a genuine
    refutation behind it). The earliest version that disagrees is the one reported."""
    mine = sorted((r for r in receipts if r.game_id == game_id), key=lambda r: r.version)
    report = ReceiptReport(other_games=len(receipts) - len(mine), signatures=keys is not None)
    counted = [r for r in mine if keys is None or signature_ok(r, keys, in_window=False)]
    report.set_aside = [r.version for r in mine if keys is not None and not signature_ok(r, keys, in_window=False)]
    report.late = [r.version for r in counted if keys is not None and late(r, keys)]
    report.checked, report.latest = len(counted), counted[-1].version if counted else 0
    chains = _against_chains(counted, keys) if keys is not None else _Chains()
    report.listing_conflicts = [*(keys.conflicts() if keys is not None else []), *chains.notes]
    for receipt in counted:
        found = disagreement(receipt, envelopes)
        if found is None:
            continue
        doubt = keys is not None and (late(receipt, keys) or keys.disputed(receipt.key_id) or id(receipt) in chains.rewritten)
        if doubt and id(receipt) not in chains.in_window:
            _contest(report, receipt, found)
        elif report.disagreement is None:
            report.disagreement, report.back_dated = found, chains.in_window.get(id(receipt), "")
    if keys is not None and _uncovered(keys, envelopes):
        _dropped(report, [r for r in mine if r.key_id not in keys], envelopes)
    return report


def _contest(report: ReceiptReport, receipt: Receipt, found: Disagreement) -> None:
    report.contested.append(receipt.version)
    if receipt.key_id not in report.contested_keys:
        report.contested_keys.append(receipt.key_id)
    report.first_contested = report.first_contested or found


def _dropped(report: ReceiptReport, unlisted: list[Receipt], envelopes: list[Envelope]) -> None:
    """Receipts under a key no listing names, given listings that leave part of the game unsigned: they may be what the
    key dropped from them signed, so each that disagrees contests the log (it cannot refute it: nobody can check it)."""
    dropped = []
    for receipt in unlisted:
        if (found := disagreement(receipt, envelopes)) is not None:
            _contest(report, receipt, found)
            dropped += [receipt.key_id] if receipt.key_id not in dropped else []
    if dropped:
        report.listing_conflicts.append(f"the key listings given leave times this game was played at with no key "
                                        f"signing, and receipts of key {', '.join(dropped)}, which none of them names, "
                                        "disagree with the log: a key was dropped from the listing, or those receipts "
                                        "are not the service's")
