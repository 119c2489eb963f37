"""Games for the projection tests, a feeder that appends them through a store as they progress, and snapshots.

The games are greedy bot games of 2–8 seats, played once per session (in worker processes) and shared by every
test. Seats hold registered players (a pool of twelve, ``p00``…``p11``), server bots and, now and then, a guest,
so the results read model has something to count. Each game is appended in chunks of a few commands — each chunk
one ``AppendRequest`` (one partition-log entry), as a burst of commands would be — because the embedded store
appends at a few hundred a second.
"""

from __future__ import annotations

import random
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import msgspec

from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.entries import encode_entry
from service.events.envelope import NULL, Envelope
from service.store.store import AppendRequest, Store
from service.projections import read_audit, read_results, read_scores, registered
from service.rules.engine import Game, audit_lines, rules_for
from service.sim.games import Simulation, play

KIND = "free-parking"
RULES = rules_for(KIND)
PLAYERS = [f"p{i:02d}" for i in range(12)]
HAS_GUEST = "guest" in Player.__struct_fields__


@dataclass
class Played:
    """A finished game: its envelopes (with secrets, as stored) and the decider's final state."""

    game_id: str
    envelopes: list[Envelope]
    state: Any

    @property
    def version(self) -> int:
        return self.state.version


def seating(i: int, n: int, rnd: random.Random) -> list[Player]:
    registered_seats = rnd.randint(0, n)
    pids = rnd.sample(PLAYERS, registered_seats)
    out = []
    for seat in range(n):
        if seat < registered_seats:
            out.append(Player(name=f"player {pids[seat]}", player_id=pids[seat]))
        elif HAS_GUEST and rnd.random() < 0.15:
            out.append(Player(name="guest", player_id=f"guest-{i}-{seat}", guest=True))
        else:
            out.append(Player(name=f"greedy-{seat}", player_id=f"bot-{i}-{seat}", bot="greedy"))
    rnd.shuffle(out)
    return out


def play_one(i: int) -> Played:
    rnd = random.Random(i)
    n = 2 + i % 7
    game_id = f"proj-{n}-{i:04d}"
    seed = random.Random(f"seed-{i}").randbytes(32)
    sim = Simulation(Game.new(KIND, game_id, RULES.CONFIG(seats=n), seed))
    sim.send(Create(), None)
    for player in seating(i, n, rnd):
        sim.send(TakeSeat(player=player), None)
    for _ in play(sim, ["greedy"] * n, rnd, timeouts=0.05):
        pass
    return Played(game_id, sim.envelopes, sim.game.state)


