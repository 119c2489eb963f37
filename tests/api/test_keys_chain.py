"""The key listing as a hash-chained record (issue 29): kept beside the keyring, served by GET /keys, named by every
receipt (v2), and never rewritten — a listing that rewrote an earlier entry refuses the start, in one line."""

from __future__ import annotations

import msgspec
import pytest

from replays.receipts import load_keys, load_receipts, signature_ok
from service.__main__ import main as service_main
from service.api.app import StartupRefused, hold_listing_head, open_store_for, receipts_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.api.signing import (CHAIN, KEYRING, ChainFile, KeyringError, KeyringFile, _entry, keyring_at, read_chain,
                                 read_file, rotate)
from service.events import keylist
from service.events.receipt import PublicKey
from tests.api.conftest import make_settings
from tests.api.test_keys import started

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])
T = 1_700_000_000_000


def _write_chain(folder, entries) -> None:
    (folder / CHAIN).write_bytes(msgspec.json.encode(ChainFile(entries=entries)))


def _resealed(entries) -> list[keylist.Entry]:
    """``entries`` chained again link by link, as an operator who edits them by hand and recomputes every hash would."""
    out: list[keylist.Entry] = []
    for e in entries:
        if isinstance(e, keylist.Listed):
            key = PublicKey(key_id=e.key_id, public_key=e.public_key, not_before=e.at)
            out.append(keylist.listed(keylist.head(out), key))
        else:
            out.append(keylist.retired(keylist.head(out), e.key_id, e.at))
    return out


async def test_get_keys_serves_the_old_keys_and_the_chain_and_receipts_name_its_head(store_kind, tmp_path):
    listing, receipt = await started(make_settings(store_kind, tmp_path))
    served = msgspec.json.decode(listing)
    assert set(served) == {"keys", "entries", "head"} and set(served["keys"][0]) == {"key_id", "public_key", "not_before"}
    assert [e["type"] for e in served["entries"]] == ["listed"] and served["head"] == served["entries"][-1]["hash"]
    assert receipt["listing"] == served["head"]
    keys = load_keys([listing])
    assert signature_ok(load_receipts(msgspec.json.encode([receipt]))[0], keys) and len(keys.chains) == 1


async def test_a_rotation_appends_to_the_chain_and_old_receipts_still_check(store_kind, tmp_path):
    settings = make_settings(store_kind, tmp_path)
    _, old = await started(settings)
    assert service_main(["keys", "rotate", "--keys", str(settings.keys_folder)]) == 0
    listing, new = await started(settings)
    entries = msgspec.json.decode(listing)["entries"]
    assert [e["type"] for e in entries] == ["listed", "listed", "retired"]  # at one time: the new key listed, then the old retired
    assert old["listing"] == entries[0]["hash"] and new["listing"] == entries[-1]["hash"]
    keys = load_keys([listing])
    assert all(signature_ok(r, keys) for r in load_receipts(msgspec.json.encode([old, new])))


def test_a_keyring_from_before_chains_gets_its_chain_at_the_first_start(store_kind, tmp_path):
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    keys = [msgspec.structs.replace(_entry(old, T), not_after=T + 5), _entry(new, T + 5)]  # rotated once, by an old version
    tmp_path.joinpath(KEYRING).write_bytes(msgspec.json.encode(KeyringFile(
        keys=keys, private_key=new.private_bytes_raw().hex(), current=keys[1].key_id)))  # fmt: skip
    tmp_path.joinpath(KEYRING).chmod(0o600)  # as the service writes it: anyone else's to read is refused
    migrated = keyring_at(tmp_path, T + 10)
    assert [type(e).__name__ for e in migrated.entries] == ["Listed", "Listed", "Retired"]
    assert keylist.keys_of(read_chain(tmp_path)) == keys == migrated.keys
    assert keyring_at(tmp_path, T + 20).head == migrated.head  # kept, not made again


def _refused(folder) -> str:
    with pytest.raises(KeyringError) as e:
        keyring_at(folder, T + 1_000)
    text = str(e.value)
    assert "\n" not in text, text
    return text


def _rotated(folder) -> list[keylist.Entry]:
    keyring_at(folder, T)
    rotate(folder, T + 100)
    return read_chain(folder)


def test_a_chain_whose_links_do_not_check_refuses_the_start(store_kind, tmp_path):
    entries = _rotated(tmp_path)
    _write_chain(tmp_path, [entries[0], entries[1], msgspec.structs.replace(entries[2], at=T + 150)])
    assert "does not hash to its hash" in _refused(tmp_path)


def test_an_entry_whose_time_goes_back_refuses_the_start(store_kind, tmp_path):
    entries = _rotated(tmp_path)
    _write_chain(tmp_path, _resealed([entries[0], entries[1], msgspec.structs.replace(entries[2], at=T - 1)]))
    assert "never go back" in _refused(tmp_path)


def test_a_key_retired_twice_refuses_the_start(store_kind, tmp_path):
    entries = _rotated(tmp_path)
    retirement = next(e for e in entries if isinstance(e, keylist.Retired))
    _write_chain(tmp_path, _resealed([*entries, msgspec.structs.replace(retirement, at=T + 200)]))
    assert "already retired" in _refused(tmp_path)


@pytest.mark.parametrize("edit", ["back-dated", "dropped"])
def test_a_keyring_whose_keys_disagree_with_the_chain_refuses_the_start(store_kind, tmp_path, edit):
    _rotated(tmp_path)
    ring = read_file(tmp_path / KEYRING)
    keys = [msgspec.structs.replace(ring.keys[0], not_after=T + 50), ring.keys[1]] if edit == "back-dated" else ring.keys[1:]
    (tmp_path / KEYRING).write_bytes(msgspec.json.encode(msgspec.structs.replace(ring, keys=keys)))
    assert "disagree with the key listing's chain" in _refused(tmp_path)
    assert service_main(["keys", "rotate", "--keys", str(tmp_path)]) == 2  # nor rotated on top of it


def test_a_retirement_dated_before_the_chains_last_entry_refuses_the_start(store_kind, tmp_path):
    """The file's key closed (the environment's key signs from now) at a time before the chain's last entry: a clock
    set back, or a retirement back-dated — never recorded."""
    _rotated(tmp_path)
    with pytest.raises(KeyringError, match="never back-dated"):
        keyring_at(tmp_path, T + 50, "5a" * 32)


async def test_a_chain_rebuilt_by_hand_that_does_not_extend_the_head_the_store_recorded_refuses_the_start(store_kind, tmp_path):
    settings = make_settings(store_kind, tmp_path)
    await started(settings)
    folder = settings.keys_folder
    assert service_main(["keys", "rotate", "--keys", str(folder)]) == 0
    await started(settings)  # the store records the chain of three entries
    ring = read_file(folder / KEYRING)
    keys = [msgspec.structs.replace(ring.keys[0], not_after=ring.keys[0].not_before + 1),
            msgspec.structs.replace(ring.keys[1], not_before=ring.keys[0].not_before + 1)]  # fmt: skip
    (folder / KEYRING).write_bytes(msgspec.json.encode(msgspec.structs.replace(ring, keys=keys)))
    _write_chain(folder, keylist.extended([], keys))  # consistent: every link checks, the keys agree
    receipts = receipts_for(settings)  # the files alone hold together
    store, _ = await open_store_for(settings)
    try:
        with pytest.raises(StartupRefused, match="does not extend the head") as e:
            await hold_listing_head(store, receipts.keyring)
        assert "\n" not in str(e.value)
    finally:
        await store.close()
