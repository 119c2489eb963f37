"""``view``: the table as a seat (or a spectator) sees it. Everything but the deck order is public, so every
viewer sees the same table; only ``legal`` is the viewer's own."""

from __future__ import annotations

from typing import Literal

import msgspec

from service.events.base import Account
from service.events.common import Seeding
from service.events.monopoly import Holdings, Lot, MonopolyClientCommand
from service.events.receipt import Receipt

from ..close import Closed
from ..clock import turn_clock
from ..setup import SeedChosenBy, seed_chosen_by
from .board import SQUARES
from .clock import turn_deadline
from .legal import LegalForms, legal_commands, legal_forms, min_bid
from .state import State
from .worth import final_worth

Status = Literal["waiting", "playing", "finished"]


class SeatView(msgspec.Struct, kw_only=True):
    seat: int
    name: str | None
    player_id: str | None = None
    bot: str | None = None
    account: Account | None = None
    """``bot`` for a bot (a server bot, ``bot`` naming its kind, or a bot account), ``person`` for a person; ``null``
    for an empty seat."""
    public_key: str | None = None
    """The player's own key: the seat is keyed, and its every command signed by it (docs/signed-commands.md)."""
    cash: int
    position: int
    in_jail: bool
    jail_tries: int
    jail_cards: list[str]
    bankrupt: bool
    worth: int
    """Worth as the end of a timed game counts it."""
    missed: int = 0
    """Turns in a row the turn clock ran out on (``forfeit_after`` of them and the player forfeits)."""
    forfeited: bool = False
    """Out after ``forfeit_after`` missed turns: bankrupt to the bank (``bankrupt`` is set too)."""
    resigned: bool = False
    """Out because the player resigned: bankrupt to the bank (``bankrupt`` is set too)."""


class SiteView(msgspec.Struct, kw_only=True):
    square: int
    name: str
    type: str
    group: str | None = None
    price: int = 0
    house_cost: int = 0
    """What a house (or the hotel) costs on this site; sold back for half."""
    rent: list[int] = []
    """A street's rent bare, with 1–4 houses, and with the hotel (double the bare rent on a complete group)."""
    owner: int | None = None
    level: int = 0
    """0–4 houses, 5 a hotel."""
    mortgaged: bool = False


class OfferView(msgspec.Struct, kw_only=True):
    kind: Literal["buy", "tax"]
    seat: int
    deadline_at: int
    square: int | None = None
    price: int | None = None


class ClaimView(msgspec.Struct, kw_only=True):
    seat: int
    sites: list[int]


class AuctionView(msgspec.Struct, kw_only=True):
    lot: Lot
    bidders: list[int]
    passed: list[int]
    high_bid: int
    high_seat: int | None
    min_bid: int
    deadline_at: int
    lots_after: int
    """Auctions queued behind this one."""
    claims: list[ClaimView] = []
    """An auction of a scarce house or hotel: the sites each bidder still claims (what the lots go on for, until the
    claims are met or the bank is out); empty for a property."""


class ShortageView(msgspec.Struct, kw_only=True):
    kind: Literal["house", "hotel"]
    bank: int
    claims: list[ClaimView]
    awaited: list[int]
    deadline_at: int


class DebtView(msgspec.Struct, kw_only=True):
    seat: int
    creditor: int | None
    amount: int
    reason: str
    deadline_at: int


class TradeView(msgspec.Struct, kw_only=True):
    trade: int
    seat: int
    to: int
    give: Holdings
    get: Holdings
    deadline_at: int


class PendingView(msgspec.Struct, kw_only=True):
    seat: int
    seats: list[int]
    kind: str
    deadline_at: int


class MonopolyView(msgspec.Struct, kw_only=True):
    game_id: str = ""
    kind: Literal["monopoly"] = "monopoly"
    status: Status
    version: int
    head: str = ""
    receipt: Receipt | None = None  # the service's signature of (game_id, version, head, at): set by the API
    seat: int | None
    seats: list[SeatView]
    board: list[SiteView]
    houses: int
    hotels: int
    turn_seat: int
    round: int
    max_rounds: int | None
    step: Literal["roll", "moving"]
    dice: list[int] | None
    dice_by: int | None = None
    """The seat that threw ``dice`` (as seated when it threw them)."""
    dice_jailed: Literal["square", "card", "doubles"] | None = None
    """Set when ``dice``'s roll sent its roller to jail: Go To Jail, a card drawn on that move, or the third doubles."""
    doubles: int
    offer: OfferView | None
    auction: AuctionView | None
    shortage: ShortageView | None
    debts: list[DebtView]
    trades: list[TradeView]
    pending: PendingView | None
    turn_deadline_at: int | None = None
    """When the turn clock runs out on the roll in hand (option ``turn_seconds``): then the server rolls."""
    forfeit_after: int | None = None
    """With a turn clock: the missed turns in a row after which a player forfeits."""
    legal: list[MonopolyClientCommand]
    legal_forms: LegalForms | None = None
    """The bounds of ``legal``'s open-ended commands (bids, build orders, claims, trade offers)."""
    interest_paid: list[int] = []
    """Mortgaged squares received this turn whose 10% was paid on receipt: lifted for the bare mortgage, without a
    second 10%, until the turn ends (docs/rules-monopoly.md, "Mortgages")."""
    winner: int | None
    end_reason: str | None = None
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


