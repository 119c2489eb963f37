"""Tournaments over rounds (RULES.md §4, "Tournaments over rounds" and "Duplicate deals"): the seeds, each round's
draw of tables, and the standings, from the tournament's seed and its games' logs alone. Pure: the service draws and
ranks with these functions, and ``replays verify`` re-derives every draw and standing from a bundle with the same ones.
"""

from .draw import Draw, DrawnTable, draw_round, table_sizes
from .seeds import commitment, entrant_seed, round_seed, table_seed, tournament_seed
from .standings import RoundLine, Standing, TableResult, matchpoints, met_of, place_points, ranks_of, standings, table_result

__all__ = [
    "Draw",
    "commitment",
    "DrawnTable",
    "RoundLine",
    "Standing",
    "TableResult",
    "draw_round",
    "entrant_seed",
    "matchpoints",
    "met_of",
    "place_points",
    "ranks_of",
    "round_seed",
    "standings",
    "table_result",
    "table_seed",
    "table_sizes",
    "tournament_seed",
]
