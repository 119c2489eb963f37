"""The records of a tournament over rounds (``rounds.py``): what is written once at its creation, each entrant, and its
start — and the reads that put them together from the tournament's state hash (``service/store/rounds.py``)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from service.rules.rounds import Draw
from service.rules.rounds.bundle import EntrantLine


class RoundsRecord(msgspec.Struct, kw_only=True):
    """The stored record of a tournament over rounds (``ns:tournament:{pN}:<id>``), written once."""

    tournament_id: str
    format: Literal["rounds"] = "rounds"
    name: str
    kind: str
    options: dict[str, Any]
    rounds: int
    table_size: int
    duplicate: bool
    open: bool
    bot: str
    created_at: int
    server_seed: str  # hex: secret until every round has finished
    seed_commitment: str


class Entrant(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An entrant as stored (``e:<player id>`` of the tournament's state)."""

    player_id: str
    name: str
    client_seed: str  # hex
    seed_from: Literal["player", "server"]
    public_key: str | None = None
    account: str = "person"
    entered_at: int = 0


class Started(msgspec.Struct, kw_only=True):
    """The start: the entrants in the draw (by id) and the tournament's seed (hex: secret until the end)."""

    entrants: list[str]
    seed: str
    at: int


class DrawRecord(msgspec.Struct, kw_only=True):
    """A round's draw as stored (``draw:<round>``): the tables and the game each is played as."""

    draw: Draw
    games: list[str]


_record = msgspec.json.Decoder(RoundsRecord)
_entrant = msgspec.json.Decoder(Entrant)
_started = msgspec.json.Decoder(Started)
encode = msgspec.json.Encoder().encode
_draw = msgspec.json.Decoder(DrawRecord)


def is_rounds(raw: bytes) -> bool:
    return msgspec.json.decode(raw, type=_Format).format == "rounds"


class _Format(msgspec.Struct):
    format: str = "tables"


def decode_record(raw: bytes) -> RoundsRecord:
    return _record.decode(raw)


async def entrants_of(store: Any, tournament_id: str) -> tuple[dict[str, Entrant], Started | None, dict[str, bytes]]:
    """The tournament's entrants (by id), its start if it started, and its whole state."""
    state = await store.tournament_state(tournament_id)
    entrants = {f[2:]: _entrant.decode(v) for f, v in state.items() if f.startswith("e:")}
    started = _started.decode(state["started"]) if "started" in state else None
    return entrants, started, state




def draws_of(state: dict[str, bytes]) -> list[DrawRecord]:
    """The rounds drawn so far, in order (a round is drawn only once the one before it has finished)."""
    out = []
    while f"draw:{len(out) + 1}" in state:
        out.append(_draw.decode(state[f"draw:{len(out) + 1}"]))
    return out


# --- answers -----------------------------------------------------------------------------------------------


class SeatSummary(msgspec.Struct, kw_only=True):
    seat: int
    player_id: str | None
    name: str
    bot: bool


class RoundTable(msgspec.Struct, kw_only=True):
    table: int
    game_id: str
    status: Literal["waiting", "playing", "finished"]
    seats: list[SeatSummary]


class RoundSummary(msgspec.Struct, kw_only=True):
    round: int
    status: Literal["playing", "finished"]
    tables: list[RoundTable]


class RoundsAnswer(msgspec.Struct, kw_only=True, tag="rounds", tag_field="format"):
    """A tournament over rounds: ``status`` ``entry`` (open to entry, or waiting for its start), ``playing`` or
    ``finished``; its entrants with their client seeds (public: the seed they go into is the server's secret until the
    end), each round drawn so far with its tables and seats (a bot's seat has no ``player_id``)."""

    tournament_id: str
    name: str
    kind: str
    options: dict[str, Any]
    rounds: int
    table_size: int
    duplicate: bool
    entry: Literal["open", "named"]
    bot: str
    created_at: int
    seed_commitment: str
    status: Literal["entry", "playing", "finished"]
    entrants: list[EntrantLine]
    drawn: list[RoundSummary]
