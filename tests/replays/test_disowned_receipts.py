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
from service.api.signing import public_bytes
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


def test_the_command_line_exits_3_for_a_contested_log(attack, tmp_path):
    header, envelopes = attack["forged"]
    (tmp_path / "forged.ndjson").write_bytes(dumps(header, envelopes))
    (tmp_path / "receipts.json").write_bytes(msgspec.json.encode(attack["receipts"]))
    (tmp_path / "keys.json").write_bytes(attack["today"])
    done = subprocess.run([sys.executable, "-m", "replays", "verify", str(tmp_path / "forged.ndjson"), "--receipts",
                           str(tmp_path / "receipts.json"), "--key", str(tmp_path / "keys.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 3 and done.stdout.startswith("CONTESTED "), done.stdout + done.stderr


def test_the_header_type_is_unchanged():
    """Old exports keep their shape: the forged header above is an ordinary ``ExportHeader``."""
    assert "receipt" in ExportHeader.__struct_fields__
