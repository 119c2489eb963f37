"""The known-answer vectors of docs/signed-commands.md, against the code: what a client sends, decoded as the service
decodes it, is signed as exactly the bytes the doc gives, and the doc's signature is the doc's key's over them — so a
client written from the doc alone signs what the service and ``replays verify`` check."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.events.command_sig import signature_holds, signed_command
from service.rules.engine import rules_for

DOC = Path(__file__).parents[2] / "docs" / "signed-commands.md"
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUBLIC = KEY.public_key().public_bytes_raw().hex()


def vectors() -> list[dict]:
    return [msgspec.json.decode(block) for block in re.findall(r"```json vector\n(.*?)```", DOC.read_text(), re.S)]


def test_the_doc_gives_vectors_of_every_kind_and_its_key():
    assert {v["kind"] for v in vectors()} == {"free-parking", "monopoly", "solitaire"}
    assert PUBLIC in DOC.read_text()


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v["kind"])
def test_each_vector_is_signed_over_the_bytes_the_doc_gives(vector):
    codec = rules_for(vector["kind"]).CODEC
    command = codec.command_body(codec.decode_command(msgspec.json.encode(vector["sent"])))
    signed = signed_command(vector["game_id"], vector["expected_version"], vector["command_id"], command)
    assert signed == vector["signed"].encode()
    assert KEY.sign(signed).hex() == vector["sig"]  # Ed25519 is deterministic: one signature per key and message
    assert signature_holds(PUBLIC, vector["sig"], signed)
    assert not signature_holds(PUBLIC, vector["sig"], signed.replace(b'"expected_version":', b'"expected_version":1'))
