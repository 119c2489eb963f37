"""How a log's seed was made, read off its public parts, and checked against the revealed server seed (``docs/rng.md``).

A ``combined`` game's seed is ``HMAC-SHA256(key=server_seed, msg="free-parking/game-seed/v1" ‖ client_seed[0] ‖ … ‖
client_seed[n-1])``; each seat's client seed is public in its ``seat_taken`` from the start, brought by the player or,
for a seat that sent none (every bot), ``HMAC-SHA256(key=server_seed, msg="free-parking/client-seed/v1:<seat>")``.
Here, independently of the rules that dealt the game:

- ``seeding_of`` reads the seeding and every seat's client seed from ``game_created`` and the ``seat_taken`` events;
- ``check`` recomputes, from the server seed, every derived client seed and the game seed;
- ``check_claims`` holds the log to the client seeds the players say they sent (``--client-seed SEAT:HEX``);
- ``describe`` says it for a person: who contributed, or that the seed was fixed and the deal not drawn fairly.

Nothing here reads a secret: a redacted log (a seat's record, a running game's) says as much as a full one.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from service.events.envelope import Envelope
from service.rules import rng

HEX64 = re.compile(r"[0-9a-f]{64}")  # used with fullmatch: no "\n" after it (as "$" would let through)
Mode = Literal["legacy", "combined", "fixed", "duplicate", "tournament"]


class SeatSeed(msgspec.Struct, frozen=True, kw_only=True):
    """A seat as its ``seat_taken`` (at ``seq``) records it."""

    seat: int
    seq: int
    name: str
    bot: bool
    client_seed: str | None = None
    source: Literal["player", "server"] | None = None


class Seeding(msgspec.Struct, frozen=True, kw_only=True):
    mode: Mode
    chosen_by: Literal["admin", "player"] | None = None  # a fixed seed's chooser: a solitaire's player, else the admin
    seats: tuple[SeatSeed, ...] = ()
    expected_seats: int = 0

    @property
    def complete(self) -> bool:
        return len(self.seats) == self.expected_seats and self.expected_seats > 0

    @property
    def last_seq(self) -> int:
        """Where the seed is derived: the last ``seat_taken`` (1, ``game_created``, before any)."""
        return max((s.seq for s in self.seats), default=1)


class Mismatch(msgspec.Struct, frozen=True):
    """What ``verify`` turns into a ``Divergence``: at ``seq``, ``what`` was ``expected`` (``says[0]``) and ``found``."""

    seq: int
    what: str
    expected: str
    found: str
    says: tuple[str, str] = ("expected", "found")


def seeding_of(envelopes: list[Envelope]) -> Seeding | None:
    """The seeding the log records; ``None`` for a log that does not start with ``game_created``."""
    if not envelopes or envelopes[0].type != "game_created":
        return None
    created = msgspec.json.decode(envelopes[0].public)
    if not isinstance(created, dict):
        return None
    config = created.get("config") if isinstance(created.get("config"), dict) else {}
    mode = created.get("seeding", "legacy")
    mode = mode if mode in ("legacy", "combined", "fixed", "duplicate", "tournament") else "legacy"
    seats: dict[int, SeatSeed] = {}
    for env in envelopes:
        if env.type != "seat_taken":
            continue
        taken = msgspec.json.decode(env.public)
        if not isinstance(taken, dict) or not isinstance(taken.get("seat"), int):
            continue
        player = taken.get("player") if isinstance(taken.get("player"), dict) else {}
        seats.setdefault(taken["seat"], SeatSeed(
            seat=taken["seat"], seq=env.seq, name=str(player.get("name", "")), bot=bool(player.get("bot")),
            client_seed=taken.get("client_seed"), source=taken.get("client_seed_from"),
        ))
    chosen_by = None
    if mode == "fixed":
        chosen_by = "player" if config.get("seed_chosen") else "admin"
    expected = config.get("seats") if isinstance(config.get("seats"), int) else len(seats)
    return Seeding(mode=mode, chosen_by=chosen_by, seats=tuple(seats[k] for k in sorted(seats)), expected_seats=expected)


def check(seeding: Seeding, server_seed: bytes) -> tuple[bytes | None, Mismatch | None]:
    """The game seed a ``combined`` log's seats and ``server_seed`` give, or the first seat whose client seed is wrong:
    missing, not 32 bytes of lowercase hex, or said to be derived from the server's seed and not the one it derives."""
    if seeding.mode != "combined" or not seeding.complete:
        return None, None
    seeds = []
    for s in seeding.seats:
        if s.client_seed is None or not HEX64.fullmatch(s.client_seed):
            return None, Mismatch(s.seq, f"client seed of seat {s.seat}", "64 lowercase hex digits (every seat of a combined "
                                  "game has a client seed)", str(s.client_seed))
        if s.source not in ("player", "server"):
            return None, Mismatch(s.seq, f"client seed of seat {s.seat}", "client_seed_from player or server", str(s.source))
        if s.source == "server":
            derived = rng.client_seed_for(server_seed, s.seat).hex()
            if s.client_seed != derived:
                return None, Mismatch(s.seq, f"client seed of seat {s.seat} (derived from the server seed)", derived,
                                      s.client_seed, ("HMAC-SHA256(server seed, \"free-parking/client-seed/v1:"
                                                      f"{s.seat}\") is", "the log has"))
        seeds.append(bytes.fromhex(s.client_seed))
    return rng.game_seed(server_seed, seeds), None


