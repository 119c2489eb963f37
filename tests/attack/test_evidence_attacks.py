"""Attacks on the evidence of issue 15 (receipts, keys, client seeds): a hostile player, a dishonest operator, someone
holding an export after the fact, a careless client. Each test is a hole the review found, fixed since: it failed
before the fix."""

from __future__ import annotations

import itertools
import os
import random
import socket
import stat
from pathlib import Path

import httpx
import msgspec
import pytest

from replays.__main__ import main as replays_main
from replays.receipts import ReceiptsUnreadable, load_keys, load_receipts
from replays.verify import verify
from service.api.app import create_app
from service.events.envelope import seed_commitment
from service.events.export import dumps
from tests.api.helpers import new_game
from tests.api.test_evidence import batches, export_of, finished_game, public_keys, receipts_of
from tests.attack.conftest import ADMIN_HEADERS, settings
from tests.replays.forge import played_on, replace
from tests.servers import free_port_in

_apps = itertools.count()
ROOT = Path(__file__).resolve().parents[2]
PORTS = range(18100, 18200)  # these tests' own loopback ports


def evidence_port() -> int:
    return free_port_in(PORTS)


@pytest.fixture
async def api(tmp_path):
    """An embedded-store service in this process (receipts on, rate limits off), on one of these tests' ports."""
    app = create_app(settings(tmp_path), name=f"free_parking_evidence_{next(_apps)}")
    app.config.TOUCHUP = False
    sock = socket.socket()
    sock.bind(("127.0.0.1", evidence_port()))
    server = await app.create_server(sock=sock, return_asyncio_server=True, access_log=False)
    await server.startup()
    await server.before_start()
    await server.after_start()
    await server.start_serving()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=30) as client:
            client.app = app
            yield client
    finally:
        await server.before_stop()
        server.close()
        await server.wait_closed()
        await server.after_stop()


