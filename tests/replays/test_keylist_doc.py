"""The known-answer vector of receipts v2 in docs/fairness.md is what the code signs and verifies."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from replays.receipts import load_keys, signature_ok
from service.api.signing import public_bytes
from service.events.receipt import Receipt, key_id_of, signed_bytes

DOC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def _vector() -> dict[str, str]:
    text = DOC.read_text()
    block = text[text.index("private key (raw, hex)"):]
    block = block[: block.index("```")]
    return {m[1]: m[2] for m in re.finditer(r"^\s*(private key \(raw, hex\)|public key \(raw, hex\)|key_id|signed bytes|sig)\s+(\S.*)$", block, re.M)}


def test_the_receipt_v2_vector_in_the_docs_is_what_the_code_signs():
    v = _vector()
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v["private key (raw, hex)"]))
    assert public_bytes(key).hex() == v["public key (raw, hex)"] and key_id_of(public_bytes(key)) == v["key_id"]
    prefix, _, body = v["signed bytes"].partition("\\n")
    receipt = msgspec.convert({**msgspec.json.decode(body), "sig": v["sig"]}, Receipt)
    assert signed_bytes(receipt) == prefix.encode() + b"\n" + body.encode()
    assert key.sign(signed_bytes(receipt)).hex() == v["sig"]  # Ed25519 is deterministic
    assert signature_ok(receipt, load_keys([v["public key (raw, hex)"]]))
