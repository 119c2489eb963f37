"""Which games are rated and each one's order of finish (RULES.md §4), from a game's events alone.

The service's ratings projection and ``python -m replays ratings`` both call ``rated_game`` on a game's envelopes
(the public parts suffice: an export and the stream fold the same), so the two can only differ if their logs do.
The final state comes from the game's own ``evolve``: who sits where, each seat's total, worth, and who is out
(``forfeited`` — a resignation sets the same flag — or bankrupt), so whatever event puts a seat out, the order
follows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from service.events.base import Player
from service.events.envelope import Envelope

from .. import free_parking, monopoly

RATED_KINDS = {free_parking.KIND: free_parking, monopoly.KIND: monopoly}
"""The kinds that have ratings: every game of two seats or more (solitaire is never rated)."""
RATED_SEEDING = ("combined", "duplicate", "tournament")
"""Seeds drawn from every seat's client seed and the committed server seed, or a duplicate tournament round's (drawn
from the tournament's committed seed and every entrant's client seed), and a tournament round's table (derived from
that seed too); ``fixed`` (an admin's or a chosen seed) and
``legacy`` ones are not rated."""


class Place(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One seat's place in a rated game: ``rank`` 1 is first, tied seats share a rank (1, 2, 2, 4)."""

    seat: int
    rank: int
    rated_id: str | None  # who the seat rates: a registered player's id, ``bot:<kind>``; None for a guest
    name: str
    account: Literal["bot"] | None = None  # ``bot`` for a bot account (its seat's ``Player.account``)


class RatedGame(msgspec.Struct, frozen=True, kw_only=True):
    """A rated game as the fold needs it: its kind, when it finished (the time of its last event) and its places."""

    game_id: str
    kind: str
    finished_at: int
    version: int  # the last event folded
    places: tuple[Place, ...]

    @property
    def order(self) -> tuple[int, str]:
        """The fold's order (RULES.md §4): the time of the last event, then the game id."""
        return self.finished_at, self.game_id


def rated_id(player: Player) -> str | None:
    """The rated player a seat stands for: a registered player, or one rated player per bot kind; a guest none."""
    if player.bot is not None:
        return f"bot:{player.bot}"
    return player.player_id if player.registered else None


def rated_game(envelopes: Sequence[Envelope], seeding: tuple[str, ...] = RATED_SEEDING) -> RatedGame | None:
    """``envelopes`` (a game's whole log, from seq 1, public parts read) as a rated game; ``None`` if it is not one:
    a solitaire, a seed not drawn, under two seats, not ended with a result (closed idle, or not over).

    ``seeding``: the seeds that count. The service and the offline tool keep the rule's; the bot league, measuring
    bots on seeded deals of its own, takes every game's order of finish the same way."""
    ended = finished(envelopes, seeding)
    if ended is None:
        return None
    last = envelopes[-1]
    return RatedGame(game_id=last.game_id, kind=ended.kind, finished_at=last.at, version=last.seq, places=ended.places)


class Finished(msgspec.Struct, frozen=True, kw_only=True):
    """A game that ended with a result: its kind, its places, and its final state (each seat's total, worth, who is
    out) — what a tournament's standings read besides the order of finish (``service/rules/rounds``)."""

    kind: str
    places: tuple[Place, ...]
    state: Any
    ended: Any  # the ending event: the card game's ``game_won``, Monopoly's ``game_ended``


def finished(envelopes: Sequence[Envelope], seeding: tuple[str, ...] = RATED_SEEDING, *, closed: bool = False) -> Finished | None:
    """``envelopes`` (a game's whole log from seq 1, public parts read) as a game ended with a result and its order of
    finish; ``None`` for a solitaire, a seed not in ``seeding``, under two seats, or not over — and closed idle, unless
    ``closed``: then every seat ties (a tournament's table closed idle still ends its round)."""
    if not envelopes or envelopes[0].seq != 1 or envelopes[0].type != "game_created":
        return None
    kind = msgspec.json.decode(envelopes[0].public, type=_Kind).kind
    rules = RATED_KINDS.get(kind)
    if rules is None:
        return None
    events = [rules.CODEC.join(env.public) for env in envelopes]
    created = events[0]
    if created.seeding not in seeding or created.config.seats < 2:
        return None
    state = rules.initial(created.config, b"", created.rules_version)
    out_at: dict[int, int] = {}  # seat -> the step it went out at (forfeited, resigned, bankrupt)
    ended: Any = None
    for step, event in enumerate(events):
        state = rules.evolve(state, event)
        for seat, st in enumerate(state.seats):
            if seat not in out_at and _out(st):
                out_at[seat] = step
        if env_type(event) in ("game_won", "game_ended"):
            ended = event
        elif env_type(event) == "game_closed":
            if not closed:
                return None
            ended = event
    if ended is None or any(st.player is None for st in state.seats):
        return None
    if env_type(ended) == "game_closed":
        keys: list[tuple] = [()] * len(state.seats)
    elif kind == free_parking.KIND:
        keys = _free_parking_keys(state, ended)
    else:
        keys = _monopoly_keys(state, ended, out_at)
    return Finished(kind=kind, places=_places(state.seats, keys), state=state, ended=ended)


class _Kind(msgspec.Struct):
    kind: str


def env_type(event: msgspec.Struct) -> str:
    return type(event).__struct_config__.tag  # type: ignore[return-value]


def _out(seat: Any) -> bool:
    """Out of the game: forfeited, resigned (the card game's resignation sets ``forfeited`` too; Monopoly's has a flag
    of its own) or bankrupt."""
    return bool(getattr(seat, "forfeited", False) or getattr(seat, "resigned", False) or getattr(seat, "bankrupt", False))


def _free_parking_keys(state: Any, won: Any) -> list[tuple]:
    """The winner first, then the others by Point-card total (a tournament's cumulative total), a seat that forfeited
    or resigned after every seat still in. A smaller key finishes higher; equal keys tie."""
    tournament = state.config.mode == "tournament"
    keys = []
    for seat, st in enumerate(state.seats):
        total = st.total if tournament else st.score
        keys.append((int(st.forfeited), 0 if seat == won.seat else 1, -total))
    return keys


def _monopoly_keys(state: Any, ended: Any, out_at: dict[int, int]) -> list[tuple]:
    """The last player left first (with ``max_rounds``, those still in by worth), then the bankrupt in the reverse
    order they went bankrupt, a seat that forfeited or resigned after every seat bankrupt in play."""
    keys = []
    for seat, st in enumerate(state.seats):
        if seat not in out_at:
            worth = ended.worth[seat] if ended.reason == "max_rounds" else int(seat == ended.winner)
            keys.append((0, 0, -worth))
        else:
            keys.append((1, int(st.forfeited or getattr(st, "resigned", False)), -out_at[seat]))
    return keys


def _places(seats: Sequence[Any], keys: list[tuple]) -> tuple[Place, ...]:
    order = sorted(range(len(seats)), key=lambda i: (keys[i], i))
    places: list[Place] = []
    for n, seat in enumerate(order):
        tied = places and keys[order[n - 1]] == keys[seat]
        player = seats[seat].player
        name = f"{player.bot} bot" if player.bot is not None else player.name  # a bot kind is one player, not a seat
        places.append(Place(seat=seat, rank=places[-1].rank if tied else n + 1, rated_id=rated_id(player), name=name,
                            account=player.account))
    return tuple(sorted(places, key=lambda p: p.seat))
