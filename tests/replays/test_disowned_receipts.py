"""Receipts the operator cannot disown (an outside review's attack, issue 29).

Two guests play to the end keeping every receipt and the key listing of the time. The operator then rewrites the game
from version 40 with bots to another history, rotates the signing key, back-dates the old key's ``not_after`` to the
first event after the fork, and signs the forged export's header with the new key. Before: ``replays verify`` set the
honest receipts dated after the back-dated retirement aside and answered OK for the forgery — and OK for the real log
too. Now a receipt whose signature checks out under a key given is never set aside: the forgery is CONTESTED (or
REJECTED, where no listing given back-dates the key), whatever combination of listings the verifier is given, and the
real log still verifies.
"""

from __future__ import annotations

import random
import subprocess
import sys

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from replays.receipts import load_keys
from replays.verify import verify
from service.api.signing import CHAIN, KEYRING, ChainFile, KeyringError, Receipts, keyring_at, public_bytes, read_file, rotate
from service.events import keylist
from service.events.envelope import Envelope
from service.events.export import ExportHeader, dumps
from service.events.receipt import Receipt, Signed, key_id_of, signed_bytes
from service.sim.games import simulate
from tests.replays.forge import export_of, played_on

FORK = 40
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def receipt(key: Ed25519PrivateKey, game_id: str, envelopes: list[Envelope], version: int) -> Receipt:
    env = envelopes[version - 1]
    signed = Signed(game_id=game_id, version=version, head=env.hash, at=env.at, key_id=key_id_of(public_bytes(key)))
    return Receipt(**msgspec.structs.asdict(signed), sig=key.sign(signed_bytes(signed)).hex())


def listing(*entries: tuple[Ed25519PrivateKey, int, int | None]) -> bytes:
    """``GET /keys`` as it would be served: each key with its window."""
    keys = [{"key_id": key_id_of(public_bytes(k)), "public_key": public_bytes(k).hex(), "not_before": a}
            | ({} if b is None else {"not_after": b}) for k, a, b in entries]  # fmt: skip
    return msgspec.json.encode({"keys": keys})


@pytest.fixture(scope="module")
def attack():
    """The honest game and its receipts, the forgery, and the listings: the one saved while playing and today's."""
    honest_header, honest = export_of(simulate("free-parking", 2, bytes(range(32)), "disowned", ["greedy", "greedy"]))
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    receipts = [receipt(old, honest_header.game_id, honest, v) for v in range(1, len(honest) + 1)]
    forged_header, forged = played_on(honest_header, honest, FORK, random.Random("another winner"))
    parted = next(i for i, (a, b) in enumerate(zip(honest, forged)) if a.hash != b.hash)  # forced moves may agree a while
    assert parted >= FORK
    back_dated = forged[parted].at - 1  # the old key "retired" just before the first event the histories differ at
    forged_header = msgspec.structs.replace(forged_header, receipt=receipt(new, forged_header.game_id, forged, len(forged)))
    while_playing = listing((old, 0, None))
    today = listing((old, 0, back_dated), (new, back_dated + 1, None))
    return {"honest": (honest_header, honest), "forged": (forged_header, forged), "receipts": receipts,
            "while_playing": while_playing, "today": today, "parted": parted + 1}  # fmt: skip


LISTINGS = [("today",), ("while_playing",), ("while_playing", "today"), ("today", "while_playing")]


@pytest.mark.parametrize("given", LISTINGS, ids="+".join)
def test_the_forgery_never_verifies_whatever_listings_the_verifier_is_given(attack, given):
    keys = load_keys(attack[name] for name in given)
    header, envelopes = attack["forged"]
    verdict = verify(header, envelopes, receipts=attack["receipts"], keys=keys)
    assert not verdict.ok, verdict.summary()
    if given == ("while_playing",):  # no listing retires the old key: its receipts refute the forgery outright
        assert verdict.status == "REJECTED" and verdict.divergence.seq == attack["parted"], verdict.summary()
    else:  # the only doubt is the old key's window: contested, naming the key and where the receipts disagree
        assert verdict.status == "CONTESTED", verdict.summary()
        old_key = attack["receipts"][0].key_id
        assert old_key in verdict.contested and f"versions {attack['parted']}–" in verdict.contested, verdict.contested
        assert "leaked or its listing was changed after the fact" in verdict.contested
    if len(given) == 2:
        assert "disagree about key" in verdict.summary(), "two listings at odds are reported, not reconciled"


@pytest.mark.parametrize("given", LISTINGS, ids="+".join)
def test_the_honest_log_still_verifies_with_every_receipt(attack, given):
    keys = load_keys(attack[name] for name in given)
    header, envelopes = attack["honest"]
    verdict = verify(header, envelopes, receipts=attack["receipts"], keys=keys)
    assert verdict.ok, verdict.summary()
    assert verdict.receipts.checked == len(envelopes) and verdict.receipts.set_aside == []


def test_a_receipt_the_key_does_not_sign_is_still_set_aside(attack):
    """What is not the service's word proves nothing either way: a forged signature is set aside, as before."""
    header, envelopes = attack["honest"]
    stranger = Ed25519PrivateKey.generate()
    fake = receipt(stranger, header.game_id, envelopes, 5)
    bad = msgspec.structs.replace(fake, key_id=attack["receipts"][0].key_id, head="ab" * 32)
    verdict = verify(header, envelopes, receipts=[*attack["receipts"], bad], keys=load_keys([attack["while_playing"]]))
    assert verdict.ok and verdict.receipts.set_aside == [5], verdict.summary()


