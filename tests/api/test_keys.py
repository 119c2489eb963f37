"""The keys that sign receipts: made once, kept across restarts, rotated without losing what old keys signed."""

from __future__ import annotations

import stat
import time

import msgspec
import pytest

from replays.receipts import load_keys, load_receipts, signature_ok
from service.__main__ import main as service_main
from service.api.app import StartupRefused, receipts_for
from service.api.signing import KEYRING
from tests.api.conftest import fresh_app, make_settings
from tests.api.helpers import new_game, view
from tests.http import serving

pytestmark = pytest.mark.parametrize("store_kind", ["embedded"])
SIGNING_KEY = "11" * 32


async def started(settings):
    async with serving(fresh_app(settings)) as client:
        game_id = await new_game(client, 2)
        return (await client.get("/keys")).content, (await view(client, game_id))["receipt"]


async def test_the_keyring_is_made_at_the_first_start_private_and_kept_across_restarts(store_kind, tmp_path):
    settings = make_settings(store_kind, tmp_path)
    keys, receipt = await started(settings)
    ring = settings.keys_folder / KEYRING
    assert stat.S_IMODE(ring.stat().st_mode) == 0o600
    again, later = await started(settings)
    assert again == keys and later["key_id"] == receipt["key_id"]


async def test_a_rotated_key_stays_listed_so_what_it_signed_still_checks(store_kind, tmp_path, capsys):
    settings = make_settings(store_kind, tmp_path)
    _, old = await started(settings)
    assert service_main(["keys", "rotate", "--keys", str(settings.keys_folder)]) == 0
    listing, new = await started(settings)
    assert new["key_id"] != old["key_id"]
    keys = load_keys([listing])
    assert set(keys) == {old["key_id"], new["key_id"]}
    assert all(signature_ok(r, keys) for r in load_receipts(msgspec.json.encode([old, new])))
    assert b'"not_after"' in listing  # the old key's last moment is listed, and its private half is gone from the file
    assert settings.keys_folder.joinpath(KEYRING).read_text().count("private_key") == 1


async def test_a_key_given_in_the_environment_signs_the_same_on_every_worker(store_kind, tmp_path):
    one = make_settings(store_kind, tmp_path / "one", signing_key=SIGNING_KEY)
    two = make_settings(store_kind, tmp_path / "two", signing_key=SIGNING_KEY)
    assert receipts_for(one).key_id == receipts_for(two).key_id
    assert not (one.keys_folder / KEYRING).exists()  # nothing written: the key is the deployment's


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"keys": [], "private_key": "zz", "current": "x"}'])
def test_a_damaged_keyring_refuses_the_start_and_is_left_as_it_was(store_kind, tmp_path, damage):
    settings = make_settings(store_kind, tmp_path)
    settings.keys_folder.mkdir(parents=True)
    (settings.keys_folder / KEYRING).write_bytes(damage)
    with pytest.raises(StartupRefused, match="keyring|signing key"):
        receipts_for(settings)
    assert (settings.keys_folder / KEYRING).read_bytes() == damage  # never replaced: old receipts need its keys


NEW_KEY = "22" * 32


def retired_file(tmp_path, listing: bytes, until: int | None):
    """The file a deployment keeps of the keys it signed with before: GET /keys' entries, each given its not_after."""
    keys = msgspec.json.decode(listing)["keys"]
    for k in keys:
        if until is not None:
            k["not_after"] = until
    path = tmp_path / "retired-keys.json"
    path.write_bytes(msgspec.json.encode({"keys": keys}))
    return path


async def test_a_key_given_in_the_environment_is_rotated_by_listing_the_old_one_as_retired(store_kind, tmp_path):
    old_listing, old = await started(make_settings(store_kind, tmp_path / "a", signing_key=SIGNING_KEY))
    until = time.time_ns() // 1_000_000  # retired after it signed: what it signed is within its window
    retired = retired_file(tmp_path, old_listing, until=until)
    # every host: the new key in FREE_PARKING_SIGNING_KEY, the old one in FREE_PARKING_RETIRED_KEYS
    listing, new = await started(make_settings(store_kind, tmp_path / "b", signing_key=NEW_KEY, retired_keys=retired))
    listed = {k["key_id"]: k for k in msgspec.json.decode(listing)["keys"]}
    assert set(listed) == {old["key_id"], new["key_id"]} and new["key_id"] != old["key_id"]
    assert listed[old["key_id"]]["not_after"] == until
    assert listed[new["key_id"]]["not_before"] == until and "not_after" not in listed[new["key_id"]]
    keys = load_keys([listing])  # what the old key signed still checks from the listing alone
    assert all(signature_ok(r, keys) for r in load_receipts(msgspec.json.encode([old, new])))
    # the same settings on another host list the very same keys
    again, _ = await started(make_settings(store_kind, tmp_path / "c", signing_key=NEW_KEY, retired_keys=retired))
    assert again == listing


