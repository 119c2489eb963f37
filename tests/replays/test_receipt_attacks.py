"""An outside review of the "receipts are never set aside in silence" change (issue 29): what could still get a forgery OK,
an honest log refuted with material anyone can make, or the command line's words at odds with its exit status.

Each test is named for the behaviour it expects, and failed when written; all hold now (the last
open one, a key dropped from today's listing, since the key listing became a hash-chained record).
"""

from __future__ import annotations

import random

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from replays.__main__ import main
from replays.receipts import load_keys
from replays.verify import verify
from service.events.export import dumps
from service.events.receipt import Signed, signed_bytes
from service.sim.games import simulate
from tests.replays.forge import export_of, played_on
from tests.replays.test_bundle import TABLES, _manifest, _table, _write
from tests.replays.test_disowned_receipts import listing, receipt

FORK = 40


# --- single logs ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rotated():
    """A game during which the service rotated its key in the ordinary way (K0 signs versions 1-30, K1 the rest), the
    listing served while playing, and the game rewritten from version 40 (after the rotation)."""
    header, honest = export_of(simulate("free-parking", 2, bytes(range(32)), "rotated", ["greedy", "greedy"]))
    k0, k1, k2 = (Ed25519PrivateKey.generate() for _ in range(3))
    rotation = honest[29].at  # K0 retired when version 30 was the latest
    receipts = [receipt(k0 if v <= 30 else k1, header.game_id, honest, v) for v in range(1, len(honest) + 1)]
    forged_header, forged = played_on(header, honest, FORK, random.Random("another winner"))
    forged_header = msgspec.structs.replace(forged_header, receipt=receipt(k2, header.game_id, forged, len(forged)))
    return {"honest": (header, honest), "forged": (forged_header, forged), "receipts": receipts,
            "while_playing": listing((k0, 0, rotation), (k1, rotation, None)),
            # today: K1, which signed every receipt past the fork, is simply no longer listed (instead of back-dated)
            "today": listing((k0, 0, rotation), (k2, forged[-1].at, None)),
            "keys": (k0, k1, k2)}  # fmt: skip


def test_a_forgery_is_not_ok_when_todays_listing_drops_the_key_that_signed_the_receipts_after_the_fork(rotated):
    """The issue-29 attack with the old key dropped from GET /keys instead of back-dated (docs say a rotated key stays
    listed). The receipts of K0 (before the fork) agree and count; those of K1 (after it) were "set aside, not the
    service's under the keys given" — and the forgery was OK, exit 0. Today's listing leaves the time from K0's
    retirement to K2's listing, when the game was played, with no key signing: it dropped one, so K1's receipts that
    disagree contest the log; the honest log, which they agree with, still verifies."""
    header, envelopes = rotated["forged"]
    verdict = verify(header, envelopes, receipts=rotated["receipts"], keys=load_keys([rotated["today"]]))
    assert not verdict.ok, verdict.summary()
    assert verdict.status == "CONTESTED" and "a key was dropped from the listing" in verdict.contested, verdict.summary()
    honest_header, honest = rotated["honest"]
    assert verify(honest_header, honest, receipts=rotated["receipts"], keys=load_keys([rotated["today"]])).ok


def test_a_key_only_one_of_the_listings_given_names_does_not_reject_an_honest_log(rotated):
    """Given two listings (today's from GET /keys, and a "saved while playing" one a player hands over), a key that
    only one of them names is trusted in full and no disagreement is reported: a hostile player who adds a key of
    their own to "their" listing and signs a receipt with it has the honest log REJECTED, with nothing said about the
    listings disagreeing (``Keys.conflicts`` only compares windows of keys both name)."""
    header, envelopes = rotated["honest"]
    mine = Ed25519PrivateKey.generate()
    k0, k1, _ = rotated["keys"]
    rotation = envelopes[29].at
    genuine = listing((k0, 0, rotation), (k1, rotation, None))
    hostile = listing((k0, 0, rotation), (k1, rotation, None), (mine, 0, None))
    lie = receipt(mine, header.game_id, envelopes, 50)
    lie = msgspec.structs.replace(lie, head="ab" * 32)
    signed = Signed(**{f: getattr(lie, f) for f in Signed.__struct_fields__})
    lie = msgspec.structs.replace(lie, sig=mine.sign(signed_bytes(signed)).hex())
    verdict = verify(header, envelopes, receipts=[*rotated["receipts"], lie], keys=load_keys([genuine, hostile]))
    assert verdict.status != "REJECTED", verdict.summary()
    assert "disagree about key" in verdict.summary(), verdict.summary()


