"""The service's signing keys and the receipts they sign (docs/fairness.md).

The keyring is one JSON file, ``<keys dir>/keyring.json`` (mode 0600): every key the service ever signed with, by
its public half and validity, and the private half of the current one only. It is made at the first start (by the
one process that starts first: the file is linked into place, never overwritten) and shared by every worker that
reads the same folder; a deployment on several hosts gives them the same file, or the same key in
``FREE_PARKING_SIGNING_KEY`` (64 hex digits: the Ed25519 private key's 32 raw bytes). ``python -m service keys
rotate`` starts a new key and keeps the old one listed, without its private half, so what it signed stays checkable.
A key in the environment is rotated by the deployment, not by this command: it gives every host the new key and lists
the old one's public half, with its ``not_after``, in the file ``FREE_PARKING_RETIRED_KEYS`` names (``retired_from``).

Beside it, ``<keys dir>/keylist.json`` keeps the key listing as a hash-chained record (``service/events/keylist.py``):
every key listed, every retirement, in time order, each entry chained to the one before. A file of its own, not a
member of ``keyring.json``: it holds no secret (the one file an operator publishes, backs up, compares across hosts),
and a deployment whose key is in the environment, which has no keyring file, keeps its chain too. At each start the
listing computed as before (the keyring, the environment's key, the retired keys) must extend that chain — a key
dropped, a window moved, an entry dated before the chain's last refuses the start — and what it adds is appended (a
keyring from before chains gets its whole chain so at its first start). The keyring is written first, the chain
after: a crash between them leaves a chain the next start extends, never one ahead of the keys.

A receipt is signed once per version of a game (``Receipts``), whoever reads it: views, answers, pages and streams
of the same version share one signature.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.events import keylist
from service.events.keylist import ChainBroken, Entry, Listing
from service.events.receipt import KeyList, PublicKey, Receipt, Signed, key_id_of, signed_bytes, sound_public_key

KEYRING = "keyring.json"
CHAIN = "keylist.json"
log = logging.getLogger("free_parking")


class KeyringError(Exception):
    """The keyring cannot be read or used: said in one line (the service then refuses to start)."""


class KeyringFile(msgspec.Struct, kw_only=True):
    keys: list[PublicKey]
    private_key: str  # the current key's 32 raw bytes, hex
    current: str  # its key_id


class ChainFile(msgspec.Struct, kw_only=True):
    entries: list[Entry]


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def private_from_hex(text: str) -> Ed25519PrivateKey:
    try:
        raw = bytes.fromhex(text.strip())
        if len(raw) != 32:
            raise ValueError
    except ValueError:
        raise KeyringError("a signing key is 64 hex digits (the Ed25519 private key's 32 raw bytes)") from None
    return Ed25519PrivateKey.from_private_bytes(raw)


class Keyring:
    """The key that signs now, and every public key that ever signed (``GET /keys``)."""

    def __init__(self, current: Ed25519PrivateKey, keys: list[PublicKey], entries: list[Entry] | None = None) -> None:
        self.current = current
        self.key_id = key_id_of(public_bytes(current))
        self.keys = keys
        self.entries = keylist.extended([], keys) if entries is None else entries
        self.head = keylist.head(self.entries)
        for k in keys:  # a listing no verifier would accept is refused here, not served by GET /keys
            if key_id_of(bytes.fromhex(k.public_key)) != k.key_id:
                raise KeyringError(f"the keyring lists key {k.key_id} with a public key whose id is not that")
            if not sound_public_key(bytes.fromhex(k.public_key)):  # one of small order "signs" every message
                raise KeyringError(f"the keyring lists key {k.key_id}, which is no Ed25519 public key (of small order, "
                                   "or not canonically encoded): anyone could make receipts that check out under it")
        ids = [k.key_id for k in keys]
        if twice := sorted({i for i in ids if ids.count(i) > 1}):  # which window is the key's: each verifier's guess
            raise KeyringError(f"the keyring lists key {', '.join(twice)} twice: list each key once, with one validity")
        if [k.key_id for k in keys if k.not_after is None] not in ([], [self.key_id]):
            raise KeyringError("the keyring lists a key other than the signing key without a not_after: it would be said to sign still")
        mine = next((k for k in keys if k.key_id == self.key_id), None)
        if mine is None or mine.public_key != public_bytes(current).hex():
            raise KeyringError(f"the current key {self.key_id} is not among the listed keys")

    def listing(self) -> Listing:
        """``GET /keys``: the keys as ever, and the chain they extend with its head."""
        return Listing(keys=list(self.keys), entries=list(self.entries), head=self.head)

    def sign(self, what: Signed) -> Receipt:
        sig = self.current.sign(signed_bytes(what)).hex()
        return Receipt(**{f: getattr(what, f) for f in Signed.__struct_fields__}, sig=sig)


def _entry(key: Ed25519PrivateKey, now_ms: int) -> PublicKey:
    raw = public_bytes(key)
    return PublicKey(key_id=key_id_of(raw), public_key=raw.hex(), not_before=now_ms)


def _write_new(path: Path, ring: KeyringFile) -> bool:
    """Write ``ring`` to ``path`` only if no file is there (``False``: another process made one first)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # its owner's alone, whatever the umask
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.json.format(msgspec.json.encode(ring)))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _replace(path: Path, ring: KeyringFile | ChainFile, mode: int = 0o600) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(msgspec.json.format(msgspec.json.encode(ring)))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_file(path: Path) -> KeyringFile:
    """The keyring at ``path``; ``KeyringError`` when it cannot be read, or when anyone but its owner may read or write
    it: it holds the signing key, which whoever could read may have copied, and whoever could write may have replaced
    with their own (then signing "for the service"). Refused, not quietly made private: that would hide that it was
    open, and the operator is the one who knows whether to rotate the key."""
    try:
        folder = path.parent.stat().st_mode
        # whoever may write the folder renames a keyring of their own over this one; the group's write is left be: a
        # user-private group's umask 002 makes every folder 0775, and an older start made this one so
        if _others_replace(folder):
            raise KeyringError(f"the keyring's folder {path.parent} may be written by others (mode {folder & 0o777:o}): "
                               f"they could put their own key in place of the service's; make it writable by its owner "
                               f"only (chmod go-w {path.parent})")
        st = path.stat()
        if st.st_uid != os.geteuid():  # root reads anyone's 0600 file: its owner reads and writes it too
            raise KeyringError(f"the keyring {path} holds the signing key and is owned by another user (uid {st.st_uid}), "
                               f"who may read or replace it: make it this service's user's (chown), and rotate the key")
        mode = st.st_mode
        if mode & 0o077:
            raise KeyringError(f"the keyring {path} holds the signing key and may be read or written by the group or others "
                               f"(mode {mode & 0o777:o}): make it its owner's alone (chmod 600 {path}), and if someone "
                               "else may have read it, rotate the key (python -m service keys rotate)")
        ring = msgspec.json.decode(path.read_bytes(), type=KeyringFile)
    except (OSError, msgspec.DecodeError) as e:
        raise KeyringError(f"the keyring {path} cannot be read ({e}): restore it, or move it aside to start a new key "
                           "(receipts signed by the old one can then be checked only with its public key)") from None
    private_from_hex(ring.private_key)
    return ring


