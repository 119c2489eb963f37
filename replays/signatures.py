"""Every move in a keyed player's name, checked against that player's own key (docs/signed-commands.md).

``seat_taken`` records the key a seat's player acts with (``player.public_key``); a trade of places (``places_traded``)
moves each player, and their key, to the other seat. Every command the log attributes to a seat whose player is keyed
must carry that player's signature over the bytes ``service.events.command_sig`` rebuilds from the log alone. The
service refuses an unsigned command from a keyed seat, so one in the log is a move somebody else made in the player's
name — the operator, writing straight into the store. Read from the public parts only: a log without its seed (a
game still going on) is checked as fully as a finished one.
"""

from __future__ import annotations

import msgspec

from service.events.command_sig import signature_holds, signed_in
from service.events.common import Close, Create, TakeSeat, Timeout
from service.events.envelope import Envelope

from .verdict import fail


class Sitter(msgspec.Struct, frozen=True):
    """Who sits at a seat, as far as signatures go: ``seat_taken``'s player, of whom only these matter here."""

    name: str = ""
    public_key: str | None = None
    bot: str | None = None  # a server bot's seat is never keyed: its moves are checked by re-deriving them (bots.py)


class SignatureReport(msgspec.Struct, kw_only=True):
    """``keyed``: each keyed player (name → their seat when they joined); ``unkeyed``: people's seats without a key (at
    the end); ``checked``: commands of keyed seats whose signature holds."""

    keyed: list[tuple[str, int]] = []
    unkeyed: list[int] = []
    checked: int = 0

    def words(self) -> str:
        if not self.keyed and not self.unkeyed:
            return ""  # bots alone: nobody to sign
        if not self.keyed:
            return "no seat keyed: moves are the service's word (no player signed theirs)"
        who = ", ".join(f"{name} (seat {seat})" for name, seat in self.keyed)
        text = f"every move in a keyed player's name is one they signed ({self.checked} commands of {who})"
        return text + (f"; seats {', '.join(map(str, self.unkeyed))} unkeyed" if self.unkeyed else "")


def check(envelopes: list[Envelope], claims: dict[int, str] | None = None) -> SignatureReport:
    """The report, or ``Rejected`` at the first command in a keyed player's name that they did not sign. ``claims``:
    the key each of these seats' players says they joined it with (seat → 64 hex digits, ``--player-key``): its
    ``seat_taken`` must record exactly that one, or an operator who left the key out (or put their own in) and signed
    nothing (or everything) themselves would go unseen — the log alone cannot tell, nor can receipts it signed."""
    seats: dict[int, Sitter] = {}
    report = SignatureReport()
    claims = {seat: key.strip().lower() for seat, key in (claims or {}).items()}
    for env in envelopes:
        if env.type in ("seat_taken", "places_traded"):
            _seated(env, seats, report, claims)
        if bytes(env.command) == b"null":  # a batch's later event: only the command's own envelope carries its sig
            if env.sig is not None:
                fail(env.seq, "signature (on an event no command opened)", "no sig", f"sig {env.sig[:16]}…")
            continue
        seat = _seat(env)
        if seat is None:  # the server's own command: nobody signs it, and a seat's move is never one
            tag = _tag(env)
            if env.sig is not None or tag not in SERVER_TAGS:
                fail(env.seq, "command of the server (only the service's own commands are)",
                     f"one of {', '.join(sorted(SERVER_TAGS))}, unsigned",
                     f"{tag}{f', sig {env.sig[:16]}…' if env.sig is not None else ''}")
            continue
        sitter = seats.get(seat)
        if sitter is None or sitter.public_key is None:
            if env.sig is not None:
                fail(env.seq, "signature (on a command of an unkeyed seat)", f"no sig: seat {seat} has no key",
                     f"sig {env.sig[:16]}…")
            continue
        message = signed_in(env)
        if message is None or not signature_holds(sitter.public_key, env.sig, message):
            found = "no signature" if env.sig is None else f"a signature ({env.sig[:16]}…) that is not theirs over it"
            fail(env.seq, f"signature (a move in {sitter.name}'s name, seat {seat}, they did not sign)",
                 f"the signature of {sitter.name}'s key {sitter.public_key[:16]}… over the command and its id at "
                 f"version {env.seq - 1}", found)
        report.checked += 1
    report.unkeyed = sorted(s for s, sitter in seats.items() if sitter.public_key is None and not sitter.bot)
    taken = {_seat_of(env) for env in envelopes if env.type == "seat_taken"}
    for seat in sorted(set(claims) - taken):
        fail(0, f"key of seat {seat}", f"{claims[seat]} (the key you say you joined with)", "no seat_taken for that "
             "seat in this log", ("you say you joined with", "but there is"))
    return report


SERVER_TAGS = frozenset(c.__struct_config__.tag for c in (Create, TakeSeat, Timeout, Close))


class _Tagged(msgspec.Struct):
    type: str


def _seat(env: Envelope) -> int | None:
    """The seat ``env``'s actor names (``None``: the server); a log without its seed is not re-decided, so an actor
    of any other form is refused here rather than read as a seat (or crash the verifier)."""
    if env.actor == "server":
        return None
    seat = env.actor.removeprefix("seat:")
    if not env.actor.startswith("seat:") or not (seat.isascii() and seat.isdecimal()) or len(seat) > 3:
        fail(env.seq, "actor", "server or seat:<n>", env.actor)
    return int(seat)


def _tag(env: Envelope) -> str:
    try:
        return msgspec.json.decode(env.command, type=_Tagged).type
    except msgspec.DecodeError as e:
        fail(env.seq, "command", "a command", f"{bytes(env.command)[:120]!r} ({e})")
    raise AssertionError  # unreachable: fail raises


def _seat_of(env: Envelope) -> int:
    return msgspec.json.decode(env.public, type=_Seated).seat


class _Seated(msgspec.Struct):
    seat: int
    player: Sitter | None = None
    other: int | None = None


def _seated(env: Envelope, seats: dict[int, Sitter], report: SignatureReport, claims: dict[int, str]) -> None:
    """Who sits where after ``env``: a seat taken, or two players trading places (each keeps their key). A key keys
    one seat of a table: the signed bytes name no seat, so with one key at two seats a signature would not say which
    of them moved (the service refuses such a join, 409 ``already_seated``)."""
    try:
        event = msgspec.json.decode(env.public, type=_Seated)
    except msgspec.DecodeError as e:
        fail(env.seq, f"{env.type} (who sits where)", "a seat and its player", f"{bytes(env.public)[:120]!r} ({e})")
    if env.type == "places_traded":
        a, b, nobody = event.seat, event.other if event.other is not None else event.seat, Sitter("", None)
        seats[a], seats[b] = seats.get(b, nobody), seats.get(a, nobody)
    elif event.player is not None:
        key = event.player.public_key
        if event.seat in claims and key != claims[event.seat]:
            fail(env.seq, f"key of seat {event.seat} (recorded when the seat was taken)",
                 f"{claims[event.seat]} (the key you say you joined with)", key or "no key",
                 ("you say you joined with", "but the log records"))
        other = next((s for s, sitter in seats.items() if key is not None and sitter.public_key == key), None)
        if other is not None:
            fail(env.seq, f"key of seat {event.seat} (a key keys one seat: the signed bytes name none)",
                 "a key no other seat holds", f"{key[:16]}…, the key of seat {other}")
        seats[event.seat] = event.player
        if event.player.public_key is not None:
            report.keyed.append((event.player.name, event.seat))
