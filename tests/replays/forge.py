"""Tools to tamper with an exported log, the way someone trying to rewrite a game would.

An edit alone breaks the hash chain; ``rechain`` then seals the log again from scratch (new
hashes, new digests for anyone who knows the seed, a header naming the new head), so a test can
show that re-deciding the commands still catches what the chain no longer can.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.envelope import GENESIS, Envelope, body_of, canonical, chain_hash, has_secret, secret_digest
from service.events.export import ExportHeader, dumps, load
from service.rules.engine import export_header

Log = tuple[ExportHeader, list[Envelope]]
replace = msgspec.structs.replace


def export_of(sim: Any, *, with_seed: bool = True) -> Log:
    """The finished game's export, read back from its bytes."""
    return load(dumps(export_header(sim.game, with_seed=with_seed), sim.envelopes))


def index_of(envelopes: list[Envelope], type_: str, nth: int = 0, *, where: Any = None) -> int:
    """The list index of the ``nth`` envelope of ``type_`` (its seq is one more)."""
    found = [i for i, e in enumerate(envelopes) if e.type == type_ and (where is None or where(e))]
    return found[nth]


def public(env: Envelope) -> dict:
    return msgspec.json.decode(env.public)


def with_public(env: Envelope, **changes: Any) -> Envelope:
    return replace(env, public=msgspec.Raw(canonical({**public(env), **changes})))


def with_secret(env: Envelope, **changes: Any) -> Envelope:
    secret = msgspec.json.decode(env.secret)
    return replace(env, secret=msgspec.Raw(canonical({**secret, **changes})))


def with_command(env: Envelope, **changes: Any) -> Envelope:
    command = msgspec.json.decode(env.command)
    return replace(env, command=msgspec.Raw(canonical({**command, **changes})))


def rechain(header: ExportHeader, envelopes: list[Envelope], *, seed: bytes | None = None, renumber: bool = False) -> Log:
    """Seal every envelope again onto a fresh chain; with ``seed``, recompute each secret's digest as well."""
    out, prev = [], GENESIS
    for i, env in enumerate(envelopes):
        env = replace(env, seq=i + 1) if renumber else env
        if seed is not None and has_secret(env):
            env = replace(env, secret_digest=secret_digest(seed, env.seq, bytes(env.secret)))
        env = replace(env, prev_hash=prev)
        env = replace(env, hash=chain_hash(prev, canonical(body_of(env))))
        out.append(env)
        prev = env.hash
    return replace(header, version=len(out), head=prev), out


def truncated(header: ExportHeader, envelopes: list[Envelope], n: int, *, adjust_header: bool) -> Log:
    kept = envelopes[:n]
    if adjust_header:
        header = replace(header, version=n, head=kept[-1].hash if kept else GENESIS)
    return header, kept


def played_on(header: ExportHeader, envelopes: list[Envelope], keep: int, rnd: Any) -> Log:
    """The forgery a revealed seed makes possible: the first ``keep`` events kept, the rest played again by bots with
    the project's own rules — a log whose chain, seed and every re-decided command hold, of a game that never was."""
    from service.bots import bot, next_move
    from service.rules.engine import Game, rules_for

    rules = rules_for(header.kind)
    config = msgspec.json.decode(header.config, type=rules.CONFIG)
    game = Game.new(header.kind, header.game_id, config, bytes.fromhex(header.seed or ""), header.rules_version)
    game.fold(envelopes[:keep])
    out, at = list(envelopes[:keep]), envelopes[keep - 1].at
    players = [bot(header.kind, "random")] * len(game.state.seats)
    while rules.status_of(game.state) != "finished":
        seat, command = next_move(rules, game.state, players, rnd)
        at += 1000
        out += game.play(command, seat, at)
    return export_header(game, with_seed=True), out