def _others_replace(folder_mode: int) -> bool:
    """Whether others may rename a file over one of the owner's in a folder of this mode: it is writable by others,
    and not sticky (in a sticky folder, /tmp's kind, only a file's owner may replace it)."""
    return bool(folder_mode & 0o002) and not folder_mode & stat.S_ISVTX


def retired_from(path: Path) -> list[PublicKey]:
    """The public keys a deployment retired, from a file in ``GET /keys``' shape (``{"keys": [...]}``): each says until
    when it signed (``not_after``). Every host lists the same file, so ``GET /keys`` is the same on each."""
    try:
        folder = path.parent.stat().st_mode
        mode = path.stat().st_mode
        listing = msgspec.json.decode(path.read_bytes(), type=KeyList)
    except (OSError, msgspec.DecodeError) as e:
        raise KeyringError(f"the retired keys {path} cannot be read ({e}): a JSON {{\"keys\": [...]}} as GET /keys lists them") from None
    if _others_replace(folder):  # others may rename a file of their own over it
        raise KeyringError(f"the retired keys {path} are in a folder others may write (mode {folder & 0o777:o}): anyone "
                           f"can put a file listing a key of theirs in its place; chmod o-w {path.parent}")
    if mode & 0o022:  # no secret in it, but it is what GET /keys vouches for: a key added to it signs "for the service"
        raise KeyringError(f"the retired keys {path} may be written by the group or others (mode {mode & 0o777:o}): anyone "
                           "who can write it adds a key of theirs to GET /keys; make it writable by its owner only (chmod go-w)")
    for k in listing.keys:
        if k.not_after is None or k.not_after < k.not_before:
            raise KeyringError(f"the retired keys {path} list key {k.key_id} without a not_after at or after its not_before: "
                               "a retired key says until when it signed")
    return listing.keys


