"""Re-deciding a log's commands: from ``initial(config, seed)`` every recorded command is decided again, as the
service decided it, and must give exactly the recorded events (``verify`` step 4; the first divergence names its seq)."""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.envelope import NULL, Envelope, actor_seat, has_secret
from service.events.export import ExportHeader
from service.rules.engine import Game, rules_for
from service.rules.errors import RuleViolation

from .difference import difference
from .verdict import fail, redecided


def redecide(
    header: ExportHeader, envelopes: list[Envelope], seed: bytes, progress: Callable[[int], None] | None
) -> Game:
    rules = rules_for(header.kind)
    try:
        config = msgspec.json.decode(header.config, type=rules.CONFIG)
    except msgspec.ValidationError as e:
        fail(0, "config", "a valid config", str(e))
    game = Game.new(header.kind, header.game_id, config, seed, header.rules_version)
    i = 0
    while i < len(envelopes):
        first = envelopes[i]
        produced, state = decide_again(game, first)
        recorded = envelopes[i : i + len(produced)]
        for want, got in zip(produced, recorded, strict=False):
            _same_event(want, got, first.seq)
        if len(recorded) < len(produced):
            missing = produced[len(recorded)]
            why = "event (the log ends inside a command's batch)"
            fail(missing.seq, why, f"{missing.type}, decided by the command at seq {first.seq}", "the log ends")
        game.commit(produced, state)
        i += len(produced)
        if i < len(envelopes) and envelopes[i].command == NULL:
            extra = envelopes[i]
            fail(
                extra.seq,
                "event (not decided by any command)",
                f"the next command's first event (the batch of seq {first.seq} ends at seq {i})",
                f"{extra.type} {bytes(extra.public).decode()}",
            )
        if progress is not None:
            progress(i)
    return game


def decide_again(game: Game, first: Envelope) -> tuple[list[Envelope], Any]:
    """Decide the command recorded with ``first`` on the state before it, as the service did."""
    if first.command == NULL:
        fail(first.seq, "command", "the command that produced this batch", "none recorded")
    try:
        command = game.codec.decode_command(first.command)
    except msgspec.DecodeError as e:
        fail(first.seq, "command", "a command of this game", f"{_text(first.command)} ({e})")
    if first.actor != "server" and not (first.actor.startswith("seat:") and first.actor[5:].isdecimal()):
        fail(first.seq, "actor", "server or seat:<n>", first.actor)
    command = msgspec.structs.replace(command, sig=first.sig)  # the player's signature, sealed with the command again
    try:
        return game.decide(command, actor_seat(first.actor), first.at, first.command_id)
    except RuleViolation as e:
        refused = f"{_text(first.command)} from {first.actor}, refused: {e.code}: {e.message}"
        fail(first.seq, "command (the rules refuse it)", "a command the rules accept", refused)
    except Exception as e:  # a log the service wrote never holds a command the rules cannot decide
        failed = f"{_text(first.command)} from {first.actor}: {type(e).__name__}: {e}"
        fail(first.seq, "command (the rules fail on it)", "a command the rules can decide", failed)
    raise AssertionError  # unreachable: fail raises


def _text(raw: msgspec.Raw) -> str:
    """Recorded bytes for a person, made only when a divergence is reported."""
    return bytes(raw).decode(errors="replace")


def _same_event(want: Envelope, got: Envelope, first_seq: int) -> None:
    """The event re-deciding the command of ``first_seq`` gives (``want``) against the recorded one."""
    seq = got.seq
    says = redecided(first_seq, seq)
    if want.type != got.type or bytes(want.public) != bytes(got.public):
        fail(seq, "event", *difference(want.type, bytes(want.public), got.type, bytes(got.public)), says)
    if want.actor != got.actor or want.at != got.at:
        fail(seq, "actor and time", f"{want.actor} at {want.at}", f"{got.actor} at {got.at}", says)
    if has_secret(got):
        if bytes(want.secret) != bytes(got.secret):
            fail(seq, "secret", *difference("", bytes(want.secret), "", bytes(got.secret)), says)
    elif want.secret_digest != got.secret_digest:
        fail(seq, "secret digest", want.secret_digest, got.secret_digest, says)
    if want.hash != got.hash:
        fail(seq, "hash (the command, its id or the chain before it differ)", want.hash, got.hash, says)