async def forged_after_the_reveal(api):
    """An honest finished game (its export, the receipts its players kept, the service's keys) and the forgery its
    revealed seed allows: the first half kept, the rest played again by bots, resealed — it verifies alone."""
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    keep = batches(envelopes)[len(batches(envelopes)) // 2].start
    forged_header, forged = played_on(header, envelopes, keep, random.Random(5))
    fork = next(i for i, (a, b) in enumerate(zip(forged, envelopes)) if a.hash != b.hash) + 1
    assert verify(forged_header, forged).ok
    return game_id, kept, (header, envelopes), (forged_header, forged), fork


# --- the verifier -------------------------------------------------------------------------------------------------


async def test_an_export_whose_own_header_receipt_disagrees_with_it_is_refused_even_without_a_key(api):
    """Someone holding an export rewrites it after the reveal and keeps the honest header (receipt and all): the
    header's receipt names the honest head at that version, the log another. No key is needed to see that the file
    contradicts itself (before the fix the plain verdict was OK)."""
    _, _, (header, _), (forged_header, forged), _ = await forged_after_the_reveal(api)
    copied = replace(forged_header, receipt=header.receipt)
    v = copied.receipt.version
    # the header's receipt refutes its own log: past its end (the forged game ended sooner), or another head there
    assert v > len(forged) or forged[v - 1].hash != copied.receipt.head
    verdict = verify(copied, forged)
    assert not verdict.ok and "receipt" in verdict.divergence.what, verdict.summary()


@pytest.mark.parametrize("content", [b"", b"\n\n", b'[{"receipt": null}]', b"[]", b"other-game"])
async def test_receipts_files_that_give_no_receipt_of_the_game_do_not_pass_as_checked(api, tmp_path, capsys, content):
    """A careless client's file (empty, blank lines, the answers of a service that signed nothing, another game's
    receipts) is given with --key: the player believes their receipts were checked against the log. Against a forgery
    (header receipt stripped, as a forger would) the verdict is OK today, '0 receipts agree' or '1 receipts agree'
    (the header's), exit 0. It must not pass as a check of that player's evidence: exit 2 (nothing read) or 1."""
    game_id, kept, honest, (forged_header, forged), _ = await forged_after_the_reveal(api)
    log = tmp_path / "forged.ndjson"
    log.write_bytes(dumps(forged_header, forged))
    keys = tmp_path / "keys.json"
    keys.write_bytes((await api.get("/keys")).content)
    if content == b"other-game":  # the player's receipts of another game, and the honest export with its own receipt
        other, other_kept = await finished_game(api, seed=11)
        content = msgspec.json.encode(other_kept)
        log.write_bytes(dumps(*honest))
    receipts = tmp_path / "mine.json"
    receipts.write_bytes(content)
    code = replays_main(["verify", str(log), "--receipts", str(receipts), "--key", str(keys)])
    out = capsys.readouterr().out
    assert code != 0, out


async def test_a_forged_receipt_merged_in_does_not_hide_the_genuine_one_that_refutes_the_log(api):
    """Two players' files merged; one (hostile, or careless) holds a receipt with a bad signature at an early version.
    The verdict then names that receipt — "the signature does not check out" — and not the genuine, signed receipt after
    the fork that refutes the forged log: the operator points at the bad signature and says the evidence is forged."""
    _, kept, _, (forged_header, forged), fork = await forged_after_the_reveal(api)
    keys = await public_keys(api)
    genuine = receipts_of(kept)
    bad = replace(genuine[0], sig="00" * 64)
    verdict = verify(forged_header, forged, receipts=[bad, *genuine], keys=keys)
    assert not verdict.ok
    first_after_fork = min(r.version for r in genuine if r.version >= fork)
    assert verdict.divergence.what == "receipt: head" and verdict.divergence.seq == first_after_fork, verdict.summary()


async def test_a_receipt_that_is_not_the_services_is_set_aside_not_held_against_an_honest_log(api):
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    genuine = receipts_of(kept)
    made_up = replace(genuine[-1], sig="ab" * 64)
    verdict = verify(header, envelopes, receipts=[made_up, *genuine], keys=await public_keys(api))
    assert verdict.ok, verdict.summary()
    assert "signature" in verdict.summary()  # said, as a receipt set aside: not evidence of anything


def test_a_legacy_log_with_client_seeds_does_not_verify_the_players_seed():
    """A dishonest operator runs a service that writes `game_created` without `seeding` (legacy: the server seed alone
    deals, so it can be ground before the commitment) while players still send client seeds, recorded and ignored.
    `--client-seed` then passes and the verdict calls it "a log from before client seeds", exit 0. A legacy log has
    no client seeds (docs/events.md): one that does, or a `--client-seed` held against a log whose seeding ignores
    it, must not be OK."""
    from tests.replays.forge import export_of as sim_export
    from tests.replays.test_seeds import ANN_SEED, CAT_SEED, SERVER_SEED, finished

    sim = finished(seeding="legacy", client_seeds={0: ANN_SEED, 2: CAT_SEED})
    header, envelopes = sim_export(sim)
    verdict = verify(header, envelopes, commitment=seed_commitment(SERVER_SEED), client_seeds={0: ANN_SEED.hex()})
    assert not verdict.ok, verdict.summary()
    assert "client seed" in verdict.divergence.what


@pytest.mark.parametrize("content", ["[" * 200_000 + "]" * 200_000])
@pytest.mark.parametrize("option", ["--receipts", "--key"])
def test_a_deeply_nested_receipts_or_keys_file_is_unreadable_not_a_traceback(tmp_path, capsys, option, content):
    """Fixed here: msgspec raises RecursionError (not DecodeError) past its depth; it escaped as a traceback, exit 1
    (read as "rejected"). Now exit 2 with one line, like any other file that is not receipts or keys."""
    from tests.replays.forge import export_of as sim_export
    from tests.replays.test_seeds import finished

    log = tmp_path / "log.ndjson"
    log.write_bytes(dumps(*sim_export(finished(seats=2))))
    evil = tmp_path / "evil.json"
    evil.write_text(content)
    assert replays_main(["verify", str(log), option, str(evil)]) == 2
    assert "UNREADABLE" in capsys.readouterr().out
    with pytest.raises(ReceiptsUnreadable):
        (load_receipts if option == "--receipts" else lambda b: load_keys([b]))(evil.read_bytes())


# --- the keys -----------------------------------------------------------------------------------------------------


def test_a_keyring_listing_a_public_key_that_is_not_the_signing_keys_refuses_the_start(tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.api.app import StartupRefused, receipts_for
    from service.api.signing import KEYRING, KeyringFile, public_bytes
    from service.events.receipt import PublicKey, key_id_of

    signing, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    kid = key_id_of(public_bytes(signing))
    config = settings(tmp_path)
    config.keys_folder.mkdir(parents=True)
    ring = KeyringFile(keys=[PublicKey(key_id=kid, public_key=public_bytes(other).hex(), not_before=0)],
                       private_key=signing.private_bytes_raw().hex(), current=kid)
    (config.keys_folder / KEYRING).write_bytes(msgspec.json.encode(ring))
    (config.keys_folder / KEYRING).chmod(0o600)  # refused for its listing, not for its mode
    try:
        receipts = receipts_for(config)
    except StartupRefused:
        return
    load_keys([msgspec.json.encode(receipts.keyring.listing())])  # what a player's verifier does with GET /keys


def test_a_keyring_readable_by_others_is_refused_or_made_private(tmp_path):
    from service.api.app import StartupRefused, receipts_for
    from service.api.signing import KEYRING

    config = settings(tmp_path)
    receipts_for(config)
    ring = config.keys_folder / KEYRING
    os.chmod(ring, 0o666)
    try:
        receipts_for(config)
    except StartupRefused:
        return
    assert stat.S_IMODE(ring.stat().st_mode) & 0o077 == 0


# --- client seeds -------------------------------------------------------------------------------------------------


async def test_a_client_seed_with_a_trailing_newline_is_refused_and_nothing_written(api):
    """Fixed here: msgspec's `pattern` is Python's re.search, whose `$` also matches before a final newline, so
    "<64 hex>\\n" was taken (201) and recorded as the seat's client seed: not the seed the player holds, so their own
    `--client-seed SEAT:HEX` then refused an honest log. The schema now bounds its length too."""
    game_id = await new_game(api, 2)
    before = (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["version"]
    r = await api.post(f"/games/{game_id}/seats", json={"name": "Ann", "client_seed": "ab" * 32 + "\n"})
    assert r.status_code == 400, r.text
    assert (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["version"] == before


def test_the_web_client_brings_a_client_seed_when_it_takes_a_seat():
    """The claim "nobody, not even the operator, can choose a deal" needs a seat to bring a seed of its own: the web
    client's `join` sends a `client_seed` it made and kept (`clientSeedFor`) before the request, so a table of web
    players is `combined` with their seeds, and a join tried again sends the same one (the review found `join` sent
    `{name}` only: every seat derived, the server seed grindable). The browser test of an honest game shows the seed
    in the log as the player's (tests/web/test_evidence_browser.py)."""
    source = (ROOT / "service" / "web" / "api.js").read_text()
    join = source[source.index("export async function join"):]
    join = join[: join.index("\n}\n")]
    assert "client_seed: clientSeed" in join
    assert join.index("clientSeedFor(gameId)") < join.index("await post(")  # kept before it is sent
