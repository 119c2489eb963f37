"""``decide``: Monopoly's rules (RULES.md §3). Each command either yields events or raises ``RuleViolation``.

The rules live by concern — ``turn`` (dice, moves, squares, cards, jail), ``money`` (payments, debts,
bankruptcy), ``auctions``, ``building``, ``mortgages``, ``trades`` — and this module routes a command to them, then
lets the game run on (``settle``) as far as it can without a player: debts paid once the cash is there, an auction
closed once every other bidder passed, the next lot opened, the move finished, the turn passed on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from service.events import monopoly as ev
from service.events.common import Close, Create, TakeSeat, Timeout

from .. import rng
from ..close import closing
from ..errors import RuleViolation
from ..setup import created, reveal_seed, seat_taken
from . import auctions, building, clock, mortgages, trades, turn
from .batch import Batch
from .board import STARTING_CASH
from .cards import CHANCE, CHEST
from .money import check_bankruptcy, go_bankrupt, pay_debts
from .state import State
from .view import status_of

KIND = "monopoly"


def decide(state: State, command: msgspec.Struct, seat: int | None, at: int) -> list[msgspec.Struct]:
    """The events ``command`` from ``seat`` (``None``: the server) yields at ``at`` (ms, for deadlines)."""
    return run(state, command, seat, at)[0]


def run(state: State, command: msgspec.Struct, seat: int | None, at: int) -> tuple[list[msgspec.Struct], State]:
    """``decide`` and the state after its events, folded once."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"{type(command).__name__} is not a command of this game")
    b = Batch(state, at)
    handler(b, command, seat)
    if b.state.phase == "playing":
        settle(b)
    clock.hold(b)  # version 3: a wait that holds up the turn stops the roll's clock, its end restarts it
    return b.events, b.state


def settle(b: Batch) -> None:
    """Run the game on until it waits on a player."""
    while b.state.phase == "playing":
        pay_debts(b)
        s = b.state
        if s.debts or s.offer:
            return
        if s.shortage is not None:
            if s.shortage.awaited:
                return
            building.resolve_shortage(b)
        elif s.auction is not None:
            if not auctions.closable(s.auction):
                return
            _close_auction(b)
        elif s.lots:
            _next_lot(b)
        elif len(s.live) <= 1:
            turn.end_game(b, "last_player")
        elif s.step == "moving" or s.seats[s.turn_seat].bankrupt:
            turn.finish_move(b)
        else:
            return


def _next_lot(b: Batch) -> None:
    lot = b.state.lots[0]
    if isinstance(lot, int):
        auctions.open_auction(b, lot, auctions.property_bidders(b.state))
    else:
        building.scarce_round(b)


def _close_auction(b: Batch) -> None:
    """A property to the high bidder; a scarce building onto the winner's first claimed site that takes it (one
    who can no longer place it wins nothing, and the sharing out ends)."""
    s = b.state
    a = s.auction
    assert a is not None
    if isinstance(a.lot, int) or a.high_seat is None:
        auctions.close_auction(b)
        if not isinstance(a.lot, int):
            b.emit(ev.ShortageResolved(auction=False))
        return
    claim = next((c for c in s.lot_claims if c.seat == a.high_seat), None)
    square = building.first_placeable(s, claim, a.lot) if claim else None  # type: ignore[arg-type]
    if square is None:
        b.emit(ev.AuctionClosed(lot=a.lot, winner=None, amount=0))
        b.emit(ev.ShortageResolved(auction=False))
        return
    auctions.close_auction(b, square)


# --- guards ---------------------------------------------------------------------------------------


def _server_only(seat: int | None) -> None:
    if seat is not None:
        raise RuleViolation("server_only", "Only the server may send this command")


def _player(s: State, seat: int | None) -> int:
    """A client command: from a seat still in a game being played."""
    if s.phase in ("new", "waiting"):
        raise RuleViolation("game_not_started", "The game has not started yet")
    if s.phase == "over":
        raise RuleViolation("game_over", "The game is over")
    if seat is None or not 0 <= seat < s.n:
        raise RuleViolation("not_seated", "Only a player of this game may do that")
    if s.seats[seat].bankrupt:
        raise RuleViolation("bankrupt", "You are out of the game")
    return seat


# --- setup ----------------------------------------------------------------------------------------


def _create(b: Batch, c: Create, seat: int | None) -> None:
    _server_only(seat)
    b.emit(created(ev.GameCreated, KIND, b.state, b.state.rules_version, c.seeding, key_id=c.key_id))


def _take_seat(b: Batch, c: TakeSeat, seat: int | None) -> None:
    """Seats fill in order; with the last one the cash is handed out, the decks shuffled, and seat 0 begins."""
    _server_only(seat)
    s = b.state
    if s.phase != "waiting":
        raise RuleViolation(
            "game_full" if s.phase != "new" else "game_not_started",
            "No seat is open in this game",
        )
    free = next(i for i, p in enumerate(s.seats) if p.player is None)
    b.emit(seat_taken(s, free, c))
    if all(p.player is not None for p in b.state.seats):
        order = ev.DeckOrder(
            chance=tuple(rng.shuffle(b.state.rng_seed, "deck:chance", [c.id for c in CHANCE])),
            chest=tuple(rng.shuffle(b.state.rng_seed, "deck:chest", [c.id for c in CHEST])),
        )
        b.emit(ev.GameStarted(cash=STARTING_CASH, secret=order))
        b.emit(ev.TurnBegan(seat=0, round=1, deadline_at=b.turn_deadline))


