"""The tournament standings read model: built incrementally as the tables' events arrive, equal to a rebuild, and
equal to ``table_standing`` of each finished table's whole log (what an organiser's offline check recomputes)."""

from __future__ import annotations

import random

import msgspec

from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.entries import encode_entry
from service.events.envelope import canonical
from service.store.keys import partition, table_id
from service.store.store import AppendRequest
from service.projections import Projector, read_standings, rebuild
from service.projections.scores import decode_public
from service.rules.engine import Game
from service.rules.free_parking.standings import table_standing
from service.sim.games import Simulation, play
from tests.projections.helpers import KIND, RULES, Played, commands, status_after

TOURNAMENT = "t_0123456789abcdef"


def play_table(table: int, seats: int) -> tuple[Played, dict[str, str]]:
    """A tournament table played by greedy bots (one registered player per table), and the metadata it is created with."""
    rnd = random.Random(table)
    game_id = table_id(TOURNAMENT, table)
    config = RULES.CONFIG(seats=seats, mode="tournament")
    seed = rnd.randbytes(32)
    sim = Simulation(Game.new(KIND, game_id, config, seed))
    sim.send(Create(), None)
    sim.send(TakeSeat(player=Player(name=f"player p{table}", player_id=f"p{table:02d}")), None)
    for seat in range(1, seats):
        sim.send(TakeSeat(player=Player(name=f"greedy-{seat}", player_id=f"bot-{table}-{seat}", bot="greedy")), None)
    for _ in play(sim, ["greedy"] * seats, rnd, timeouts=0.05):
        pass
    meta = {"kind": KIND, "config": canonical(config).decode(), "seed": seed.hex(), "created_at": "1",
            "seats": str(seats), "tournament": TOURNAMENT, "table": str(table), "reserved": "[]"}
    return Played(game_id, sim.envelopes, sim.game.state), meta


async def feed(store, tables: list[tuple[Played, dict[str, str]]], projector: Projector, chunk: int = 25) -> None:
    """Append the tables chunk by chunk, in turn, the projector catching up after each round of appends."""
    batches = {g.game_id: commands(g.envelopes) for g, _ in tables}
    at = dict.fromkeys(batches, 0)
    status = dict.fromkeys(batches, "waiting")
    while any(at[g] < len(b) for g, b in batches.items()):
        for game, meta in tables:
            done = at[game.game_id]
            if done >= len(batches[game.game_id]):
                continue
            envelopes = [e for b in batches[game.game_id][done : done + chunk] for e in b]
            status[game.game_id] = status_after(envelopes, status[game.game_id])
            appended = await store.append(AppendRequest(
                game_id=game.game_id, expected_version=envelopes[0].seq - 1, entries=[encode_entry(e) for e in envelopes],
                head=envelopes[-1].hash, status=status[game.game_id], created_at=1, meta=meta if done == 0 else {}))
            assert appended.outcome == "ok", appended
            at[game.game_id] = done + chunk
        await projector.catch_up()


async def test_standings_built_incrementally_equal_a_rebuild_and_the_logs(store):
    tables = [play_table(i, 2 + i % 2) for i in range(3)]
    assert {partition(g.game_id) for g, _ in tables} == {partition(TOURNAMENT)}
    ids = [g.game_id for g, _ in tables]
    await feed(store, tables, Projector(store, "incremental"))
    incremental = await read_standings(store, TOURNAMENT, ids)
    for (game, meta), (standing, version) in zip(tables, incremental, strict=True):
        config = msgspec.json.decode(meta["config"], type=RULES.CONFIG)
        assert version == game.version
        assert standing == table_standing(game.game_id, config, decode_public(KIND, game.envelopes))
        assert standing.finished and standing.rounds >= 2
    await rebuild(store)
    assert await read_standings(store, TOURNAMENT, ids) == incremental


async def test_a_game_outside_any_tournament_has_no_standing(store, few):
    g = few[0]
    await store.append(AppendRequest(game_id=g.game_id, expected_version=0, entries=[encode_entry(e) for e in g.envelopes],
                                     head=g.envelopes[-1].hash, status="finished", created_at=1))
    await Projector(store, "p").catch_up()
    assert await read_standings(store, TOURNAMENT, [g.game_id]) == [(None, g.version)]