@pytest.mark.parametrize("flaw", ["no not_after", "the signing key itself", "not json"])
def test_a_retired_keys_file_that_cannot_be_listed_refuses_the_start(store_kind, tmp_path, flaw):
    one = make_settings(store_kind, tmp_path, signing_key=SIGNING_KEY)
    listing = msgspec.json.encode(receipts_for(one).keyring.listing())
    path = retired_file(tmp_path, listing, until=None if flaw == "no not_after" else 1_700_000_000_000)
    if flaw == "not json":
        path.write_bytes(b"{not json")
    with pytest.raises(StartupRefused, match="retired keys"):
        receipts_for(make_settings(store_kind, tmp_path, signing_key=SIGNING_KEY, retired_keys=path))


def test_rotate_refuses_a_key_given_in_the_environment_and_says_what_to_do(store_kind, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FREE_PARKING_SIGNING_KEY", SIGNING_KEY)
    folder = tmp_path / "keys"
    assert service_main(["keys", "rotate", "--keys", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "signs from now" not in err
    assert err.count("\n") == 1 and "FREE_PARKING_SIGNING_KEY" in err and "FREE_PARKING_RETIRED_KEYS" in err, err
    assert not (folder / KEYRING).exists()  # no key made that nothing would sign with


def test_keys_list_shows_what_get_keys_serves_with_a_key_in_the_environment(store_kind, tmp_path, monkeypatch, capsys):
    settings = make_settings(store_kind, tmp_path, signing_key=SIGNING_KEY)
    served = msgspec.json.decode(msgspec.json.encode(receipts_for(settings).keyring.listing()))
    retired = retired_file(tmp_path, msgspec.json.encode(served), until=1_700_000_000_000)
    monkeypatch.setenv("FREE_PARKING_SIGNING_KEY", NEW_KEY)
    monkeypatch.setenv("FREE_PARKING_RETIRED_KEYS", str(retired))
    folder = tmp_path / "keys"
    assert service_main(["keys", "list", "--json", "--keys", str(folder)]) == 0
    listed = msgspec.json.decode(capsys.readouterr().out)["keys"]
    want = receipts_for(make_settings(store_kind, tmp_path, signing_key=NEW_KEY, retired_keys=retired)).keyring.listing()
    assert listed == msgspec.to_builtins(want)["keys"] and len(listed) == 2
    assert not (folder / KEYRING).exists()


SMALL_ORDER = ["00" * 32, "01" + "00" * 31, "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
               "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "ec" + "ff" * 30 + "7f"]
NON_CANONICAL = ["ed" + "ff" * 30 + "7f", "ee" + "ff" * 30 + "7f"]  # y = p and p + 1: the points 0 and 1 again


def test_a_public_key_of_small_order_or_not_canonically_encoded_is_not_sound(store_kind):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.api.signing import public_bytes
    from service.events.receipt import sound_public_key

    assert all(sound_public_key(public_bytes(Ed25519PrivateKey.generate())) for _ in range(50))
    for text in SMALL_ORDER + NON_CANONICAL:
        raw = bytes.fromhex(text)
        assert not sound_public_key(raw) and not sound_public_key(raw[:31] + bytes([raw[31] | 0x80])), text
    assert not sound_public_key(bytes.fromhex("02" + "00" * 31))  # y = 2: no point of the curve


def test_the_file_key_closed_beside_the_environments_key_stays_closed_at_the_same_time(store_kind, tmp_path):
    from service.api.signing import keyring_at

    keyring_at(tmp_path, 1_000)
    first = keyring_at(tmp_path, 2_000, "5a" * 32).keys
    assert keyring_at(tmp_path, 3_000, "5a" * 32).keys == first  # every later start, every worker: one listing
    assert [(k.not_before, k.not_after) for k in first] == [(1_000, 2_000), (2_000, None)]


def test_load_keys_refuses_a_small_order_key_or_one_listed_twice_and_keeps_the_earliest_not_after(store_kind):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from replays.receipts import ReceiptsUnreadable
    from service.api.signing import public_bytes
    from service.events.receipt import key_id_of

    for text in SMALL_ORDER + NON_CANONICAL:
        with pytest.raises(ReceiptsUnreadable):
            load_keys([text])
    raw = public_bytes(Ed25519PrivateKey.generate())
    entry = {"key_id": key_id_of(raw), "public_key": raw.hex(), "not_before": 0}
    with pytest.raises(ReceiptsUnreadable):
        load_keys([msgspec.json.encode({"keys": [entry, entry | {"not_after": 5}]})])
    keys = load_keys([msgspec.json.encode({"keys": [entry]}), msgspec.json.encode({"keys": [entry | {"not_after": 5}]})])
    assert keys.windows[entry["key_id"]] == (0, 5)  # a listing saved after its retirement: late past then
    assert len(keys.conflicts()) == 1 and entry["key_id"] in keys.conflicts()[0]  # and the two listings' odds said