def _with_retired(listed: list[PublicKey], retired: list[PublicKey], current: str, now_ms: int) -> list[PublicKey]:
    if any(k.key_id == current for k in retired):
        raise KeyringError(f"the signing key {current} is listed among the retired keys: sign with a new key, or take it off that list")
    for k in retired:  # a key said to sign until later would be valid now beside the key that does sign
        if k.not_after is not None and k.not_after > now_ms:
            raise KeyringError(f"the retired key {k.key_id} is said to sign until {k.not_after}, after now ({now_ms}): "
                               "a retired key's not_after is when it stopped signing")
    gone = {k.key_id for k in retired}
    return [k for k in listed if k.key_id not in gone and k.key_id != current] + list(retired)


def keyring_at(folder: Path, now_ms: int, signing_key: str | None = None, retired: Sequence[PublicKey] = ()) -> Keyring:
    """The keyring in ``folder``, made there at the first start; ``signing_key`` (hex), when given, signs instead of
    the file's current key, and is listed beside the file's keys (or alone, when there is no file). ``retired`` keys
    are listed too: the environment key's ``not_before`` is the last one's ``not_after`` (0 without one), the same on
    every host. A keyring file beside the environment's key has its key closed when the environment's first signs
    (``_closed``): one key signs at a time, and the file's, whose private half lies there, no longer. The listing must
    extend the chain in ``folder`` (``chained``)."""
    path = folder / KEYRING
    retired = list(retired)
    if signing_key is not None:
        key = private_from_hex(signing_key)
        listed = _closed(path, now_ms) if path.exists() else []
        entry = _entry(key, max((k.not_after or 0 for k in [*retired, *listed]), default=0))
        keys = [*_with_retired(listed, retired, entry.key_id, now_ms), entry]
        return Keyring(key, keys, chained(folder, keys))
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        entry = _entry(key, now_ms)
        _write_new(path, KeyringFile(keys=[entry], private_key=key.private_bytes_raw().hex(), current=entry.key_id))
    ring = read_file(path)
    mine = [k for k in ring.keys if k.key_id == ring.current]
    keys = _with_retired(ring.keys, retired, ring.current, now_ms) + mine
    return Keyring(private_from_hex(ring.private_key), keys, chained(folder, keys))