def verify_forged_on_the_command_line(given: dict, tmp_path) -> subprocess.CompletedProcess:
    """``python -m replays verify`` of the forged log, with the kept receipts and today's listing, as files."""
    (tmp_path / "forged.ndjson").write_bytes(dumps(*given["forged"]))
    (tmp_path / "receipts.json").write_bytes(msgspec.json.encode(given["receipts"]))
    (tmp_path / "keys.json").write_bytes(given["today"])
    return subprocess.run([sys.executable, "-m", "replays", "verify", str(tmp_path / "forged.ndjson"), "--receipts",
                           str(tmp_path / "receipts.json"), "--key", str(tmp_path / "keys.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


def test_the_command_line_exits_3_for_a_contested_log(attack, tmp_path):
    done = verify_forged_on_the_command_line(attack, tmp_path)
    assert done.returncode == 3 and done.stdout.startswith("CONTESTED "), done.stdout + done.stderr


def test_the_header_type_is_unchanged():
    """Old exports keep their shape: the forged header above is an ordinary ``ExportHeader``."""
    assert "receipt" in ExportHeader.__struct_fields__


# --- the same attack on the service's own keyring, its chained listing and receipts v2 -------------------------------


@pytest.fixture(scope="module")
def on_the_keyring(tmp_path_factory):
    """The reviewer's exact steps on a real keyring folder: play keeping every receipt (v2, signed by the service's
    ``Receipts``) and the listing of the time; rewrite the game from version 40; ``keys rotate``; edit keyring.json to
    back-date the old key's ``not_after`` to the fork; restart. Then the operator also rebuilds the chain by hand,
    consistently, so that the service starts, and signs the forgery's header with the new key."""
    folder = tmp_path_factory.mktemp("keys")
    honest_header, honest = export_of(simulate("free-parking", 2, bytes(range(32)), "disowned", ["greedy", "greedy"]))
    ring = keyring_at(folder, honest[0].at - 1_000)
    saved = msgspec.json.encode(ring.listing())
    signer = Receipts(ring)
    receipts = [signer.of(honest_header.game_id, v, honest[v - 1].hash, honest[v - 1].at) for v in range(1, len(honest) + 1)]
    forged_header, forged = played_on(honest_header, honest, FORK, random.Random("another winner"))
    parted = next(i for i, (a, b) in enumerate(zip(honest, forged)) if a.hash != b.hash)
    rotate(folder, forged[-1].at + 1_000)
    ring_file = read_file(folder / KEYRING)
    back_dated = forged[parted].at - 1
    keys = [msgspec.structs.replace(k, not_after=back_dated) if k.not_after is not None else
            msgspec.structs.replace(k, not_before=back_dated) for k in ring_file.keys]  # fmt: skip
    (folder / KEYRING).write_bytes(msgspec.json.encode(msgspec.structs.replace(ring_file, keys=keys)))
    with pytest.raises(KeyringError) as refused:
        keyring_at(folder, forged[-1].at + 2_000)
    (folder / CHAIN).write_bytes(msgspec.json.encode(ChainFile(entries=keylist.extended([], keys))))  # by hand
    today = keyring_at(folder, forged[-1].at + 2_000)
    last = forged[-1]
    forged_header = msgspec.structs.replace(forged_header, receipt=Receipts(today).of(forged_header.game_id, len(forged), last.hash, last.at))
    return {"honest": (honest_header, honest), "forged": (forged_header, forged), "receipts": receipts,
            "saved": saved, "today": msgspec.json.encode(today.listing()), "bare": ring.listing().keys[0].public_key,
            "refused": str(refused.value), "parted": parted + 1}  # fmt: skip


GIVEN = [("saved",), ("today",), ("saved", "today"), ("today", "saved"), ("bare",)]


def test_the_service_refuses_to_start_on_the_back_dated_keyring(on_the_keyring):
    refused = on_the_keyring["refused"]
    assert "disagree with the key listing's chain" in refused and "\n" not in refused, refused


@pytest.mark.parametrize("given", GIVEN, ids="+".join)
def test_the_forgery_signed_under_a_rebuilt_chain_is_rejected_whatever_listings_are_given(on_the_keyring, given):
    t = on_the_keyring
    header, envelopes = t["forged"]
    verdict = verify(header, envelopes, receipts=t["receipts"], keys=load_keys(t[name] for name in given))
    assert verdict.status == "REJECTED" and verdict.divergence.seq == t["parted"], verdict.summary()
    if "today" in given:
        assert "the retirement was back-dated" in verdict.summary(), verdict.summary()
    if len(given) == 2:
        assert any("disagree about key" in c for c in verdict.receipts.listing_conflicts), verdict.receipts


@pytest.mark.parametrize("given", GIVEN, ids="+".join)
def test_the_honest_log_verifies_with_its_v2_receipts_whatever_listings_are_given(on_the_keyring, given):
    t = on_the_keyring
    header, envelopes = t["honest"]
    verdict = verify(header, envelopes, receipts=t["receipts"], keys=load_keys(t[name] for name in given))
    assert verdict.ok, verdict.summary()
    assert verdict.receipts.checked == len(envelopes) and all(r.listing for r in t["receipts"])


def test_the_command_line_rejects_the_forgery_with_todays_rebuilt_listing(on_the_keyring, tmp_path):
    done = verify_forged_on_the_command_line(on_the_keyring, tmp_path)
    assert done.returncode == 1 and done.stdout.startswith("REJECTED ") and "back-dated" in done.stdout, done.stdout + done.stderr
