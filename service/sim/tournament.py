"""A tournament over rounds played in memory by bots (RULES.md §4): each round drawn by ``service.rules.rounds`` from
the standings so far, its tables played by ``play``, the standings recomputed from the tables' logs — what the service
does over HTTP, with no store. For the rounds' tests and for measuring what duplicate deals are for
(``python -m service.league.duplicate``, docs/tournaments.md)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping

import msgspec

from service.bots import bot
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.rules import rounds
from service.rules.engine import Game, rules_for
from service.rules.rounds.draw import Draw
from service.rules.rounds.standings import Standing, TableResult

from .games import Simulation, play

FILLER = "greedy"
"""The bot that fills a short table."""


class Played(msgspec.Struct, kw_only=True):
    draws: list[Draw]
    results: list[list[TableResult]]
    standings: list[Standing]


def simulate_tournament(kind: str, entrants: Mapping[str, str], rounds_count: int, table_size: int, seed: bytes, *,
                        duplicate: bool = False, options: dict | None = None) -> Played:
    """``entrants``: player id -> the bot that plays them. ``seed`` is the tournament's (``rounds.tournament_seed``)."""
    names = {p: p for p in entrants}
    played = Played(draws=[], results=[], standings=rounds.standings(names, [], duplicate=duplicate))
    for r in range(1, rounds_count + 1):
        ranks = rounds.ranks_of(played.standings) if r > 1 else None
        draw = rounds.draw_round(seed, r, list(entrants), table_size, ranks, rounds.met_of(played.draws))
        deal = rounds.round_seed(seed, r) if duplicate else None
        results = []
        for table in draw.tables:
            game_id = f"g_sim_r{r}_t{table.table}"
            table_seed = deal or rounds.table_seed(seed, r, table.table)
            sim = _table(kind, game_id, table, entrants, table_seed, "duplicate" if duplicate else "tournament", options)
            result = rounds.table_result(r, table, game_id, sim.envelopes)
            assert result is not None, f"{game_id} did not finish"
            results.append(result)
        played.draws.append(draw)
        played.results.append(results)
        played.standings = rounds.standings(names, played.results, duplicate=duplicate)
    return played


def _table(kind: str, game_id: str, table: rounds.DrawnTable, entrants: Mapping[str, str], seed: bytes, seeding: str,
           options: dict | None) -> Simulation:
    rules = rules_for(kind)
    config = rules.CONFIG(seats=len(table.seats), **(options or {}))
    sim = Simulation(Game.new(kind, game_id, config, seed))
    sim.send(Create(seeding=seeding), None)  # type: ignore[arg-type]
    names = []
    for seat, player_id in enumerate(table.seats):
        name = entrants[player_id] if player_id is not None else FILLER
        player = (Player(name=player_id, player_id=player_id) if player_id is not None
                  else Player(name=f"{FILLER}-{seat}", bot=FILLER))
        sim.send(TakeSeat(player=player), None)
        names.append(name)
    for _ in play(sim, names, random.Random(int.from_bytes(hashlib.sha256(game_id.encode() + seed).digest()[:8], "big")),
                  players=[bot(kind, name) for name in names]):
        pass
    return sim
