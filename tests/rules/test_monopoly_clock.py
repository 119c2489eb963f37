"""Monopoly's turn clock (option ``turn_seconds``, docs/rules-monopoly.md): each chance to roll has a deadline; at it the
server's ``Timeout`` rolls for the player, counting a missed turn (reset when they roll themselves); at
``forfeit_after`` in a row the player forfeits — bankrupt to the bank — and with one player left the game is over."""

from __future__ import annotations

from msgspec.structs import replace

from service.events import monopoly as ev
from service.events.common import Timeout
from service.rules.monopoly import Log, turn_deadline, view

from .monopoly_table import AT, table

MINUTE = 60_000


def clocked(seats: int = 2, forfeit_after: int = 3, **layout):
    t = table(seats, **layout)
    config = replace(t.state.config, turn_seconds=60, forfeit_after=forfeit_after)
    t.state = replace(t.state, config=config, turn_deadline_at=AT + MINUTE)
    return t


def test_each_chance_to_roll_records_its_deadline():
    t = clocked().dice(2, 3)  # Reading Railroad... no: square 5, unowned: offered
    t.play(ev.Roll(), 0, at=AT + 1000)
    t.play(ev.Decline(), 0, at=AT + 2000)
    for seat in (0, 1):
        t.play(ev.PassBid(), seat, at=AT + 3000) if t.state.auction and seat in t.state.pending.seats else None
    began = t.of(ev.TurnBegan)
    assert began and began[0].seat == 1 and began[0].deadline_at == AT + 3000 + MINUTE
    assert view(t.state, 0).turn_deadline_at == began[0].deadline_at


def test_without_the_option_there_is_no_turn_clock():
    t = table()
    assert turn_deadline(t.state) is None
    assert view(t.state, 0).forfeit_after is None and view(t.state, 0).turn_deadline_at is None
    t.refused(Timeout(), None, "nothing_pending")


def test_at_the_deadline_the_server_rolls_for_the_player_and_counts_a_missed_turn():
    t = clocked(at={0: 10}).dice(1, 2)  # from Just Visiting to 13 (States Avenue, unowned)
    t.refused(Timeout(), None, "deadline_not_reached")
    t.play(Timeout(), None, at=AT + MINUTE)
    assert t.tags()[:2] == ["turn_timed_out", "dice_rolled"]
    assert t.of(ev.TurnTimedOut)[0] == ev.TurnTimedOut(seat=0, missed=1) and t.seat(0).missed == 1
    assert t.state.offer is not None and t.state.offer.kind == "buy"  # what the roll asks keeps its own deadline
    assert turn_deadline(t.state) is None


def test_doubles_give_a_new_deadline_and_rolling_oneself_resets_the_count():
    t = clocked(at={0: 10}).dice((2, 2), (1, 2))  # 14 (unowned), then again
    t.play(Timeout(), None, at=AT + MINUTE)
    t.play(ev.Decline(), 0, at=AT + MINUTE)
    while t.state.auction is not None:
        t.play(ev.PassBid(), t.state.pending.seat, at=AT + MINUTE)
    again = t.of(ev.RollAgain)
    assert again and again[0].deadline_at == AT + 2 * MINUTE and t.seat(0).missed == 1
    t.play(ev.Roll(), 0, at=AT + MINUTE + 1)
    assert t.seat(0).missed == 0


def test_a_trade_offer_open_does_not_hold_up_the_clock():
    t = clocked(own={0: [1], 1: [3]})
    t.play(ev.OfferTrade(to=1, give=ev.Holdings(squares=(1,)), get=ev.Holdings(cash=10)), 0, at=AT + 40_000)
    assert t.state.pending.kind == "trade" and turn_deadline(t.state) == AT + MINUTE
    t.play(Timeout(), None, at=AT + MINUTE)
    assert t.tags()[0] == "turn_timed_out" and t.state.trades  # the offer stays open


def test_the_third_missed_turn_forfeits_bankrupt_to_the_bank_and_one_left_wins():
    t = clocked(own={0: [1, 3]})
    t.state = replace(t.state, seats=(replace(t.seat(0), missed=2), *t.state.seats[1:]))
    t.play(Timeout(), None, at=AT + MINUTE)
    assert t.tags()[:2] == ["turn_timed_out", "seat_forfeited"] and "dice_rolled" not in t.tags()
    assert t.of(ev.SeatForfeited)[0].missed == 3
    assert t.of(ev.WentBankrupt)[0] == ev.WentBankrupt(seat=0, creditor=None)
    assert t.seat(0).bankrupt and t.state.auction is not None  # the bank auctions what was theirs
    seen = view(t.state, 1)
    assert seen.forfeit_after == 3 and seen.seats[0].forfeited and seen.seats[0].missed == 3
    assert not seen.seats[1].forfeited and seen.seats[1].missed == 0
    t.play(ev.Bid(amount=10), 1, at=AT + MINUTE)
    while not t.state.over:  # the bidding ends; the next lot, then the end
        t.play(Timeout(), None, at=t.state.pending.deadline_at)
    assert t.owner(1) == 1 and t.state.over
    assert t.of(ev.GameEnded)[0].winner == 1 and t.of(ev.GameEnded)[0].reason == "last_player"


def test_with_three_players_the_forfeit_passes_the_turn_and_the_bank_auctions():
    t = clocked(3, forfeit_after=1, own={0: [1]})
    t.play(Timeout(), None, at=AT + MINUTE)
    assert t.seat(0).bankrupt and t.seat(0).forfeited and t.state.auction is not None  # Mediterranean goes under the hammer
    while t.state.auction is not None:
        t.play(ev.PassBid(), t.state.pending.seat, at=AT + MINUTE)
    assert t.state.turn_seat == 1 and t.of(ev.TurnBegan)[-1].deadline_at == AT + 2 * MINUTE
    t.refused(ev.Roll(), 0, "bankrupt")


def test_the_log_names_the_roll_and_the_forfeit():
    t = clocked(forfeit_after=2).dice(1, 2)
    log = Log()
    t.play(Timeout(), None, at=AT + MINUTE)
    lines = [log.line(e, t.events[i + 1:], timed_out=i == 0) for i, e in enumerate(t.events)]
    assert lines[0] == "time ran out: seat 0's turn was played for them: the server rolls (1 missed turn in a row)"
    t.state = replace(t.state, step="roll", offer=None, turn_deadline_at=AT + 2 * MINUTE, timed_out=False)
    t.play(Timeout(), None, at=AT + 2 * MINUTE)
    lines = [log.line(e, t.events[i + 1:], timed_out=i == 0) for i, e in enumerate(t.events)]
    assert lines[:2] == ["time ran out on seat 0's turn (2 missed turns in a row)",
                         "seat 0 forfeits after 2 missed turns: bankrupt to the bank"]