# --- the server's timeout -------------------------------------------------------------------------


def _timeout(b: Batch, c: Timeout, seat: int | None) -> None:
    """A wait's deadline passed: the server answers as the rules default — bankrupt a debtor, decline a purchase,
    take the flat tax, close a claim window or an auction as it stands, expire a trade offer; or the turn clock ran
    out: roll for the player (``clock``)."""
    _server_only(seat)
    s = b.state
    p = s.pending
    if clock.turn_deadline(s) is not None and (p is None or (not p.blocking and b.at < p.deadline_at)):
        clock.time_out_turn(b)  # the roll's time ran out (a trade offer still open does not hold it up)
        return
    if s.phase != "playing" or p is None:
        raise RuleViolation("nothing_pending", "The game waits on no one")
    if b.at < p.deadline_at:
        raise RuleViolation(
            "deadline_not_reached",
            "The deadline has not passed yet",
            deadline_at=p.deadline_at,
        )
    if p.kind == "debt":
        debt = s.debts[0]
        go_bankrupt(b, debt.seat, debt.creditor)
    elif p.kind == "buy":
        turn.decline(b, None)
    elif p.kind == "tax":
        turn.choose_tax(b, None, "flat")
    elif p.kind == "shortage":
        building.resolve_shortage(b)
    elif p.kind == "auction":
        _close_auction(b)
    else:
        expired = min(s.trades, key=lambda t: (t.deadline_at, t.id))
        b.emit(ev.TradeClosed(trade=expired.id, why="expired"))


def _close(b: Batch, c: Close, seat: int | None) -> None:
    """Nobody moved for the service's idle time: the game ends with no winner and every open wait lapses."""
    b.emit(closing(b.state, status_of(b.state), c, seat, b.at))
    reveal_seed(b)


# --- play -----------------------------------------------------------------------------------------


def _on(check: Callable[..., None]) -> Callable[[Batch, Any, int | None], None]:
    """A handler for a player's command: the guard, then ``check(batch, seat, command)``."""

    def handle(b: Batch, c: Any, seat: int | None) -> None:
        check(b, _player(b.state, seat), c)

    return handle


def _resign(b: Batch, seat: int, c: ev.Resign) -> None:
    """RULES.md §3 "Resigning": bankruptcy to the bank exactly as a forfeit (``clock.time_out_turn``) — buildings
    sold back at half price, cash to the bank, jail cards back, properties auctioned. What the player was part of
    closes first: their trade offers, made or received, are void; their bids, claims and debts lapse with the
    bankruptcy itself (``went_bankrupt``), and ``settle`` runs the game on (the last player left wins)."""
    s = b.state
    if len(s.live) <= 1:  # the others are bankrupt and their estate still under the hammer: the game is won
        raise RuleViolation("last_player", "You are the last player left: the game is yours once the auctions close")
    player = s.seats[seat].player
    assert player is not None
    b.emit(ev.SeatResigned(seat=seat, player=player))
    for t in s.trades:
        if seat in (t.seat, t.to):
            b.emit(ev.TradeClosed(trade=t.id, why="void"))
    go_bankrupt(b, seat, None)


def _declare_bankruptcy(b: Batch, seat: int, c: ev.DeclareBankruptcy) -> None:
    check_bankruptcy(b.state, seat)
    debt = next(d for d in b.state.debts if d.seat == seat)
    go_bankrupt(b, seat, debt.creditor)


_HANDLERS: dict[type, Callable[[Batch, Any, int | None], None]] = {
    Create: _create,
    TakeSeat: _take_seat,
    Timeout: _timeout,
    Close: _close,
    ev.Roll: _on(lambda b, seat, c: turn.roll(b, seat)),
    ev.PayFine: _on(lambda b, seat, c: turn.pay_fine(b, seat)),
    ev.UseJailCard: _on(lambda b, seat, c: turn.use_jail_card(b, seat)),
    ev.Buy: _on(lambda b, seat, c: turn.buy(b, seat)),
    ev.Decline: _on(lambda b, seat, c: turn.decline(b, seat)),
    ev.ChooseTax: _on(lambda b, seat, c: turn.choose_tax(b, seat, c.choice)),
    ev.Bid: _on(lambda b, seat, c: auctions.bid(b, seat, c.amount)),
    ev.PassBid: _on(lambda b, seat, c: auctions.pass_bid(b, seat)),
    ev.Build: _on(lambda b, seat, c: building.build(b, seat, c.sites)),
    ev.ClaimBuildings: _on(lambda b, seat, c: building.claim(b, seat, c.sites)),
    ev.SellBuilding: _on(lambda b, seat, c: building.sell(b, seat, c.square, c.levels)),
    ev.Mortgage: _on(lambda b, seat, c: mortgages.mortgage(b, seat, c.square)),
    ev.LiftMortgage: _on(lambda b, seat, c: mortgages.lift(b, seat, c.square)),
    ev.OfferTrade: _on(lambda b, seat, c: trades.offer(b, seat, c.to, c.give, c.get)),
    ev.AcceptTrade: _on(lambda b, seat, c: trades.accept(b, seat, c.trade)),
    ev.RejectTrade: _on(lambda b, seat, c: trades.reject(b, seat, c.trade)),
    ev.WithdrawTrade: _on(lambda b, seat, c: trades.withdraw(b, seat, c.trade)),
    ev.DeclareBankruptcy: _on(_declare_bankruptcy),
    ev.Resign: _on(_resign),
}
