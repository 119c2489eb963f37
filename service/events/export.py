"""The exported log: an NDJSON header, then every envelope in order (API.md, ``GET /games/{id}/export``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from .envelope import Envelope, canonical
from .receipt import Receipt


class ExportHeader(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    game_id: str
    kind: str
    config: msgspec.Raw
    rules_version: int
    rng: str
    seed_commitment: str
    version: int
    head: str
    seed: str | None = None
    viewer: str | None = None
    receipt: Receipt | None = None  # the service's signature of ``version`` and ``head``, when it signs (fairness.md)
    seeding: str | None = None
    """How the seed is made, as ``game_created`` says (``combined`` or ``fixed``); absent for a ``legacy`` game. The
    server seed is ``seed`` (once revealed); a combined game's seed is derived from it and the client seeds its
    ``seat_taken`` events record (docs/rng.md), so the export needs nothing more to check the derivation."""


class ExportError(ValueError):
    """The file is not an exported log; ``line`` says where it stops making sense."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


_header = msgspec.json.Decoder(ExportHeader)
_envelope = msgspec.json.Decoder(Envelope)


def dump(header: ExportHeader, envelopes: Iterable[Envelope]) -> Iterator[bytes]:
    """Lines of the export, each ending in a newline."""
    yield canonical(header) + b"\n"
    for env in envelopes:
        yield canonical(env) + b"\n"


def dumps(header: ExportHeader, envelopes: Iterable[Envelope]) -> bytes:
    return b"".join(dump(header, envelopes))


def load(data: bytes) -> tuple[ExportHeader, list[Envelope]]:
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        raise ExportError(1, "the file is empty; an export starts with its header line")
    try:
        header = _header.decode(lines[0])
    except msgspec.DecodeError as e:
        raise ExportError(1, f"not an export header ({e})") from None
    envelopes = []
    for n, line in enumerate(lines[1:], start=2):
        try:
            envelopes.append(_envelope.decode(line))
        except msgspec.DecodeError as e:
            raise ExportError(n, f"not an event envelope ({e})") from None
    return header, envelopes
