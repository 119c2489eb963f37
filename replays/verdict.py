"""What ``replays verify`` says of a log: the verdict, and the divergence that rejects it (by seq, with what was
expected and what was found), each in words a person reads (``Verdict.summary``)."""

from __future__ import annotations

import msgspec

from .receipts import ReceiptReport


class Divergence(msgspec.Struct, frozen=True):
    """What was wrong at ``seq`` (0: the header): ``says`` names where ``expected`` and ``found`` come from
    ("re-deciding the command of seq 55 gives …, the log has …"); ``detail`` says more, when more is known."""

    seq: int
    what: str
    expected: str
    found: str
    says: tuple[str, str] = ("expected", "found")
    detail: str = ""

    def __str__(self) -> str:
        where = "header" if self.seq == 0 else f"seq {self.seq}"
        text = f"{where}: {self.what}: {self.says[0]} {self.expected}, {self.says[1]} {self.found}"
        return f"{text}; {self.detail}" if self.detail else text


class Verdict(msgspec.Struct, kw_only=True):
    game_id: str
    events: int
    head: str
    ok: bool = True
    divergence: Divergence | None = None
    contested: str = ""
    """Why the log is CONTESTED (not OK, not REJECTED): receipts the service signed with a key after its listed
    retirement disagree with the log — either the key leaked, or its listing was changed after the fact."""
    redecided: bool = False
    secrets_checked: int = 0
    secrets_unchecked: list[int] = []
    receipts: ReceiptReport | None = None
    notes: list[str] = []
    seeding: str = ""
    """How the seed was made, for a person (``seeds.describe``)."""
    game_seed: str | None = None
    """The seed the re-decided game drew from after its last seat (hex): a combined game's derived seed."""
    signed: str = ""
    """Which seats were keyed and that every move in their players' names is one they signed (``signatures``)."""
    bots: str = ""
    """How many bot moves were re-derived from their seats' own views, and which bots predate that (``bots``)."""

    @property
    def status(self) -> str:
        """OK, REJECTED or CONTESTED: what the command line prints first, and its exit status (0, 1, 3)."""
        return "OK" if self.ok else "CONTESTED" if self.contested and self.divergence is None else "REJECTED"

    def summary(self) -> str:
        if self.status == "CONTESTED":
            return f"CONTESTED {self.game_id}: {self.contested}" + "".join(f"; {n}" for n in self.notes)
        if not self.ok:
            return f"REJECTED {self.game_id}: {self.divergence}"
        parts = [f"OK {self.game_id}: {self.events} events, head {self.head[:12]}"]
        parts.append("every command re-decided" if self.redecided else "chain only (no seed: commands not re-decided)")
        parts.append(f"{self.secrets_checked} secrets checked")
        if self.secrets_unchecked:
            seqs = ranges(self.secrets_unchecked)
            parts.append(f"{len(self.secrets_unchecked)} secrets not checked, the seed is needed (seqs {seqs})")
        if self.receipts is not None:
            parts.append(receipts_part(self.receipts))
        if self.seeding:
            parts.append(self.seeding)
        if self.signed:
            parts.append(self.signed)
        if self.bots:
            parts.append(self.bots)
        return "; ".join(parts) + "".join(f"; {n}" for n in self.notes)


class Rejected(Exception):
    def __init__(self, divergence: Divergence) -> None:
        self.divergence = divergence


def fail(seq: int, what: str, expected: object, found: object, says: tuple[str, str] | None = None) -> None:
    raise Rejected(Divergence(seq, what, short(expected), short(found), says or ("expected", "found")))


def redecided(first_seq: int, seq: int) -> tuple[str, str]:
    """How a re-decided event and the recorded one are named."""
    command = "its command" if first_seq == seq else f"the command of seq {first_seq}"
    return f"re-deciding {command} gives", "the log has"


def short(value: object, limit: int = 240) -> str:
    text = value.decode() if isinstance(value, bytes | bytearray) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def receipts_part(report: ReceiptReport) -> str:
    text = f"{report.checked} receipts agree (the latest of version {report.latest})"
    text += ", each signature checked" if report.signatures else "; signatures not checked: give --key (GET /keys)"
    if report.set_aside:
        text += (f"; {len(report.set_aside)} receipts set aside, their signature not the service's under the keys given "
                 f"(versions {ranges(sorted(set(report.set_aside)))}): they prove nothing either way")
    if report.late:
        text += (f"; {len(report.late)} of them (versions {ranges(sorted(set(report.late)))}) signed by a key for a "
                 "version after its listed not_after, and agreeing with the log")
    text += "".join(f"; {conflict}" for conflict in report.listing_conflicts)
    return text + (f"; {report.other_games} receipts of other games set aside" if report.other_games else "")


def contested_part(report: ReceiptReport) -> str:
    """Why late receipts that disagree with the log leave it contested, in words."""
    d = report.first_contested
    assert d is not None
    keys = ", ".join(report.contested_keys)
    text = (f"{len(report.contested)} receipts of key {keys}, whose signature checks out but whose key is in doubt (dated "
            f"after its listed retirement, a key the listings given disagree about or none of them names, or under a "
            f"listing head a chain given no longer holds), disagree with the log at versions {ranges(sorted(set(report.contested)))} (the first, of "
            f"version {d.version}: {d.what}: the receipt says {d.receipt}, the log has {d.log}): either {keys} leaked or "
            "its listing was changed after the fact")
    return text + "".join(f"; {conflict}" for conflict in report.listing_conflicts)


def ranges(seqs: list[int]) -> str:
    out: list[str] = []
    start = prev = seqs[0]
    for s in seqs[1:] + [None]:  # type: ignore[list-item]
        if s is not None and s == prev + 1:
            prev = s
            continue
        out.append(f"{start}" if start == prev else f"{start}–{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(out)