def check_claims(seeding: Seeding, claims: dict[int, str]) -> Mismatch | None:
    """Each seat's client seed in the log must be the one its player says they sent, and must have gone into the deal:
    in a ``fixed`` or ``legacy`` game it is recorded and plays no part, so a claim held against one is refused."""
    if claims and seeding.mode != "combined":
        seat = min(claims)
        seq = next((s.seq for s in seeding.seats if s.seat == seat), 1)
        return Mismatch(seq, f"client seed of seat {seat} (did it go into the deal?)", "a combined game: the game's seed "
                        "derived from the server's and every seat's client seed", f"a {seeding.mode} game: the client seed "
                        "you sent played no part in the deal", ("you sent a client seed, so", "but this is"))
    by_seat = {s.seat: s for s in seeding.seats}
    for seat, sent in sorted(claims.items()):
        s = by_seat.get(seat)
        if s is None:
            return Mismatch(0, f"client seed of seat {seat}", f"{sent} (the one you sent)", "no seat_taken for that seat "
                            "in this log", ("you say you sent", "but there is"))
        if s.client_seed != sent:
            found = "none" if s.client_seed is None else s.client_seed
            found += " (derived from the server seed: the log says you sent none)" if s.source == "server" else ""
            return Mismatch(s.seq, f"client seed of seat {seat}", sent, found, (f"seat {seat} says it sent", "the log records"))
    return None


def check_legacy(seeding: Seeding, key_id: bool) -> Mismatch | None:
    """A ``legacy`` log is one from before client seeds and receipts: one that records a client seed, or the key that
    signs receipts, had its ``seeding`` taken out of ``game_created`` — a log whose server seed alone dealt while its
    players believed their seeds went in."""
    if seeding.mode != "legacy":
        return None
    with_seed = next((s for s in seeding.seats if s.client_seed is not None), None)
    if with_seed is None and not key_id:
        return None
    if with_seed is not None:
        what = "client seeds recorded, none of them in the deal (game_created records no seeding)"
        found = f"no seeding, yet seat {with_seed.seat}'s client seed is recorded (seq {with_seed.seq})"
    else:
        what, found = "seeding (game_created records none)", "no seeding, yet game_created names the key that signs receipts"
    return Mismatch(1, what, "combined or fixed: a log from after client seeds says how its seed was made", found)


def humans_without_seed(seeding: Seeding) -> list[SeatSeed]:
    """The seats of people (not bots) that brought no client seed of their own."""
    return [s for s in seeding.seats if not s.bot and s.source != "player"]


def describe(seeding: Seeding) -> str:
    """The seeding for a person: "combined: seats 0, 2 brought client seeds, seat 1 derived (bot)", or what else."""
    if seeding.mode == "fixed":
        return f"fixed seed (chosen by the {seeding.chosen_by}): the deal was not drawn fairly"
    if seeding.mode == "legacy":
        return "legacy seeding: the server's seed alone made the deal (a log from before client seeds)"
    if seeding.mode in ("duplicate", "tournament"):
        same = "every table of its round plays this deal" if seeding.mode == "duplicate" else "one table's own deal"
        return (f"{seeding.mode}: a tournament round's seed, {same}, derived from the tournament's seed (its entrants' "
                "client seeds and the committed server seed): check it with the tournament's bundle")
    brought = [s.seat for s in seeding.seats if s.source == "player"]
    derived = [s for s in seeding.seats if s.source != "player"]
    parts = []
    if brought:
        parts.append(f"seat{'s' * (len(brought) > 1)} {','.join(map(str, brought))} brought client seed{'s' * (len(brought) > 1)}")
    if derived:
        seats = ",".join(str(s.seat) for s in derived)
        who = ", ".join("bot" if s.bot else "a person who sent none" for s in derived)
        parts.append(f"seat{'s' * (len(derived) > 1)} {seats} derived ({who})")
    if not seeding.complete:
        parts.append(f"{seeding.expected_seats - len(seeding.seats)} seat(s) still open: the seed is not derived yet")
    text = "combined: " + (", ".join(parts) if parts else "no seat taken yet")
    if seeding.complete and not brought:
        text += " (no player brought one: the server's committed seed alone made the deal)"
    return text


def parse_claim(text: str) -> tuple[int, str]:
    """``SEAT:HEX`` as ``--client-seed`` takes it."""
    seat, sep, hex_ = text.partition(":")
    if not sep or not seat.strip().isdecimal():
        raise ValueError(f"{text!r} is not SEAT:HEX (e.g. 0:{'ab' * 32})")
    hex_ = hex_.strip().lower()
    if not HEX64.fullmatch(hex_):
        raise ValueError(f"the client seed of seat {seat.strip()} must be 64 hex digits, not {hex_!r}")
    return int(seat), hex_
