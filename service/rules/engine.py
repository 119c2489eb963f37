"""One game in motion: a decider's state plus its place in the hash chain.

The service caches a ``Game`` per id and the verifier folds one from a log; both go through
``decide`` here, which turns the rules' events into sealed envelopes without touching the state,
and ``commit``, which adopts them once the store has accepted them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import msgspec

from service.events.audit import line
from service.events.common import Close
from service.events.envelope import (
    GENESIS,
    Envelope,
    actor_name,
    actor_seat,
    canonical,
    has_secret,
    redacted,
    seal,
    seed_commitment,
)
from service.events.export import ExportHeader

from . import free_parking, monopoly, solitaire
from .errors import RuleViolation
from .rng import RNG_ID

GAMES: dict[str, ModuleType] = {free_parking.KIND: free_parking, solitaire.KIND: solitaire, monopoly.KIND: monopoly}


def rules_for(kind: str) -> ModuleType:
    try:
        return GAMES[kind]
    except KeyError:
        raise ValueError(f"unknown game kind {kind!r}; known: {', '.join(GAMES)}") from None


def seat_range(kind: str) -> tuple[int, int]:
    """The fewest and most seats ``kind``'s config admits, read off its ``seats`` field (a bounded int or a literal)."""
    config = rules_for(kind).CONFIG
    field = next(f for f in msgspec.inspect.type_info(config).fields if f.name == "seats")  # type: ignore[attr-defined]
    seats = field.type
    if isinstance(seats, msgspec.inspect.LiteralType):
        return min(seats.values), max(seats.values)
    assert isinstance(seats, msgspec.inspect.IntType) and seats.ge is not None and seats.le is not None, f"{config.__name__}.seats is unbounded"
    return seats.ge, seats.le


class Game:
    """A game's decider state at ``state.version`` and the chain ``head`` there."""

    __slots__ = ("created_at", "game_id", "head", "last_at", "progress_at", "rules", "seed", "state")

    def __init__(
        self,
        rules: ModuleType,
        game_id: str,
        seed: bytes,
        state: Any,
        head: str,
        last_at: int,
        progress_at: int | None = None,
    ) -> None:
        self.rules = rules
        self.game_id = game_id
        self.seed = seed
        self.state = state
        self.head = head
        self.last_at = last_at
        self.progress_at = last_at if progress_at is None else progress_at
        """The time of the last event that moved the game on (``state.progress``): its idle close counts from it."""
        self.created_at = 0

    @classmethod
    def new(cls, kind: str, game_id: str, config: Any, seed: bytes, rules_version: int | None = None) -> Game:
        """Before its first event: ``create`` is the first command. A game is played under its kind's current rules
        version unless told otherwise (a recorded game replays under the version it was played under)."""
        rules = rules_for(kind)
        state = rules.initial(config, seed, rules.RULES_VERSION if rules_version is None else rules_version)
        return cls(rules, game_id, seed, state, GENESIS, 0)

    @classmethod
    def recorded(cls, kind: str, game_id: str, config: str | bytes, seed: str) -> Game:
        """Before its first event, as a stored game's metadata records it: its config as JSON, its seed in hex."""
        return cls.new(kind, game_id, msgspec.json.decode(config, type=rules_for(kind).CONFIG), bytes.fromhex(seed))

    def snapshot(self) -> Game:
        """This game as it is now, apart from the cached one that requests move on meanwhile: a thread deciding on it
        (the runner's bots) sees one version throughout, and what it decides names that version."""
        copy = Game(self.rules, self.game_id, self.seed, self.state, self.head, self.last_at, self.progress_at)
        copy.created_at = self.created_at
        return copy

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def codec(self) -> Any:
        return self.rules.CODEC

    def decide(
        self, command: msgspec.Struct, seat: int | None, at: int, command_id: str | None = None
    ) -> tuple[list[Envelope], Any]:
        """The sealed envelopes of ``command`` and the state they lead to; ``self`` is left as it was.

        ``at`` is clamped so that no event is ever earlier than the one before it. A ``close`` must name the time of
        the last event that moved the game on (``progress_at``) as its ``since``: the rules then check the idle time on
        what the log itself says.
        """
        at = max(at, self.last_at)
        if isinstance(command, Close) and seat is None and command.since != self.progress_at:  # a seat's: server_only
            raise RuleViolation(
                "stale_close",
                f"The game last moved on at {self.progress_at}, not {command.since}",
                last_at=self.last_at,
                progress_at=self.progress_at,
            )
        events, state = self.rules.run(self.state, command, seat, at)
        return self.seal(events, command, seat, at, command_id), state

    def seal(
        self, events: list[msgspec.Struct], command: msgspec.Struct, seat: int | None, at: int, command_id: str | None
    ) -> list[Envelope]:
        codec, prev, out = self.codec, self.head, []
        first_seq, actor = self.version + 1, actor_name(seat)
        body, sig = codec.command_body(command), getattr(command, "sig", None)
        for i, event in enumerate(events):
            type_, public, secret = codec.split(event)
            env = seal(
                game_id=self.game_id,
                seq=first_seq + i,
                type=type_,
                public=public,
                secret=secret,
                seed=self.seed,
                at=at,
                prev_hash=prev,
                actor=actor,
                command_id=command_id if i == 0 else None,
                command=body if i == 0 else None,
                sig=sig if i == 0 else None,
            )
            out.append(env)
            prev = env.hash
        return out

    def commit(self, envelopes: list[Envelope], state: Any) -> None:
        """Adopt a decision the store accepted."""
        if envelopes:
            self._moved(envelopes, state)
            self.state = state

    def play(self, command: msgspec.Struct, seat: int | None, at: int, command_id: str | None = None) -> list[Envelope]:
        """Decide and commit at once: for simulations and tests that have no store."""
        envelopes, state = self.decide(command, seat, at, command_id)
        self.commit(envelopes, state)
        return envelopes

    def fold(self, envelopes: list[Envelope]) -> None:
        """Apply recorded envelopes (with their secrets) without re-deciding: the projection replay."""
        state, codec, evolve = self.state, self.codec, self.rules.evolve
        for env in envelopes:
            state = evolve(state, codec.join(env.public, env.secret))
        if envelopes:
            self._moved(envelopes, state)
            self.state = state

    def _moved(self, envelopes: list[Envelope], state: Any) -> None:
        self.head, self.last_at = envelopes[-1].hash, envelopes[-1].at
        self.progress_at = progressed_at(state, envelopes, self.progress_at)
        if envelopes[0].seq == 1:
            self.created_at = envelopes[0].at

    def view(self, seat: int | None, *, reveal: bool = False) -> Any:
        v = self.rules.view(self.state, seat, reveal=reveal)
        v.game_id, v.head = self.game_id, self.head
        return v


