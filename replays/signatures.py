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
from service.events.envelope import Envelope, actor_seat

from .verdict import fail


class Sitter(msgspec.Struct, frozen=True):
    """Who sits at a seat, as far as signatures go: ``seat_taken``'s player, of whom only these two matter here."""

    name: str = ""
    public_key: str | None = None


class SignatureReport(msgspec.Struct, kw_only=True):
    """``keyed``: each keyed player (name → their seat when they joined); ``unkeyed`` seats; ``checked``: commands of
    keyed seats whose signature holds."""

    keyed: list[tuple[str, int]] = []
    unkeyed: list[int] = []
    checked: int = 0

    def words(self) -> str:
        if not self.keyed:
            return "no seat keyed: moves are the service's word (no player signed theirs)"
        who = ", ".join(f"{name} (seat {seat})" for name, seat in self.keyed)
        text = f"every move in a keyed player's name is one they signed ({self.checked} commands of {who})"
        return text + (f"; seats {', '.join(map(str, self.unkeyed))} unkeyed" if self.unkeyed else "")


def check(envelopes: list[Envelope]) -> SignatureReport:
    """The report, or ``Rejected`` at the first command in a keyed player's name that they did not sign."""
    seats: dict[int, Sitter] = {}
    report = SignatureReport()
    for env in envelopes:
        if env.type in ("seat_taken", "places_traded"):
            _seated(env, seats, report)
        seat = actor_seat(env.actor)
        if seat is None or bytes(env.command) == b"null":
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
    report.unkeyed = sorted(s for s, sitter in seats.items() if sitter.public_key is None)
    return report


class _Seated(msgspec.Struct):
    seat: int
    player: Sitter | None = None
    other: int | None = None


def _seated(env: Envelope, seats: dict[int, Sitter], report: SignatureReport) -> None:
    """Who sits where after ``env``: a seat taken, or two players trading places (each keeps their key)."""
    try:
        event = msgspec.json.decode(env.public, type=_Seated)
    except msgspec.DecodeError as e:
        fail(env.seq, f"{env.type} (who sits where)", "a seat and its player", f"{bytes(env.public)[:120]!r} ({e})")
    if env.type == "places_traded":
        a, b, nobody = event.seat, event.other if event.other is not None else event.seat, Sitter("", None)
        seats[a], seats[b] = seats.get(b, nobody), seats.get(a, nobody)
    elif event.player is not None:
        seats[event.seat] = event.player
        if event.player.public_key is not None:
            report.keyed.append((event.player.name, event.seat))
