"""A table's standings, from its events alone: who scored what in each round, bonuses, totals, the winner.

Scores follow the player, not the seat (RULES.md §1): each round's score is credited to whoever sat in the
seat when the round ended. A standard game counts as one round, scored when it is won. The same function
serves the standings projection and ``python -m replays verify`` on a tournament bundle, so an organiser's
check recomputes exactly what the service published.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from service.events import free_parking as ev

from .evolve import evolve
from .state import State, initial


class RoundScore(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    seat: int
    score: int  # Point cards down when the round ended, bonus included
    bonus: int
    total: int  # cumulative, after this round


class PlayerStanding(msgspec.Struct, kw_only=True):
    player_id: str | None
    name: str
    rounds: list[RoundScore] = []
    total: int = 0
    winner: bool = False


class TableStanding(msgspec.Struct, kw_only=True):
    game_id: str
    finished: bool = False
    rounds: int = 0
    version: int = 0
    players: list[PlayerStanding] = []

    @property
    def winner(self) -> PlayerStanding | None:
        return next((p for p in self.players if p.winner), None)


def _key(player: ev.Player) -> str:
    return player.player_id or player.name


def table_standing(game_id: str, config: ev.FreeParkingConfig, events: Iterable[msgspec.Struct]) -> TableStanding:
    """Fold ``events`` (public parts suffice) and record every round's scores as it ends."""
    s: State = initial(config, b"")
    table = TableStanding(game_id=game_id)
    players: dict[str, PlayerStanding] = {}
    for event in events:
        before = s
        s = evolve(s, event)
        if isinstance(event, ev.SeatTaken):
            players[_key(event.player)] = PlayerStanding(player_id=event.player.player_id, name=event.player.name)
        elif isinstance(event, ev.RoundEnded):
            _credit(players, s, event.round, list(event.scores), [event.scores[i] - st.score for i, st in enumerate(before.seats)])
        elif isinstance(event, ev.GameWon):
            if config.mode != "tournament":  # a standard game: one round, scored at the win
                _credit(players, s, 1, [st.score for st in s.seats], [0] * s.n)
            players[_key(event.player)].winner = True
            table.finished = True
        elif isinstance(event, ev.GameClosed):  # nobody moved: over, no winner, the rounds played as they stand
            table.finished = True
    table.rounds = max((len(p.rounds) for p in players.values()), default=0)
    table.version = s.version
    table.players = list(players.values())
    return table


def _credit(players: dict[str, PlayerStanding], s: State, round_: int, scores: list[int], bonuses: list[int]) -> None:
    for seat, st in enumerate(s.seats):
        if st.player is None:
            continue
        standing = players[_key(st.player)]
        standing.total += scores[seat]
        standing.rounds.append(RoundScore(round=round_, seat=seat, score=scores[seat], bonus=bonuses[seat], total=standing.total))
