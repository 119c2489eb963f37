"""Evidence that settles a dispute (issue 15): every answer carries a receipt the service signed, and a log that
disagrees with any honest receipt is refused — even one rebuilt after the seed's reveal that verifies on its own."""

from __future__ import annotations

import random

import httpx
import msgspec
import pytest

from replays.receipts import load_keys, load_receipts
from replays.verify import verify
from service.events.export import load
from service.events.receipt import Receipt, signed_bytes
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import fill, new_game, play_from_legal, view
from tests.replays.forge import played_on, rechain, replace

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])


def keeping_receipts(api: httpx.AsyncClient) -> list[dict]:
    """Every receipt the client is answered with, as a player's page keeps them."""
    kept: list[dict] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        if response.headers.get("content-type", "").startswith("application/json"):
            body = response.json()
            if isinstance(body, dict) and body.get("receipt"):
                kept.append(body["receipt"])

    api.event_hooks["response"].append(keep)
    return kept


async def finished_game(api: httpx.AsyncClient, seed: int = 7) -> tuple[str, list[dict]]:
    kept = keeping_receipts(api)
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    await play_from_legal(api, game_id, tokens, random.Random(seed))
    await view(api, game_id, tokens[0])
    return game_id, kept


async def export_of(api: httpx.AsyncClient, game_id: str):
    r = await api.get(f"/games/{game_id}/export")
    assert r.status_code == 200, r.text
    return load(r.content)


async def public_keys(api: httpx.AsyncClient):
    r = await api.get("/keys")
    assert r.status_code == 200, r.text
    return load_keys([r.content])


def receipts_of(kept: list[dict]) -> list[Receipt]:
    return load_receipts(msgspec.json.encode(kept))


async def test_every_answer_carries_a_receipt_signed_over_its_version(api):
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    keys = await public_keys(api)
    turn = (await view(api, game_id))["turn"]
    v = await view(api, game_id, tokens[turn])
    answered = await api.post(f"/games/{game_id}/commands", json=v["legal"][0], headers=bearer(tokens[turn]))
    assert answered.status_code == 200, answered.text
    page = (await api.get(f"/games/{game_id}/events", headers=bearer(tokens[1]))).json()
    for body, version, head in ((v, v["version"], v["head"]), (answered.json(), answered.json()["version"], answered.json()["head"]),
                                (page, page["version"], page["head"])):
        receipt = msgspec.convert(body["receipt"], Receipt)
        assert (receipt.game_id, receipt.version, receipt.head) == (game_id, version, head)
        keys[receipt.key_id].verify(bytes.fromhex(receipt.sig), signed_bytes(receipt))
    created = (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).json()["events"][0]
    assert created["public"]["key_id"] == receipt.key_id  # GameCreated names the signing key
    # every reader of one version is shown the same signature: it is signed once, not per reader
    assert (await view(api, game_id, tokens[1]))["receipt"] == (await view(api, game_id))["receipt"]


async def test_an_honest_game_agrees_with_every_receipt_its_players_kept(api):
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    assert header.receipt is not None and header.receipt.version == header.version == len(envelopes)
    verdict = verify(header, envelopes, receipts=receipts_of(kept), keys=await public_keys(api))
    assert verdict.ok, verdict.summary()
    assert verdict.receipts.checked == len(kept) + 1 and verdict.receipts.latest == len(envelopes)  # + the export's own
    assert "each signature checked" in verdict.summary()