def _locked(folder: Path) -> contextlib.AbstractContextManager[object]:
    """The keyring folder's lock (one writer of its files at a time: workers starting together, a rotation)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = open(folder / f".{KEYRING}.lock", "a")  # noqa: SIM115 — closed by the context manager, which releases it
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def read_chain(folder: Path) -> list[Entry]:
    """The chain kept in ``folder`` (empty when there is none yet); ``KeyringError`` when it cannot be read."""
    path = folder / CHAIN
    if not path.exists():
        return []
    try:
        return msgspec.json.decode(path.read_bytes(), type=ChainFile).entries
    except (OSError, msgspec.DecodeError) as e:
        raise KeyringError(f"the key listing's chain {path} cannot be read ({e}): restore it — it is the record every "
                           "receipt names, and is never made again from the keys") from None


def chained(folder: Path, keys: Sequence[PublicKey]) -> list[Entry]:
    """The chain in ``folder`` extended by ``keys`` (``keylist.extended``), written back if that added an entry;
    ``KeyringError``, in one line, when the chain does not check or ``keys`` rewrite it."""
    with _locked(folder):
        entries = read_chain(folder)
        try:
            longer = keylist.extended(entries, keys)
        except ChainBroken as e:
            raise KeyringError(f"{folder / CHAIN}: {e}") from None
        if len(longer) > len(entries):
            _replace(folder / CHAIN, ChainFile(entries=longer), 0o644)  # public: no secret in it
            if entries:
                log.warning("the key listing's chain %s: %d entries added, head %s", folder / CHAIN,
                            len(longer) - len(entries), keylist.head(longer))
        return longer


def _closed(path: Path, now_ms: int) -> list[PublicKey]:
    """The keys of the file at ``path``, its current key's ``not_after`` set (to ``now_ms``, in the file) if it had
    none: the environment's key signs from then on. Written once, under a lock, so every worker of the host (and
    every later start) lists the same time."""
    with _locked(path.parent):
        ring = read_file(path)
        if any(k.key_id == ring.current and k.not_after is None for k in ring.keys):
            keys = [msgspec.structs.replace(k, not_after=now_ms) if k.key_id == ring.current else k for k in ring.keys]
            ring = msgspec.structs.replace(ring, keys=keys)
            _replace(path, ring)
            log.warning("the keyring %s's key %s signs no more (FREE_PARKING_SIGNING_KEY does): closed at %d", path,
                        ring.current, now_ms)
        return ring.keys


def rotate(folder: Path, now_ms: int) -> tuple[str, str]:
    """A new current key; the old one keeps its public half, valid until now, and both events are appended to the
    chain (checked before the keyring is written: a keyring that rewrote its chain is not rotated, but refused).
    Returns (old key_id, new key_id)."""
    path = folder / KEYRING
    ring = read_file(path)
    chained(folder, ring.keys)
    key = Ed25519PrivateKey.generate()
    entry = _entry(key, now_ms)
    keys = [msgspec.structs.replace(k, not_after=k.not_after or now_ms) if k.key_id == ring.current else k for k in ring.keys]
    try:
        keylist.extended(read_chain(folder), [*keys, entry])
    except ChainBroken as e:
        raise KeyringError(f"{folder / CHAIN}: {e}") from None
    _replace(path, KeyringFile(keys=[*keys, entry], private_key=key.private_bytes_raw().hex(), current=entry.key_id))
    chained(folder, [*keys, entry])
    return ring.current, entry.key_id


class Receipts:
    """Receipts signed once per (game, version, head): every reader of a version shares its signature."""

    def __init__(self, keyring: Keyring, size: int = 50_000) -> None:
        self.keyring = keyring
        self.key_id = keyring.key_id
        self._signed: OrderedDict[tuple[str, int, str], Receipt] = OrderedDict()
        self._size = size

    def of(self, game_id: str, version: int, head: str, at: int) -> Receipt:
        key = (game_id, version, head)
        receipt = self._signed.get(key)
        if receipt is None or receipt.at != at:
            receipt = self.keyring.sign(Signed(game_id=game_id, version=version, head=head, at=at, key_id=self.key_id,
                                               listing=self.keyring.head))
            self._signed[key] = receipt
            if len(self._signed) > self._size:
                self._signed.popitem(last=False)
        return receipt