def play_many(stop: int, start: int = 0) -> list[Played]:
    """Games ``start`` to ``stop - 1`` (game ``i`` is always the same game)."""
    if stop - start < 20:
        return [play_one(i) for i in range(start, stop)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        return list(pool.map(play_one, range(start, stop), chunksize=10))


_shared: list[Played] = []


def shared_games(count: int) -> list[Played]:
    """The first ``count`` games, played once per session and shared by every test."""
    if len(_shared) < count:
        _shared.extend(play_many(count, len(_shared)))
    return _shared[:count]


# --- appending ---------------------------------------------------------------------------------


def commands(envelopes: list[Envelope]) -> list[list[Envelope]]:
    """The envelopes batch by batch: a batch starts with the event that stores its command."""
    out: list[list[Envelope]] = []
    for env in envelopes:
        if env.command != NULL or not out:
            out.append([env])
        else:
            out[-1].append(env)
    return out


def status_after(envelopes: list[Envelope], before: str) -> str:
    status = before
    for env in envelopes:
        if env.type == "game_won":
            status = "finished"
        elif env.type == "turn_began" and status == "waiting":
            status = "playing"
    return status


@dataclass
class Feeder:
    """Appends games through a store a chunk at a time, interleaving the games that are in progress."""

    store: Store
    games: list[Played]
    chunk: int = 12  # commands per append, on average
    rnd: random.Random = field(default_factory=lambda: random.Random(7))
    position: dict[str, int] = field(default_factory=dict)  # game id → batches appended
    status: dict[str, str] = field(default_factory=dict)
    appends: int = 0

    def __post_init__(self) -> None:
        self._batches = {g.game_id: commands(g.envelopes) for g in self.games}

    def remaining(self, game: Played) -> int:
        return len(self._batches[game.game_id]) - self.position.get(game.game_id, 0)

    async def append_chunk(self, game: Played, size: int | None = None) -> bool:
        """Append the game's next chunk of commands; ``False`` when it is all in already."""
        batches = self._batches[game.game_id]
        at = self.position.get(game.game_id, 0)
        if at >= len(batches):
            return False
        size = size or self.rnd.randint(1, 2 * self.chunk - 1)
        envelopes = [e for b in batches[at : at + size] for e in b]
        version = envelopes[0].seq - 1
        status = status_after(envelopes, self.status.get(game.game_id, "waiting"))
        done = await self.store.append(
            AppendRequest(
                game_id=game.game_id,
                expected_version=version,
                entries=[encode_entry(e) for e in envelopes],
                head=envelopes[-1].hash,
                status=status,
                created_at=game.envelopes[0].at,
            )
        )
        assert done.outcome == "ok", done
        self.position[game.game_id] = min(at + size, len(batches))
        self.status[game.game_id] = status
        self.appends += 1
        return True

    async def append_all(self, game: Played) -> None:
        while await self.append_chunk(game):
            pass

    async def interleaved(self, active: int = 12, every: int = 25, between=None) -> None:
        """Append every game, ``active`` of them in progress at once, chunks in random order; after every
        ``every`` appends await ``between()`` (a projector's catch-up, say)."""
        waiting = list(self.games)
        playing: list[Played] = []
        while waiting or playing:
            while waiting and len(playing) < active:
                playing.append(waiting.pop(0))
            game = self.rnd.choice(playing)
            assert await self.append_chunk(game)
            if self.remaining(game) == 0:
                playing.remove(game)
            if between is not None and self.appends % every == 0:
                await between()
        if between is not None:
            await between()


# --- what the projections should say, and what they say -----------------------------------


def expected_results(games: list[Played]) -> dict[str, dict[str, Any]]:
    """Per registered player, from the decider's final states: played, won, points and each game's points."""
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"played": 0, "won": 0, "points": 0, "games": {}})
    for g in games:
        s = g.state
        if s.winner is None:
            continue
        for i, seat in enumerate(s.seats):
            if registered(seat.player):
                r = out[seat.player.player_id]
                r["played"] += 1
                r["won"] += int(i == s.winner)
                r["points"] += seat.score
                r["games"][g.game_id] = (i, seat.score, i == s.winner)
    return dict(out)


def assert_scores_match(scores: Any, version: int, game: Played) -> None:
    """The projected scores equal the decider's final table: Point cards down, points, who sits where, the winner."""
    s = game.state
    assert version == s.version == scores.version
    assert scores.status == RULES.status_of(s)
    assert scores.winner == s.winner
    assert len(scores.seats) == len(s.seats)
    for i, (seat, projected) in enumerate(zip(s.seats, scores.seats, strict=True)):
        assert projected.seat == i
        assert projected.point_cards == list(seat.points), (game.game_id, i)
        assert projected.points == seat.score
        assert projected.player == seat.player


def public_audit(game: Played) -> list[str]:
    return audit_lines(RULES, game.envelopes)


async def snapshot(store: Store, games: list[Played]) -> dict[str, Any]:
    """Everything the projections say about ``games`` and their players, as plain data."""
    out: dict[str, Any] = {}
    for g in games:
        scores, version = await read_scores(store, g.game_id)
        lines, audit_version = await read_audit(store, g.game_id)
        out[f"game:{g.game_id}"] = (msgspec.to_builtins(scores), version, lines, audit_version)
    players = sorted({seat.player.player_id for g in games for seat in g.state.seats if registered(seat.player)})
    for pid in players:
        results, versions = await read_results(store, pid)
        out[f"player:{pid}"] = (msgspec.to_builtins(results), versions)
    return out


async def assert_projected(store: Store, games: list[Played]) -> None:
    """Every game's projections equal the truth: the decider's final state, ``audit_lines`` of the log, the results."""
    for g in games:
        scores, version = await read_scores(store, g.game_id)
        assert scores is not None, g.game_id
        assert_scores_match(scores, version, g)
        lines, audit_version = await read_audit(store, g.game_id)
        assert audit_version == g.version
        assert lines == public_audit(g)
    for pid, want in expected_results(games).items():
        results, versions = await read_results(store, pid)
        assert results is not None, pid
        assert (results.played, results.won, results.points) == (want["played"], want["won"], want["points"]), pid
        assert {gid: (r.seat, r.points, r.won) for gid, r in results.games.items()} == want["games"]
        assert set(versions) == set(want["games"])
        assert results.kinds[KIND].played == want["played"]


async def pending(store: Store, group: str = "projectors") -> int:
    from service.store.keys import PARTITIONS

    total = 0
    for p in range(PARTITIONS):
        info = await store.r.xpending(store.keys.log(p), group)
        total += info["pending"]
    return total