# --- bundles -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def forged_tournament():
    """A tournament whose table 1 was rewritten from version 40 (its manifest and standings made from the forged logs,
    as an organiser would), the honest table's receipts signed by the old key, and the listings."""
    exports = [_table(i, seats, bots) for i, (seats, bots) in enumerate(TABLES)]
    header, honest = exports[1]
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    receipts = [receipt(old, header.game_id, honest, v) for v in range(1, len(honest) + 1)]
    forged_header, forged = played_on(header, honest, FORK, random.Random("another winner"))
    parted = next(i for i, (a, b) in enumerate(zip(honest, forged)) if a.hash != b.hash)
    back_dated = forged[parted].at - 1
    forged_exports = [exports[0], (forged_header, forged)]
    return {"manifest": _manifest(forged_exports), "exports": forged_exports, "receipts": receipts,
            "while_playing": listing((old, 0, None)),
            "back_dated": listing((old, 0, back_dated), (new, back_dated + 1, None)),
            "dropped": listing((new, back_dated + 1, None))}  # fmt: skip


def _run(tmp_path, capsys, t, listing_name: str) -> tuple[int, list[str]]:
    bundle = _write(tmp_path, t["manifest"], t["exports"])
    (tmp_path / "receipts.json").write_bytes(msgspec.json.encode(t["receipts"]))
    (tmp_path / "keys.json").write_bytes(t[listing_name])
    capsys.readouterr()
    code = main(["verify", bundle, "--receipts", str(tmp_path / "receipts.json"), "--key", str(tmp_path / "keys.json")])
    return code, capsys.readouterr().out.splitlines()


def test_a_bundle_table_none_of_whose_receipts_checks_out_is_not_ok(forged_tournament, tmp_path, capsys):
    """The same forged table alone is REJECTED ("none signed by a key given", verify._check_receipts); inside a bundle
    ``_bundle_receipts`` has no such rule and prints "OK g-1: 0 receipts agree …", exit 0."""
    code, lines = _run(tmp_path, capsys, forged_tournament, "dropped")
    header, envelopes = forged_tournament["exports"][1]
    (tmp_path / "alone.ndjson").write_bytes(dumps(header, envelopes))
    alone = main(["verify", str(tmp_path / "alone.ndjson"), "--receipts", str(tmp_path / "receipts.json"),
                  "--key", str(tmp_path / "keys.json")])  # fmt: skip
    assert alone == 1, "the table alone is rejected"
    assert code != 0, lines


@pytest.mark.parametrize(("listing_name", "status", "code"), [("back_dated", "CONTESTED", 3), ("while_playing", "REJECTED", 1)])
def test_a_bundle_whose_receipts_refute_a_table_does_not_end_with_an_ok_verdict(forged_tournament, tmp_path, capsys,
                                                                                 listing_name, status, code):
    """The bundle's last line is its verdict (what ``-q`` and a script read): it says "OK tournament …: every log
    verified" while the exit status is 3 (CONTESTED) or 1 (REJECTED) for the receipts."""
    got, lines = _run(tmp_path, capsys, forged_tournament, listing_name)
    assert got == code, lines
    assert any(line.startswith(f"{status} g-1") for line in lines), lines
    assert lines[-1].startswith(status), lines
