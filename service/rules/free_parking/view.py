"""``view``: the table as one seat may see it — its own hand, public facts, never a deck order or another hand.

Once the game is over every hand is shown (the seed is public by then anyway); ``reveal=True``
is the admin's view, which sees everything at any time.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.receipt import Receipt
from service.events.base import Account, Command
from service.events.common import Seeding
from service.events.free_parking import FreeParkingClientCommand

from ..close import Closed
from ..clock import turn_clock
from ..setup import SeedChosenBy, seed_chosen_by
from . import actions, cards
from .clock import turn_deadline
from .legal import legal_commands
from .state import State

Card = cards.Card


class PlayerView(msgspec.Struct, kw_only=True):
    seat: int
    name: str | None
    player_id: str | None = None
    bot: str | None = None
    account: Account | None = None
    """``bot`` for a bot (a server bot, ``bot`` naming its kind, or a bot account), ``person`` for a person; ``null``
    for an empty seat."""
    public_key: str | None = None
    """The player's own key: the seat is keyed, and its every command signed by it (docs/signed-commands.md)."""
    meter: int
    points: int
    point_cards: list[Card]
    hand_size: int
    total: int = 0
    missed: int = 0
    """Turns in a row the turn clock ran out on (``forfeit_after`` of them and the seat forfeits)."""
    forfeited: bool = False
    """Out of the game: forfeited on the turn clock, or resigned (``resigned`` then says so)."""
    resigned: bool = False
    hand: list[Card] | None = None


class ActionView(msgspec.Struct, kw_only=True):
    kind: str
    by: int
    card: str
    target: int | None = None


Respondent = Literal["named", "drawer", "opponent"]


class PendingView(msgspec.Struct, kw_only=True):
    kind: Literal["respond", "target", "card", "position"]
    seat: int
    deadline_at: int
    options: list[int | str] = []
    action: ActionView | None = None
    respondent: Respondent | None = None
    """Whose answer a ``respond`` wait awaits: the player the action names, the drawer (of their own card, or the
    second answer of a trade of places), or one of every opponent (``all_minus_20``). A trade asks "named", then
    "drawer"."""
    asked_next: list[int] = []
    """The seats this action will ask after this one, in order: a trade's named player sees the drawer here."""


class DecksView(msgspec.Struct, kw_only=True):
    playing: int
    discard: list[Card]
    second_chance: int
    second_chance_discard: list[str]


class You(msgspec.Struct, kw_only=True):
    hand: list[Card]


class FreeParkingView(msgspec.Struct, kw_only=True):
    game_id: str = ""
    kind: Literal["free-parking"] = "free-parking"
    status: Literal["waiting", "playing", "finished"]
    version: int
    head: str = ""
    receipt: Receipt | None = None  # the service's signature of (game_id, version, head, at): set by the API
    seat: int | None
    mode: str
    round: int
    dealer: int
    turn: int
    turn_number: int
    phase: str
    players: list[PlayerView]
    you: You | None
    pending: PendingView | None
    turn_deadline_at: int | None = None
    """When the turn clock runs out on the turn in play (option ``turn_seconds``): then the server plays it."""
    forfeit_after: int | None = None
    """With a turn clock: the missed turns in a row after which a seat forfeits."""
    decks: DecksView
    legal: list[FreeParkingClientCommand]
    winner: int | None
    closed: Closed | None = None
    """Why the game ended with no winner: the server closed it, nobody having moved for ``idle_ms``."""
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
    return "finished" if s.phase == "finished" else "playing"


def _cards(ids: tuple[str, ...]) -> list[Card]:
    return [cards.card(c) for c in ids]


def view(s: State, seat: int | None, *, reveal: bool = False) -> FreeParkingView:
    """What ``seat`` (``None``: a spectator) sees; ``reveal`` shows every hand (admin, or a finished game — but not a
    duplicate round's table: the other tables of its round play the same cards, and may still be playing)."""
    show_all = reveal or (s.phase == "finished" and s.seeding != "duplicate")
    players = [
        PlayerView(
            seat=i,
            name=st.player.name if st.player else None,
            player_id=st.player.player_id if st.player else None,
            bot=st.player.bot if st.player else None,
            account=st.player.shown_account if st.player else None,
            public_key=st.player.public_key if st.player else None,
            meter=st.meter,
            points=st.score,
            point_cards=_cards(st.points),
            hand_size=len(st.hand),
            total=st.total,
            missed=st.missed,
            forfeited=st.forfeited,
            resigned=st.resigned,
            hand=_cards(st.hand) if show_all else None,
        )
        for i, st in enumerate(s.seats)
    ]
    own = seat is not None and 0 <= seat < s.n
    legal: list[Command] = legal_commands(s, seat) if own else []  # type: ignore[arg-type]
    return FreeParkingView(
        status=status_of(s),
        version=s.version,
        seat=seat if own else None,
        mode=s.config.mode,
        round=s.round,
        dealer=s.dealer,
        turn=s.turn_seat,
        turn_number=s.turn,
        phase=s.phase,
        players=players,
        you=You(hand=_cards(s.seats[seat].hand)) if own else None,  # type: ignore[index]
        pending=_pending(s),
        turn_deadline_at=turn_deadline(s),
        forfeit_after=turn_clock(s.config)[1],
        decks=DecksView(
            playing=len(s.deck),
            discard=_cards(s.discard),
            second_chance=len(s.second_chance),
            second_chance_discard=list(s.second_chance_discard),
        ),
        legal=legal,  # type: ignore[arg-type]
        winner=s.winner,
        closed=s.closed,
        seeding=s.seeding,
        seed_chosen_by=seed_chosen_by(s.seeding, s.config),
        client_seeds=list(s.client_seeds),
    )


def _pending(s: State) -> PendingView | None:
    p, a = s.pending, s.action
    if p is None:
        return None
    out = PendingView(
        kind=p.kind,
        seat=p.seat,
        deadline_at=p.deadline_at,
        options=list(p.options),
        action=ActionView(kind=a.kind, by=a.by, card=a.card, target=a.target) if a else None,
    )
    if a is not None and p.kind == "respond":  # an answer is awaited once its target is named: every seat is known
        out.respondent = "named" if p.seat == a.target else "drawer" if p.seat == a.by else "opponent"
        out.asked_next = [actions.who(s, step) for step in a.steps[1:] if actions.what(step) == "respond"]
    return out