def status_of(s: State) -> Status:
    if s.phase in ("new", "waiting"):
        return "waiting"
    return "finished" if s.over else "playing"


def view(s: State, seat: int | None, *, reveal: bool = False) -> MonopolyView:
    """The table for ``seat`` (``None``: a spectator). ``reveal`` changes nothing: no view shows the deck order."""
    own = seat if seat is not None and 0 <= seat < s.n else None
    legal = legal_commands(s, own) if own is not None else []
    p = s.pending
    return MonopolyView(
        status=status_of(s),
        version=s.version,
        seat=own,
        seats=[_seat_view(s, i) for i in range(s.n)],
        board=[_site_view(s, q) for q in range(len(SQUARES))],
        houses=s.houses,
        hotels=s.hotels,
        turn_seat=s.turn_seat,
        round=s.round,
        max_rounds=s.config.max_rounds,
        step=s.step,
        dice=list(s.last_dice) if s.rolls else None,
        dice_by=s.dice_by if s.rolls else None,
        dice_jailed=s.dice_jailed if s.rolls else None,
        doubles=s.doubles,
        offer=_offer_view(s),
        auction=_auction_view(s),
        shortage=_shortage_view(s),
        debts=[
            DebtView(
                seat=d.seat,
                creditor=d.creditor,
                amount=d.amount,
                reason=d.reason,
                deadline_at=d.deadline_at,
            )
            for d in s.debts
        ],
        trades=[
            TradeView(
                trade=t.id,
                seat=t.seat,
                to=t.to,
                give=t.give,
                get=t.get,
                deadline_at=t.deadline_at,
            )
            for t in s.trades
        ],
        pending=PendingView(seat=p.seat, seats=list(p.seats), kind=p.kind, deadline_at=p.deadline_at) if p else None,
        turn_deadline_at=turn_deadline(s),
        forfeit_after=turn_clock(s.config)[1],
        legal=legal,  # type: ignore[arg-type]
        legal_forms=legal_forms(s, own, legal) if own is not None else None,
        interest_paid=list(s.interest_paid),
        winner=s.winner,
        end_reason=s.end_reason,
        closed=s.closed,
        seeding=s.seeding,
        seed_chosen_by=seed_chosen_by(s.seeding, s.config),
        client_seeds=list(s.client_seeds),
    )


def _seat_view(s: State, i: int) -> SeatView:
    st = s.seats[i]
    player = st.player
    return SeatView(
        seat=i,
        name=player.name if player else None,
        player_id=player.player_id if player else None,
        bot=player.bot if player else None,
        account=player.shown_account if player else None,
        public_key=player.public_key if player else None,
        cash=st.cash,
        position=st.position,
        in_jail=st.in_jail,
        jail_tries=st.jail_tries,
        jail_cards=list(st.jail_cards),
        bankrupt=st.bankrupt,
        worth=0 if st.bankrupt else final_worth(s, i),
        missed=st.missed,
        forfeited=st.forfeited,
        resigned=st.resigned,
    )


def _site_view(s: State, q: int) -> SiteView:
    sq, site = SQUARES[q], s.sites[q]
    return SiteView(
        square=q, name=sq.name, type=sq.type, group=sq.group, price=sq.price, house_cost=sq.house_cost,
        rent=list(sq.rent), owner=site.owner, level=site.level, mortgaged=site.mortgaged,
    )  # fmt: skip


def _offer_view(s: State) -> OfferView | None:
    o = s.offer
    if o is None:
        return None
    if o.kind == "tax":
        return OfferView(kind="tax", seat=o.seat, deadline_at=o.deadline_at)
    return OfferView(
        kind="buy",
        seat=o.seat,
        deadline_at=o.deadline_at,
        square=o.square,
        price=SQUARES[o.square].price,
    )


def _auction_view(s: State) -> AuctionView | None:
    a = s.auction
    if a is None:
        return None
    return AuctionView(
        lot=a.lot, bidders=list(a.bidders), passed=list(a.passed), high_bid=a.high_bid, high_seat=a.high_seat,
        min_bid=min_bid(a), deadline_at=a.deadline_at, lots_after=len(s.lots),
        claims=[ClaimView(seat=c.seat, sites=list(c.sites)) for c in s.lot_claims] if not isinstance(a.lot, int) else [],
    )  # fmt: skip


def _shortage_view(s: State) -> ShortageView | None:
    w = s.shortage
    if w is None:
        return None
    return ShortageView(
        kind=w.kind,
        bank=s.houses if w.kind == "house" else s.hotels,
        claims=[ClaimView(seat=c.seat, sites=list(c.sites)) for c in w.claims],
        awaited=list(w.awaited),
        deadline_at=w.deadline_at,
    )
