"""The keys that sign receipts: made once, kept across restarts, rotated without losing what old keys signed."""

from __future__ import annotations

import stat

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
