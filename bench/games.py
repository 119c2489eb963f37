"""Game logs for the benchmarks: simulated bot games, cut into the batches the service would append, and written
through the store's own append path (``Store.append``: the Lua script on Redis, group-committed)."""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from service.api.schedule import due_at
from service.bots import bot, next_move
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.entries import encode_entry
from service.events.envelope import Envelope, canonical
from service.store.store import AppendRequest, Store
from service.rules.engine import Game

START_AT = 1_767_225_600_000
_NULL = msgspec.Raw(b"null")
KIND = "free-parking"


@dataclass
class Batch:
    """One command's events, encoded as the store keeps them, with what the append records beside them."""

    entries: list[bytes]
    head: str
    status: str
    due: int | None
    meta: dict[str, str]
    command_key: str = ""
    command_digest: str = ""


@dataclass
class Log:
    game_id: str
    game: Game
    batches: list[Batch] = field(default_factory=list)
    envelopes: list[Envelope] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(len(b.entries) for b in self.batches)


def seed_of(n: int) -> bytes:
    return hashlib.sha256(b"free-parking-bench-%d" % n).digest()


def simulate(
    n: int,
    *,
    seats: int = 4,
    max_events: int | None = None,
    choose: Callable[[Game, int, list], Any] | None = None,
    keep_envelopes: bool = False,
) -> Log:
    """Game ``n``: created, seated by random bots, played until it ends or reaches ``max_events`` (at a command's end).

    ``choose(game, seat, legal)`` overrides the bots' choice (e.g. seats that never score)."""
    game_id = f"g_{n:016x}"
    rules_game = Game.new(KIND, game_id, _config(seats), seed_of(n))
    log = Log(game_id, rules_game)
    at = START_AT
    rnd = random.Random(n)
    players = [bot(KIND, "random") for _ in range(seats)]

    def send(command: Any, seat: int | None, meta: dict[str, str]) -> None:
        nonlocal at
        at += 1000
        envelopes = rules_game.play(command, seat, at, None)
        log.batches.append(Batch([encode_entry(e) for e in envelopes], envelopes[-1].hash,
                                 rules_game.rules.status_of(rules_game.state), due_at(rules_game, at), meta))
        if keep_envelopes:
            log.envelopes += envelopes

    send(Create(), None, {"kind": KIND, "config": canonical(rules_game.state.config).decode(), "seed": seed_of(n).hex(),
                          "created_at": str(at + 1000), "seats": str(seats)})
    for i in range(seats):
        send(TakeSeat(player=Player(name=f"bot {i}", player_id=f"b_{n:08x}{i:08x}", bot="random")), None, {"taken": str(i + 1)})
    rules = rules_game.rules
    while rules.status_of(rules_game.state) != "finished" and (max_events is None or rules_game.version < max_events):
        s = rules_game.state
        if choose is not None:
            seat = s.pending.seat if s.pending is not None else s.turn_seat
            send(choose(rules_game, seat, rules.legal_commands(s, seat)), seat, {})
            continue
        move = next_move(rules, s, players, rnd)
        if move is None:
            raise RuntimeError(f"no seat can act in game {n} at version {s.version}")
        send(move[1], move[0], {})
    return log


def _config(seats: int) -> Any:
    from service.rules.engine import rules_for

    return rules_for(KIND).CONFIG(seats=seats)


def _simulate_prefix(args: tuple[int, int | None, int]) -> list[Log]:
    n, max_events, copies = args
    log = simulate(n, max_events=max_events, keep_envelopes=copies > 1)
    out = [log, *(copy(log, (1 << 60) | (n << 12) | k) for k in range(1, copies))]
    for each in out:
        each.game = None  # type: ignore[assignment]  # not needed across processes
        each.envelopes = []
    return out


def simulate_many(ns: range, max_events: int | None, processes: int = 1, copies: int = 1) -> list[Log]:
    """Many games' logs; on ``processes`` > 1, simulated in a process pool. With ``copies`` > 1, each simulated game
    also yields ``copies - 1`` more under other game ids (``copy``): as many games for a fraction of the time."""
    work = [(n, max_events, copies) for n in ns]
    if processes <= 1:
        return [log for item in work for log in _simulate_prefix(item)]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return [log for logs in pool.map(_simulate_prefix, work, chunksize=16) for log in logs]


def copy(log: Log, n: int) -> Log:
    """The same game (seed, commands, times) under the game id of ``n``: every envelope sealed again into that id's
    chain. A valid log of its own, which ``replays verify`` accepts; it only shares its deals with ``log``."""
    from service.events.envelope import GENESIS, has_secret, seal

    game_id = f"g_{n:016x}"
    out = Log(game_id, log.game)
    prev, i = GENESIS, 0
    for b in log.batches:
        entries = []
        for env in log.envelopes[i : i + len(b.entries)]:
            env = seal(game_id=game_id, seq=env.seq, type=env.type, public=bytes(env.public),
                       secret=bytes(env.secret) if has_secret(env) else None, seed=log.game.seed, at=env.at, prev_hash=prev,
                       actor=env.actor, command_id=env.command_id, command=None if env.command == _NULL else bytes(env.command))
            entries.append(encode_entry(env))
            prev = env.hash
        i += len(b.entries)
        out.batches.append(Batch(entries, prev, b.status, b.due, b.meta, b.command_key, b.command_digest))
    return out


async def write(store: Store, log: Log, *, version: int = 0, batches: list[Batch] | None = None) -> int:
    """Append ``log``'s batches in order, one command's events per append, as the service would; the last version."""
    for b in batches if batches is not None else log.batches:
        result = await store.append(AppendRequest(
            game_id=log.game_id, expected_version=version, entries=b.entries, head=b.head, status=b.status,
            created_at=START_AT + 1000, due_at=b.due, command_key=b.command_key, command_digest=b.command_digest, meta=b.meta))
        if result.outcome != "ok":
            raise RuntimeError(f"append to {log.game_id} at {version}: {result}")
        version = result.version
    return version


async def write_many(store: Store, logs: list[Log], concurrency: int = 256) -> None:
    """Write many games at once: concurrent appends of different games go out in one pipeline (group commit)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(log: Log) -> None:
        async with gate:
            await write(store, log)

    await asyncio.gather(*(one(log) for log in logs))


def _config_from(header: Any) -> Any:
    """The config an export's header records, decoded for its kind."""
    import msgspec

    from service.rules.engine import rules_for

    return msgspec.json.decode(header.config, type=rules_for(header.kind).CONFIG)
