"""``view``: the board as the player (or anyone) sees it. Everything is face up; only the seed is hidden
until the game ends, because it decides the redeals still to come."""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.base import Account
from service.events.common import Seeding
from service.events.receipt import Receipt
from service.events.solitaire import SolitaireClientCommand

from ..close import Closed
from ..setup import SeedChosenBy, seed_chosen_by
from . import layout as grid
from .hint import hint
from .legal import legal_commands
from .state import State


class SolitaireView(msgspec.Struct, kw_only=True):
    game_id: str = ""
    kind: Literal["solitaire"] = "solitaire"
    status: Literal["waiting", "playing", "finished"]
    version: int
    head: str = ""
    receipt: Receipt | None = None  # the service's signature of (game_id, version, head, at): set by the API
    seat: int | None
    name: str | None
    player_id: str | None = None
    account: Account | None = None
    """``bot`` for a bot (a server bot or a bot account), ``person`` for a person; ``null`` before the seat is taken."""
    public_key: str | None = None
    """The player's own key: every command of theirs is signed by it (docs/signed-commands.md)."""
    layout: list[list[str | None]]
    """Rows 0..3; index ``i`` of a row is slot ``i + 1``; ``null`` is a gap."""
    runs: list[int]
    redeals_left: int
    can_undo: bool
    stuck: bool = False
    """No move and no redeal left, the game still on (rules version 2): ``legal`` is ``undo`` and ``resign``."""
    hint: SolitaireClientCommand | None
    legal: list[SolitaireClientCommand]
    result: Literal["won", "lost"] | None
    reason: Literal["no_moves", "resigned", "idle"] | None = None
    seed_chosen: bool = False
    closed: Closed | None = None
    """Set when the server closed the game, nobody having played for ``idle_ms``: lost, ``reason`` ``idle``."""
    seeding: Seeding = "legacy"
    """How the game's seed is made (docs/rng.md): ``combined`` (from the committed server seed and ``client_seeds``),
    ``fixed`` (chosen at creation, dealt as is) or ``legacy`` (a game from before client seeds)."""
    seed_chosen_by: SeedChosenBy | None = None
    """Who chose a ``fixed`` game's seed (``setup.seed_chosen_by``): the ``admin``, or the game's ``creator`` where the
    kind lets a player choose the deal; ``null`` when the seed was not chosen."""
    client_seeds: list[str | None] = []
    """Each seat's client seed, by seat, as its ``seat_taken`` records it (public from the start): keep yours, and check
    it later with ``python -m replays verify LOG --client-seed SEAT:HEX``."""


def status_of(s: State) -> Literal["waiting", "playing", "finished"]:
    if s.phase in ("new", "waiting"):
        return "waiting"
    return "finished" if s.over else "playing"


def view(s: State, seat: int | None, *, reveal: bool = False) -> SolitaireView:
    """What ``seat`` (``None``: a spectator) sees; the same board for all, the commands only for the player."""
    own = seat == 0
    player = s.seats[0].player
    board = s.layout
    playing = own and s.phase == "playing"
    return SolitaireView(
        status=status_of(s),
        version=s.version,
        seat=0 if own else None,
        name=player.name if player else None,
        player_id=player.player_id if player else None,
        account=player.shown_account if player else None,
        public_key=player.public_key if player else None,
        layout=[list(row) for row in board] if board else [],
        runs=list(grid.runs(board)) if board else [],
        redeals_left=s.redeals_left,
        can_undo=playing and bool(s.history),
        stuck=s.stuck,
        hint=hint(s) if playing else None,  # type: ignore[arg-type]
        legal=legal_commands(s, 0) if own else [],  # type: ignore[arg-type]
        result=s.phase if s.over else None,  # type: ignore[arg-type]
        reason=s.lost_reason,  # type: ignore[arg-type]
        seed_chosen=s.config.seed_chosen,
        closed=s.closed,
        seeding=s.seeding,
        seed_chosen_by=seed_chosen_by(s.seeding, s.config),
        client_seeds=list(s.client_seeds),
    )
