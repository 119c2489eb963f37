"""The client's signatures (client/free_parking_client/signing.py, commands.py): the known-answer vectors of
docs/signed-commands.md, met by the client alone; the defaults it drops are the service's; the key file is its
owner's only."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import msgspec
import pytest

from free_parking_client import PlayerKey, command_body, signed_command
from free_parking_client.commands import DEFAULTS, Kept
from service.api.kinds import KINDS
from service.events.base import Command

DOC = Path(__file__).parents[2] / "docs" / "signed-commands.md"
TRANSPORT = {f.name for f in msgspec.structs.fields(Command)}  # command_id, expected_version, sig: not the command


def vectors() -> list[dict]:
    return [msgspec.json.decode(block) for block in re.findall(r"```json vector\n(.*?)```", DOC.read_text(), re.S)]


def test_the_doc_gives_a_vector_of_every_kind():
    assert {v["kind"] for v in vectors()} == {"free-parking", "monopoly", "solitaire"}


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v["kind"])
def test_the_client_signs_each_vector_as_the_doc_says(vector):
    key = PlayerKey.from_seed(bytes(range(32)))
    body = command_body(vector["kind"], vector["sent"])
    signed = signed_command(vector["game_id"], vector["expected_version"], vector["command_id"], body)
    assert signed == vector["signed"].encode()
    assert key.sign(vector["game_id"], vector["expected_version"], vector["command_id"], body) == vector["sig"]


def _defaults(struct: type) -> dict:
    """Each field of ``struct`` (a command, or a value inside one) with a default, and that default as JSON reads it;
    a default that is itself a struct as ``Kept`` of its own defaults."""
    out = {}
    for field in msgspec.structs.fields(struct):
        if field.name in TRANSPORT or field.default is msgspec.NODEFAULT:
            continue
        default = field.default
        out[field.name] = Kept(_defaults(type(default))) if isinstance(default, msgspec.Struct) else msgspec.json.decode(msgspec.json.encode(default))
    return out


def test_the_defaults_the_client_drops_are_the_services():
    """Every field of every command any kind takes that has a default is in the client's table with that default
    (and nothing else is): a command sent with a default gets the same signed bytes as the service rebuilds."""
    service = {name: {c.__struct_config__.tag: d for c in kind.commands if (d := _defaults(c))} for name, kind in KINDS.items()}
    assert {k: v for k, v in DEFAULTS.items() if v} == {k: v for k, v in service.items() if v}
    for kind, types in service.items():
        for name, fields in types.items():
            assert all(isinstance(DEFAULTS[kind][name][f], Kept) == isinstance(v, Kept) for f, v in fields.items())


def test_a_default_is_dropped_only_as_the_service_decodes_it():
    assert command_body("free-parking", {"type": "choose", "target": 0, "card": None}) == {"type": "choose", "target": 0}
    assert command_body("monopoly", {"type": "offer_trade", "to": 1, "give": {}, "get": {"cash": 0, "squares": [2]}}) == \
        {"type": "offer_trade", "to": 1, "give": {}, "get": {"squares": [2]}}
    assert command_body("monopoly", {"type": "sell_building", "square": 3, "levels": [], "command_id": "x"}) == \
        {"type": "sell_building", "square": 3}
    with pytest.raises(ValueError):
        command_body("monopoly", {"kind": "roll"})


def test_a_key_is_saved_for_its_owner_alone_and_read_back(tmp_path):
    path = tmp_path / "me.key"
    key = PlayerKey.load_or_create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert PlayerKey.load(path).public_key == key.public_key == PlayerKey.load_or_create(path).public_key
    with pytest.raises(FileExistsError):
        PlayerKey.generate().save(path)  # a key in use is never overwritten
    assert PlayerKey.load(path).public_key == key.public_key
    (tmp_path / "bad.key").write_text("not a key")
    with pytest.raises(ValueError, match="no player key"):
        PlayerKey.load(tmp_path / "bad.key")