async def test_a_history_rebuilt_after_the_reveal_verifies_alone_and_is_refused_by_one_receipt(api):
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    keep = next(i for i in range(len(envelopes) // 2, len(envelopes)) if bytes(envelopes[i].command) != b"null")  # a batch's start
    forged_header, forged = played_on(header, envelopes, keep, random.Random(99))
    fork = next(i for i, (a, b) in enumerate(zip(forged, envelopes)) if a.hash != b.hash) + 1  # its first own version
    alone = verify(forged_header, forged)
    assert alone.ok and alone.redecided, alone.summary()  # chain, seed and every command hold: it proves nothing
    after_fork = [r for r in receipts_of(kept) if r.version >= fork][:1]  # any one honest receipt past the fork
    verdict = verify(forged_header, forged, receipts=after_fork, keys=await public_keys(api))
    assert not verdict.ok
    assert verdict.divergence.seq == after_fork[0].version and "receipt" in verdict.divergence.what
    # the forger cannot sign the forged head: the export's own receipt (copied from the honest one) disagrees too
    copied = replace(forged_header, receipt=header.receipt)
    assert not verify(copied, forged, receipts=[], keys=await public_keys(api)).ok


def batches(envelopes) -> list[range]:
    """The index ranges of the log's batches (one command's events each)."""
    starts = [i for i, e in enumerate(envelopes) if bytes(e.command) != b"null"]
    return [range(a, b) for a, b in zip(starts, [*starts[1:], len(envelopes)], strict=True)]


@pytest.mark.parametrize("tamper", ["at", "command_id"])
async def test_a_moved_time_or_changed_command_id_resealed_is_refused(api, tamper):
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    # a batch past the middle that sets no deadline (a deadline follows from `at`) and has room before the next one
    batch = next(b for b, after in zip(batches(envelopes), batches(envelopes)[1:])
                 if b.start > len(envelopes) // 2 and envelopes[after.start].at > envelopes[b.start].at
                 and not any(b"deadline_at" in bytes(envelopes[i].public) for i in b))
    if tamper == "at":
        envelopes = [replace(e, at=e.at + 1) if k in batch else e for k, e in enumerate(envelopes)]
    else:
        envelopes = [replace(e, command_id="c-forged") if k == batch.start else e for k, e in enumerate(envelopes)]
    header, envelopes = rechain(header, envelopes)
    header = replace(header, receipt=None)  # a forger drops the export's own receipt: it names the honest head
    assert verify(header, envelopes).ok, verify(header, envelopes).summary()  # consistent on its own
    verdict = verify(header, envelopes, receipts=receipts_of(kept), keys=await public_keys(api))
    first_shown = min(r.version for r in receipts_of(kept) if r.version > batch.start)
    assert not verdict.ok and verdict.divergence.seq == first_shown, verdict.summary()


async def test_a_receipt_altered_by_its_holder_proves_nothing(api):
    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    honest = receipts_of(kept)[-1]
    other = envelopes[honest.version - 2]
    altered = replace(honest, version=other.seq, head=other.hash, at=other.at)  # a true head, a signature of another
    keys = await public_keys(api)
    alone = verify(header, envelopes, receipts=[altered], keys=keys)  # the only evidence given is not the service's
    assert not alone.ok and "none signed by a key given" in alone.divergence.found, alone.summary()
    merged = verify(header, envelopes, receipts=[altered, *receipts_of(kept)], keys=keys)  # set aside, said so
    assert merged.ok and "1 receipts set aside" in merged.summary(), merged.summary()
    assert verify(header, envelopes, receipts=[altered]).ok  # without the key nothing says who signed it: said so
    assert "signatures not checked" in verify(header, envelopes, receipts=[altered]).summary()


async def test_receipts_are_absent_when_the_service_signs_nothing(store_kind, tmp_path):
    from tests.api.conftest import fresh_app, make_settings
    from tests.http import serving

    async with serving(fresh_app(make_settings(store_kind, tmp_path, receipts=False))) as client:
        game_id = await new_game(client, 2)
        assert (await view(client, game_id))["receipt"] is None
        assert (await client.get("/keys")).json() == {"keys": []}


async def test_the_cli_merges_several_players_receipts_and_names_the_version_a_forgery_breaks(api, tmp_path, capsys):
    from replays.__main__ import main as replays_main
    from service.events.export import dumps

    game_id, kept = await finished_game(api)
    header, envelopes = await export_of(api, game_id)
    ann, bob = tmp_path / "ann.json", tmp_path / "bob.ndjson"  # one keeps a JSON list, the other one receipt a line
    ann.write_bytes(msgspec.json.encode(kept[::2]))
    bob.write_bytes(b"\n".join(msgspec.json.encode(r) for r in kept[1::2]))
    keys = tmp_path / "keys.json"
    keys.write_bytes((await api.get("/keys")).content)
    honest, forged = tmp_path / "honest.ndjson", tmp_path / "forged.ndjson"
    honest.write_bytes(dumps(header, envelopes))
    keep = batches(envelopes)[len(batches(envelopes)) // 2].start
    forged_header, forged_log = played_on(header, envelopes, keep, random.Random(5))
    forged.write_bytes(dumps(forged_header, forged_log))
    fork = next(i for i, (a, b) in enumerate(zip(forged_log, envelopes)) if a.hash != b.hash) + 1
    evidence = ["--receipts", str(ann), "--receipts", str(bob), "--key", str(keys)]

    assert replays_main(["verify", str(honest), *evidence]) == 0
    assert f"{len(kept) + 1} receipts agree" in capsys.readouterr().out
    assert replays_main(["verify", str(forged)]) == 0  # alone, the forgery holds
    capsys.readouterr()
    assert replays_main(["verify", str(forged), *evidence]) == 1
    out = capsys.readouterr().out
    first = min(r["version"] for r in kept if r["version"] >= fork)
    assert out.startswith(f"REJECTED {game_id}: seq {first}: receipt: ") and "signed by the service" in out, out
    # the version, and both heads in full: the one the player's receipt was signed for, and the forgery's
    signed = next(r["head"] for r in kept if r["version"] == first)
    assert signed != forged_log[first - 1].hash
    assert f"the receipt of version {first}, signed by the service, says {signed}, the log has {forged_log[first - 1].hash}" in out, out
    bob.write_text("not a receipt")
    assert replays_main(["verify", str(honest), *evidence]) == 2


async def test_every_streamed_event_carries_the_receipt_of_its_own_version(api):
    from tests.api.test_live import read_stream

    game_id, _ = await finished_game(api)
    keys = await public_keys(api)
    messages, _ = await read_stream(api, game_id)
    events = [m for m in messages if "id" in m]
    header, envelopes = await export_of(api, game_id)
    assert len(events) == len(envelopes)
    for message, env in zip(events, envelopes, strict=True):
        receipt = msgspec.convert(message["receipt"], Receipt)
        assert (receipt.version, receipt.head, receipt.at) == (env.seq, env.hash, env.at)
        keys[receipt.key_id].verify(bytes.fromhex(receipt.sig), signed_bytes(receipt))
        assert message["data"]["hash"] == env.hash  # the rest of the message is the envelope as /events gives it
