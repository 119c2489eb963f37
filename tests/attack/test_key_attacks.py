"""Signing keys attacked (service/api/signing.py, replays/receipts.py, docs/fairness.md "Keys").

- **A retired key said to sign until the future.** ``retired_from`` checks only that ``not_after >= not_before``: a
  retired-keys file (hand-written, or a typo of a digit) whose key "signed" until 2100 is served by ``GET /keys`` as
  valid now, and the environment's key — the one that does sign — as valid only from 2100 on. Two keys valid at once,
  and the one that signs outside its own window.
- **One key_id twice.** The file may list a key twice with different windows; ``GET /keys`` serves both entries:
  which validity is the key's is left to each verifier (``load_keys`` keeps the last, the page the last too).
- **The environment's key beside a keyring file.** With ``FREE_PARKING_SIGNING_KEY`` set and a keyring file in the
  keys folder (a deployment moved from the file to the environment), the file's current key stays listed with no
  ``not_after`` — still signing, says ``GET /keys`` — while its private half lies in that file, and the environment's
  key is listed as valid since 0 (the epoch): two keys "signing now", the retired one forever.
- **A retired key's receipt from after its retirement.** ``replays verify --key`` checks a receipt's signature under
  the listed key whatever the key's ``not_after``: a receipt whose signed ``at`` (the time of the log's last event at
  its version) is after the key stopped signing cannot be honest, yet it counts, and refutes an honest log. A retired
  private key that leaked (the case rotation exists for) can fail any game. (docs/fairness.md names this limit; the
  receipt carries ``at``, so it can be checked.)
- **A key that signs everything.** Neither the keyring, nor the retired-keys file, nor ``replays verify --key``, nor
  ``load_keys`` looks at a public key beyond its id: the identity point (``01`` then 31 zero bytes, a key of order 1,
  "junk" in a hand-edited file) is listed by ``GET /keys``, and under it the signature ``R = identity, S = 0``
  checks out for *every* message (OpenSSL's Ed25519 does not refuse small-order keys). Anyone — a player, not only
  the operator — can then make receipts that "the service signed": a refutation of any honest log.
- **One malformed receipt hides a genuine refutation.** The page keeps whatever a service answers as a receipt
  (``keeping.js`` checks only that ``game_id`` is a string and ``version`` a number), and ``replays verify
  --receipts`` refuses the whole file (``UNREADABLE``, exit 2) for one item that is not a receipt — say a ``sig`` of
  two letters. A service that has signed a history it then rewrote answers one view with such a receipt; the
  player's saved file, genuine refutation inside, can no longer be checked by the command the docs give.
- **A retired-keys file anyone may write.** The keyring is made private when it is found readable by others; the
  retired-keys file is read whatever its mode. It holds no secret, but it is the trust anchor ``GET /keys`` serves:
  any local user who can write it adds a key of their own, and receipts they sign check out under the listing a
  player saves with their receipts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.api.signing import KeyringError, keyring_at, public_bytes, retired_from
from service.events.export import load
from service.events.receipt import PublicKey, Signed, key_id_of, signed_bytes
from tests.attack.conftest import ROOT

GOLDEN = ROOT / "replays" / "golden" / "golden-fp-v2-3-combined-seeds.ndjson"
ENV_KEY = "5a" * 32


def retired(key: Ed25519PrivateKey, not_before: int, not_after: int) -> PublicKey:
    raw = public_bytes(key)
    return PublicKey(key_id=key_id_of(raw), public_key=raw.hex(), not_before=not_before, not_after=not_after)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_a_retired_key_said_to_sign_until_the_future_is_refused(tmp_path):
    now = now_ms()
    future = retired(Ed25519PrivateKey.generate(), 0, now + 100 * 365 * 86_400_000)
    with pytest.raises(KeyringError):
        ring = keyring_at(tmp_path, now, ENV_KEY, [future])
        listed = {k.key_id: k for k in ring.keys}
        pytest.fail(f"served: current not_before {listed[ring.key_id].not_before} (now {now}), retired until {future.not_after}")


def test_a_key_listed_twice_among_the_retired_keys_is_refused(tmp_path):
    now = now_ms()
    key = Ed25519PrivateKey.generate()
    with pytest.raises(KeyringError):
        ring = keyring_at(tmp_path, now, ENV_KEY, [retired(key, 0, 10), retired(key, 5, now - 1)])
        pytest.fail(f"served: {[(k.key_id, k.not_before, k.not_after) for k in ring.keys]}")


def test_the_environments_key_beside_a_keyring_file_leaves_one_key_signing_now(tmp_path):
    now = now_ms()
    keyring_at(tmp_path, now - 60_000)  # the deployment signed from this file first
    ring = keyring_at(tmp_path, now, ENV_KEY)  # then moved the key to the environment
    open_ended = [k.key_id for k in ring.keys if k.not_after is None]
    assert open_ended == [ring.key_id], [(k.key_id, k.not_before, k.not_after) for k in ring.keys]


def test_a_receipt_a_retired_key_signed_after_its_retirement_contests_an_honest_log_never_refutes_it(tmp_path):
    """The key's own signature is never set aside in silence (issue 29): the verdict is CONTESTED — the key leaked, or
    its listing was changed after the fact — not REJECTED, and not OK."""
    header, envelopes = load(GOLDEN.read_bytes())
    old = Ed25519PrivateKey.generate()
    last = envelopes[-1]
    listing = {"keys": [msgspec.to_builtins(retired(old, 0, envelopes[0].at - 1))]}  # retired before the game began
    (tmp_path / "keys.json").write_text(json.dumps(listing))
    fields = {"game_id": header.game_id, "version": last.seq, "head": "ab" * 32, "at": last.at,
              "key_id": listing["keys"][0]["key_id"]}  # the leaked key "vouches" for a history that never was
    sig = old.sign(signed_bytes(msgspec.convert(fields, Signed))).hex()
    (tmp_path / "forged.json").write_text(json.dumps([fields | {"sig": sig}]))
    done = subprocess.run([sys.executable, "-m", "replays", "verify", str(GOLDEN), "--receipts", str(tmp_path / "forged.json"),
                           "--key", str(tmp_path / "keys.json")], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert "REJECTED" not in done.stdout, done.stdout[-600:]
    assert done.returncode == 3 and done.stdout.startswith("CONTESTED ") and "leaked" in done.stdout, done.stdout[-600:]


def test_a_retired_keys_file_others_may_write_is_refused(tmp_path):
    now = now_ms()
    intruder = Ed25519PrivateKey.generate()  # a local user's own key, added to the file
    path = tmp_path / "retired.json"
    path.write_text(json.dumps({"keys": [msgspec.to_builtins(retired(intruder, 0, now - 1))]}))
    path.chmod(0o666)
    with pytest.raises(KeyringError):
        listed = keyring_at(tmp_path / "keys", now, ENV_KEY, retired_from(path)).keys
        pytest.fail(f"served: {[k.key_id for k in listed]}, the intruder's {key_id_of(public_bytes(intruder))} among them")


IDENTITY = "01" + "00" * 31  # the neutral point: [h]A is the identity for every h
FORGED_SIG = IDENTITY + "00" * 32  # R = identity, S = 0: [0]B == R + [h]A for every message


def test_a_small_order_public_key_among_the_retired_keys_is_refused(tmp_path):
    junk = PublicKey(key_id=key_id_of(bytes.fromhex(IDENTITY)), public_key=IDENTITY, not_before=0, not_after=1)
    with pytest.raises(KeyringError):
        ring = keyring_at(tmp_path, now_ms(), ENV_KEY, [junk])
        pytest.fail(f"served: {[(k.key_id, k.public_key[:8]) for k in ring.keys]}")


def test_a_receipt_anyone_can_make_under_a_small_order_key_does_not_refute_an_honest_log(tmp_path):
    header, envelopes = load(GOLDEN.read_bytes())
    key_id = key_id_of(bytes.fromhex(IDENTITY))
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [{"key_id": key_id, "public_key": IDENTITY, "not_before": 0}]}))
    last = envelopes[-1]
    forged = {"game_id": header.game_id, "version": last.seq, "head": "ab" * 32, "at": last.at, "key_id": key_id, "sig": FORGED_SIG}
    (tmp_path / "forged.json").write_text(json.dumps([forged]))
    done = subprocess.run([sys.executable, "-m", "replays", "verify", str(GOLDEN), "--receipts", str(tmp_path / "forged.json"),
                           "--key", str(tmp_path / "keys.json")], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert "REJECTED" not in done.stdout, done.stdout[-600:]


def test_one_malformed_receipt_does_not_hide_a_genuine_refutation(tmp_path):
    header, envelopes = load(GOLDEN.read_bytes())
    key = Ed25519PrivateKey.generate()
    key_id = key_id_of(public_bytes(key))
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [msgspec.to_builtins(retired(key, 0, last_at := envelopes[-1].at))]}))
    # what the service signed at version 5 before it rewrote its history: a head this log does not have there
    fields = {"game_id": header.game_id, "version": 5, "head": "ab" * 32, "at": envelopes[4].at, "key_id": key_id}
    genuine = fields | {"sig": key.sign(signed_bytes(msgspec.convert(fields, Signed))).hex()}
    slipped = fields | {"version": 6, "at": envelopes[5].at, "sig": "zz"}  # one view's "receipt", kept by the page as it came
    assert last_at >= fields["at"]

    def verify(receipts: list[dict]) -> subprocess.CompletedProcess:
        (tmp_path / "receipts.json").write_text(json.dumps(receipts))
        return subprocess.run([sys.executable, "-m", "replays", "verify", str(GOLDEN), "--receipts", str(tmp_path / "receipts.json"),
                               "--key", str(tmp_path / "keys.json")], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)

    alone = verify([genuine])
    assert "REJECTED" in alone.stdout and "seq 5" in alone.stdout, alone.stdout[-400:]  # the refutation, on its own
    done = verify([genuine, slipped])
    assert "REJECTED" in done.stdout and "seq 5" in done.stdout, (done.returncode, done.stdout[-400:])


def test_a_keyring_in_a_folder_others_may_write_is_refused(tmp_path):
    """A 0600 keyring in a folder others may write is theirs to replace: they rename a keyring of their own over it (a
    folder's write permission is what a rename needs), and the service then signs with their key. Refused, in words
    that say which folder and the fix. (The group's write is left be: umask 002 makes every folder 0775.)"""
    keys = tmp_path / "keys"
    keyring_at(keys, now_ms())  # made, 0600
    for mode in (0o777, 0o757, 0o703):
        keys.chmod(mode)
        with pytest.raises(KeyringError, match=f"chmod go-w {keys}"):
            keyring_at(keys, now_ms())
    keys.chmod(0o775)
    assert keyring_at(keys, now_ms()).keys  # readable by others, writable by the group: the file itself is 0600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root reads a 0600 file another user owns")
def test_a_keyring_another_user_owns_is_refused(tmp_path):
    """A 0600 keyring that another user owns is that user's to read and to write (a symlink to their file, or a file
    they left in the folder): a service running as root would read it and sign with a key someone else holds."""
    keys = tmp_path / "keys"
    keyring_at(keys, now_ms())
    os.chown(keys / "keyring.json", 65534, 65534)
    with pytest.raises(KeyringError, match="owned by"):
        keyring_at(keys, now_ms())


def test_the_keyring_folder_the_service_makes_is_its_own_under_a_group_writable_umask(tmp_path):
    """Under umask 002 (a user-private group's default on Debian and Ubuntu) a folder is made 0775: the keyring folder
    the service makes at its first start must still pass its own check, not refuse the very next start."""
    old = os.umask(0o002)
    try:
        keyring_at(tmp_path / "data" / "keys", now_ms())
        assert keyring_at(tmp_path / "data" / "keys", now_ms()).keys
    finally:
        os.umask(old)


def test_a_retired_keys_file_in_a_folder_others_may_write_is_refused(tmp_path):
    """The retired keys file is what ``GET /keys`` vouches for: in a folder others may write, they rename a file of
    their own over it (0644, as the check wants), with their key among the retired ones."""
    now = now_ms()
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "retired.json"
    path.write_text(json.dumps({"keys": [msgspec.to_builtins(retired(Ed25519PrivateKey.generate(), 0, now - 1))]}))
    path.chmod(0o644)
    folder.chmod(0o777)
    with pytest.raises(KeyringError, match=f"chmod o-w {folder}"):
        retired_from(path)
    folder.chmod(0o1777)  # sticky, as /tmp: only the file's owner may replace it
    assert retired_from(path)
