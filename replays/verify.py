"""Verify an exported log offline: the chain, the secrets, the seed, and every decision re-made.

1. The seed (when the log has it) hashes to the commitment the players were shown.
2. Each envelope's hash chains to the one before; seqs run 1, 2, 3… without a gap; time never goes back.
3. Each recorded secret matches its digest.
4. From ``initial(config, seed)``, every recorded command is decided again and must yield exactly the
   recorded events — public bytes equal, secret bytes (or, in a redacted log, the secret's digest) equal.

The first divergence is reported by seq, with what was expected and what was found.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

import msgspec

from service.events.envelope import (
    GENESIS,
    NULL,
    Envelope,
    actor_seat,
    body_of,
    canonical,
    chain_hash,
    has_secret,
    secret_digest,
    seed_commitment,
)
from service.events.export import ExportHeader
from service.rules.engine import Game, rules_for
from service.rules.errors import RuleViolation


class Divergence(msgspec.Struct, frozen=True):
    seq: int
    what: str
    expected: str
    found: str

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.what}: expected {self.expected}, found {self.found}"


class Verdict(msgspec.Struct, kw_only=True):
    game_id: str
    events: int
    head: str
    ok: bool = True
    divergence: Divergence | None = None
    redecided: bool = False
    secrets_checked: int = 0
    secrets_unchecked: list[int] = []
    notes: list[str] = []

    def summary(self) -> str:
        if not self.ok:
            return f"REJECTED {self.game_id}: {self.divergence}"
        parts = [f"OK {self.game_id}: {self.events} events, head {self.head[:12]}"]
        parts.append("every command re-decided" if self.redecided else "chain only (no seed: commands not re-decided)")
        parts.append(f"{self.secrets_checked} secrets checked")
        if self.secrets_unchecked:
            parts.append(f"{len(self.secrets_unchecked)} secrets withheld, not checked (seqs {_ranges(self.secrets_unchecked)})")
        return "; ".join(parts) + "".join(f"; {n}" for n in self.notes)


class _Rejected(Exception):
    def __init__(self, divergence: Divergence) -> None:
        self.divergence = divergence


def _fail(seq: int, what: str, expected: object, found: object) -> None:
    raise _Rejected(Divergence(seq, what, _short(expected), _short(found)))


def _short(value: object, limit: int = 240) -> str:
    text = value.decode() if isinstance(value, bytes | bytearray) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verify(
    header: ExportHeader,
    envelopes: list[Envelope],
    *,
    commitment: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> Verdict:
    """Check the log; ``commitment`` is the seed commitment a player was shown at the start, if they kept it."""
    verdict = Verdict(game_id=header.game_id, events=len(envelopes), head=envelopes[-1].hash if envelopes else GENESIS)
    try:
        seed = _check_header(header, envelopes, commitment)
        _check_chain(header, envelopes, seed, verdict)
        if seed is None:
            verdict.notes.append("the seed is not in this log; it is revealed when the game ends")
        else:
            _redecide(header, envelopes, seed, progress)
            verdict.redecided = True
            # Re-deciding reproduced every withheld secret and matched it to its digest.
            verdict.secrets_checked += len(verdict.secrets_unchecked)
            verdict.secrets_unchecked = []
    except _Rejected as r:
        verdict.ok, verdict.divergence = False, r.divergence
    return verdict


def _check_header(header: ExportHeader, envelopes: list[Envelope], commitment: str | None) -> bytes | None:
    try:
        rules_for(header.kind)
    except ValueError as e:
        _fail(0, "header kind", "a known game kind", str(e))
    if commitment is not None and commitment != header.seed_commitment:
        _fail(0, "seed commitment", f"{commitment} (the one you were shown)", header.seed_commitment)
    if envelopes:
        first = msgspec.json.decode(envelopes[0].public)
        if first.get("seed_commitment") != header.seed_commitment:
            _fail(1, "seed commitment in game_created", header.seed_commitment, first.get("seed_commitment"))
    if header.seed is None:
        return None
    try:
        seed = bytes.fromhex(header.seed)
    except ValueError:
        _fail(0, "seed", "hex digits", header.seed)
    if seed_commitment(seed) != header.seed_commitment:
        _fail(0, "seed", f"a seed whose sha256 is {header.seed_commitment}", f"sha256 {seed_commitment(seed)}")
    return seed


def _check_chain(header: ExportHeader, envelopes: list[Envelope], seed: bytes | None, verdict: Verdict) -> None:
    prev, last_at = GENESIS, 0
    for i, env in enumerate(envelopes):
        seq = i + 1
        if env.seq != seq:
            _fail(seq, "seq", seq, env.seq)
        if env.game_id != header.game_id:
            _fail(seq, "game id", header.game_id, env.game_id)
        if env.prev_hash != prev:
            _fail(seq, "prev_hash", prev, env.prev_hash)
        actual = chain_hash(prev, canonical(body_of(env)))
        if env.hash != actual:
            _fail(seq, "hash (the envelope was altered)", actual, env.hash)
        if env.at < last_at:
            _fail(seq, "time", f"at ≥ {last_at}", env.at)
        _check_secret(env, seed, verdict)
        prev, last_at = env.hash, env.at
    if envelopes and header.head != prev:
        _fail(len(envelopes), "head named in the header", header.head, prev)
    if header.version != len(envelopes):
        _fail(len(envelopes), "event count named in the header", header.version, len(envelopes))


def _check_secret(env: Envelope, seed: bytes | None, verdict: Verdict) -> None:
    if env.secret_digest is None:
        if has_secret(env):
            _fail(env.seq, "secret", "no secret (the event has no digest)", bytes(env.secret))
        return
    if not has_secret(env):
        verdict.secrets_unchecked.append(env.seq)
        return
    if seed is None:
        verdict.secrets_unchecked.append(env.seq)
        return
    actual = secret_digest(seed, env.seq, bytes(env.secret))
    if not hmac.compare_digest(actual, env.secret_digest):
        _fail(env.seq, "secret (does not match its digest)", env.secret_digest, actual)
    verdict.secrets_checked += 1


def _redecide(
    header: ExportHeader, envelopes: list[Envelope], seed: bytes, progress: Callable[[int], None] | None
) -> None:
    rules = rules_for(header.kind)
    try:
        config = msgspec.json.decode(header.config, type=rules.CONFIG)
    except msgspec.ValidationError as e:
        _fail(0, "config", "a valid config", str(e))
    game = Game.new(header.kind, header.game_id, config, seed)
    i = 0
    while i < len(envelopes):
        first = envelopes[i]
        if first.command == NULL:
            _fail(first.seq, "command", "the command that produced this batch", "none recorded")
        try:
            command = game.codec.decode_command(first.command)
        except msgspec.DecodeError as e:
            _fail(first.seq, "command", "a command of this game", f"{bytes(first.command).decode()} ({e})")
        try:
            produced, state = game.decide(command, actor_seat(first.actor), first.at, first.command_id)
        except RuleViolation as e:
            _fail(first.seq, "command accepted by the rules", bytes(first.command).decode(), f"{e.code}: {e.message}")
        recorded = envelopes[i : i + len(produced)]
        for want, got in zip(produced, recorded, strict=False):
            _same_event(want, got, seed)
        if len(recorded) < len(produced):
            _fail(first.seq + len(recorded), "event", produced[len(recorded)].type, "the log ends")
        game.commit(produced, state)
        i += len(produced)
        if i < len(envelopes) and envelopes[i].command == NULL:
            _fail(envelopes[i].seq, "event", "the next command's first event", f"{envelopes[i].type} (an extra event)")
        if progress is not None:
            progress(i)


def _same_event(want: Envelope, got: Envelope, seed: bytes) -> None:
    seq = got.seq
    if want.type != got.type or bytes(want.public) != bytes(got.public):
        _fail(seq, "event", bytes(want.public), bytes(got.public))
    if want.actor != got.actor or want.at != got.at:
        _fail(seq, "actor and time", f"{want.actor} at {want.at}", f"{got.actor} at {got.at}")
    if has_secret(got):
        if bytes(want.secret) != bytes(got.secret):
            _fail(seq, "secret", bytes(want.secret), bytes(got.secret))
    elif want.secret_digest != got.secret_digest:
        _fail(seq, "secret digest", want.secret_digest, got.secret_digest)
    if want.hash != got.hash:
        _fail(seq, "hash", want.hash, got.hash)


def _ranges(seqs: list[int]) -> str:
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