def progressed_at(state: Any, envelopes: list[Envelope], before: int) -> int:
    """When the game last moved on, ``envelopes`` having led to ``state``: the time of the envelope whose seq is the
    state's ``progress`` (each kind's evolve says which events move it on), else ``before`` (it was earlier)."""
    return next((env.at for env in reversed(envelopes) if env.seq == state.progress), before)


def command_of(game: Game, env: Envelope) -> tuple[msgspec.Struct, int | None]:
    """The command stored with the first event of a batch, and the seat that sent it."""
    return game.codec.decode_command(env.command), actor_seat(env.actor)


def export_header(game: Game, *, with_seed: bool, viewer: str | None = None) -> ExportHeader:
    """The export's first line; the seed only when it may be published (the game is over, or an admin asks)."""
    return ExportHeader(
        game_id=game.game_id,
        kind=game.rules.KIND,
        config=msgspec.Raw(canonical(game.state.config)),
        rules_version=game.state.rules_version,
        rng=RNG_ID,
        seed_commitment=seed_commitment(game.seed),
        version=game.version,
        head=game.head,
        seed=game.seed.hex() if with_seed else None,
        viewer=viewer,
        seeding=None if game.state.seeding == "legacy" else game.state.seeding,
    )


def audit_lines(rules: ModuleType, envelopes: list[Envelope], *, reveal: bool = False) -> list[str]:
    """The audit log of ``envelopes``; with ``reveal``, each hidden part is spelled out too (an export is the full record)."""
    out = []
    for env in envelopes:
        event = rules.CODEC.join(env.public, env.secret if reveal else None)
        text = rules.summary(event)
        note = rules.secret_note(event) if reveal else ""
        out.append(line(env, f"{text} [{note}]" if note else text))
    return out


def seat_record(rules: ModuleType, envelopes: list[Envelope], seat: int) -> list[Envelope]:
    """The log as ``seat`` saw it: every envelope (hashes intact, so it verifies against the full chain), each
    secret kept only where the seat was shown all of it (``rules.secret_seen_by``), else withheld."""
    return [
        env if has_secret(env) and rules.secret_seen_by(rules.CODEC.join(env.public), seat) else redacted(env)
        for env in envelopes
    ]


LOOKAHEAD = 12  # events a log line may read past its own (a roll's line says it sent the roller to jail)


class _CommandType(msgspec.Struct):
    type: str = ""


def _timed_out(env: Envelope) -> bool:
    """Whether ``env`` opens the batch a server ``Timeout`` produced: a deadline decided what follows."""
    raw = bytes(env.command)
    return raw != b"null" and msgspec.json.decode(raw, type=_CommandType).type == "timeout"


def log_lines(
    rules: ModuleType, envelopes: list[Envelope], *, player_id: str | None = None, after: int = 0
) -> list[tuple[int, int, str, str | None]]:
    """The move log of ``envelopes`` (the whole log from seq 1: names are tracked from the seats taken), as
    ``(seq, at, words, notice)`` for each event after ``after``: players named as they sat at that event, and a
    ``notice`` in words to ``player_id`` where the event did something to them. Only each event's public part is
    read, so the words are the same whatever secrets the envelopes carry: the log never tells a hidden card. The
    first event of a batch a server ``Timeout`` made is told so (``timed_out``): its line says the time ran out
    and whose decision the server made."""
    writer = rules.Log() if hasattr(rules, "Log") else None
    events = [rules.CODEC.join(env.public) for env in envelopes]
    out = []
    for i, (env, event) in enumerate(zip(envelopes, events, strict=True)):
        if writer is None:
            out.append((env.seq, env.at, rules.summary(event), None))
            continue
        me = writer.seats.seat_of(player_id)
        notice = writer.notice(event, me) if me is not None else None
        words = writer.line(event, events[i + 1 : i + 1 + LOOKAHEAD], timed_out=_timed_out(env))
        if env.seq > after:
            out.append((env.seq, env.at, words, notice))
    return [line for line in out if line[0] > after]
