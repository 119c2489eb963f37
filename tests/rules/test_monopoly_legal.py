"""Monopoly's ``legal_commands`` and out-of-turn play: every command listed is accepted; anything else a seat
sends is refused with a rule code and changes nothing; building, mortgaging, trading and bidding out of turn
never disturb the player whose turn it is."""

from __future__ import annotations

import random
from functools import lru_cache

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.events import monopoly as ev
from service.events.common import Timeout
from service.rules.errors import RuleViolation
from service.rules.monopoly import legal_commands, run
from service.rules.monopoly.legal import legal_forms
from service.rules.monopoly.state import State

from .monopoly_table import AT, started, table

EAGER = (ev.Roll, ev.Buy, ev.Decline, ev.ChooseTax, ev.Bid, ev.PassBid, ev.ClaimBuildings, ev.PayFine, ev.UseJailCard)


def random_game(seed: int, seats: int, rounds: int = 12) -> list[State]:
    """Every state between commands of a game of random legal play (mostly the turn's own commands, now and
    then an owner's or a trade), timing out a wait no one answers."""
    rnd = random.Random(seed)
    s, at, states = started(seats, max_rounds=rounds), AT, []
    while s.phase == "playing" and len(states) < 6000:
        states.append(s)
        p = s.pending
        order = [*(p.seats if p else ()), s.turn_seat, *s.opponents(s.turn_seat)]
        for seat in order:
            legal = legal_commands(s, seat)
            eager = [c for c in legal if isinstance(c, EAGER)]
            builds = [c for c in legal if isinstance(c, ev.Build)]
            if builds and rnd.random() < 0.5:
                eager = builds
            if p is not None and p.kind == "debt" and seat == p.seat:
                eager = legal
            choice = eager if eager and rnd.random() > 0.1 else legal if rnd.random() < 0.05 else []
            if choice:
                s = run(s, rnd.choice(choice), seat, at)[1]
                break
            if seat == s.turn_seat and rnd.random() < 0.02:
                give = ev.Holdings(cash=rnd.randrange(0, 50), squares=s.owned_by(seat)[:1])
                other = rnd.choice(s.opponents(seat))
                try:
                    s = run(
                        s, ev.OfferTrade(to=other, give=give, get=ev.Holdings(squares=s.owned_by(other)[:1])), seat, at
                    )[1]
                except RuleViolation:
                    pass
        else:
            if p is not None:
                at = max(at, p.deadline_at)
                s = run(s, Timeout(), None, at)[1]
    return states


@lru_cache(maxsize=1)
def pool() -> tuple[State, ...]:
    short = [s for seed in range(24) for s in random_game(seed, 2 + seed % 5)]
    long = [s for seed in range(100, 104) for s in random_game(seed, 2, rounds=200)]  # debts and bankruptcies
    return tuple(short + long)


def test_the_pool_reaches_every_kind_of_wait():
    kinds = {s.pending.kind for s in pool() if s.pending is not None}
    assert {"buy", "tax", "auction", "debt", "trade"} <= kinds


def test_every_listed_command_is_accepted():
    for s in pool()[::7]:
        for seat in range(s.n):
            for command in legal_commands(s, seat):
                try:
                    run(s, command, seat, AT)
                except RuleViolation as e:  # pragma: no cover - the failure message is the point
                    raise AssertionError(f"{command} listed for seat {seat} but refused: {e.code} {e.message}") from e


def test_the_roll_is_listed_for_the_turn_seat_only_and_only_when_nothing_blocks_it():
    for s in pool()[::5]:
        for seat in range(s.n):
            rolls = ev.Roll() in legal_commands(s, seat)
            assert rolls == (seat == s.turn_seat and s.step == "roll" and not s.blocked and s.phase == "playing")


def command_strategy() -> st.SearchStrategy[msgspec.Struct]:
    square = st.integers(0, 39)
    holdings = st.builds(
        ev.Holdings,
        cash=st.integers(0, 3000),
        squares=st.lists(square, max_size=3).map(tuple),
        jail_cards=st.lists(st.sampled_from(["CH08", "CC05"]), max_size=2).map(tuple),
    )
    trade = st.integers(1, 400)
    return st.one_of(
        st.sampled_from(
            [ev.Roll(), ev.PayFine(), ev.UseJailCard(), ev.Buy(), ev.Decline(), ev.PassBid(), ev.DeclareBankruptcy()]
        ),
        st.builds(ev.ChooseTax, choice=st.sampled_from(["flat", "percent"])),
        st.builds(ev.Bid, amount=st.integers(1, 3000)),
        st.builds(ev.Build, sites=st.lists(square, min_size=1, max_size=4).map(tuple)),
        st.builds(ev.ClaimBuildings, sites=st.lists(square, max_size=3).map(tuple)),
        st.builds(ev.SellBuilding, square=square),
        st.builds(ev.Mortgage, square=square),
        st.builds(ev.LiftMortgage, square=square),
        st.builds(ev.OfferTrade, to=st.integers(0, 7), give=holdings, get=holdings),
        st.builds(ev.AcceptTrade, trade=trade),
        st.builds(ev.RejectTrade, trade=trade),
        st.builds(ev.WithdrawTrade, trade=trade),
    )


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), command=command_strategy(), seat=st.one_of(st.none(), st.integers(0, 7)))
def test_any_command_is_either_accepted_or_refused_with_a_rule_code_and_nothing_changed(data, command, seat):
    s = data.draw(st.sampled_from(pool()))
    before = msgspec.json.encode(s)
    try:
        events, after = run(s, command, seat, AT)
    except RuleViolation as e:
        assert e.code and e.code.replace("_", "").isalpha()
        assert msgspec.json.encode(s) == before
        return
    assert events
    assert seat is not None and 0 <= seat < s.n and not s.seats[seat].bankrupt
    assert all(p.cash >= 0 for p in after.seats)


# --- out of turn -----------------------------------------------------------------------------------------


def test_building_mortgaging_and_trading_out_of_turn_leave_the_turn_as_it_was():
    t = table(3, own={1: (6, 8, 9, 39), 2: (1,)}, turn=0)
    before = (t.state.turn_seat, t.state.step, t.state.rolls)
    t.play(ev.Build(sites=(6, 8, 9)), 1).play(ev.Mortgage(square=39), 1)
    t.play(ev.OfferTrade(to=2, give=ev.Holdings(cash=100), get=ev.Holdings(squares=(1,))), 1)
    t.play(ev.AcceptTrade(trade=t.of(ev.TradeOffered)[0].trade), 2)
    assert (t.state.turn_seat, t.state.step, t.state.rolls) == before
    assert ev.Roll() in legal_commands(t.state, 0)
    assert ev.Roll() not in legal_commands(t.state, 1)


def test_a_trade_awaiting_an_answer_does_not_hold_up_the_turn():
    t = table(3, own={1: (39,)})
    t.play(ev.OfferTrade(to=2, give=ev.Holdings(squares=(39,))), 1)
    assert t.state.pending.kind == "trade" and not t.state.pending.blocking
    assert ev.Roll() in legal_commands(t.state, 0)
    t.dice(1, 2).play(ev.Roll(), 0)
    assert t.state.trades


def test_a_bankrupt_seat_and_a_finished_game_have_nothing_to_send():
    for seats in (3, 2):
        t = table(seats, own={1: (37, 39)}, levels={37: 5, 39: 5}, at={0: 35}, cash={0: 100}).dice(1, 1)
        t.play(ev.Roll(), 0).play(ev.DeclareBankruptcy(), 0)
        assert t.seat(0).bankrupt and legal_commands(t.state, 0) == []
        t.refused(ev.Roll(), 0, "bankrupt" if seats == 3 else "game_over")
    assert t.state.over and all(legal_commands(t.state, i) == [] for i in range(2))
    table().refused(ev.Roll(), None, "not_seated")


# --- the open-ended commands -------------------------------------------------------------------------------


def test_an_offer_example_is_listed_and_accepted_and_the_forms_bound_what_may_be_offered():
    t = table(3, own={0: (1, 3, 5), 1: (39,)}, levels={1: 1, 3: 1}, jail_cards={2: ("CC05",)})
    listed = legal_commands(t.state, 0)
    assert ev.OfferTrade(to=1, give=ev.Holdings(cash=1)) in listed
    forms = legal_forms(t.state, 0)
    assert forms.offer_trade.to == [1, 2] and forms.offer_trade.cash == 1500
    assert forms.offer_trade.squares == [5]  # the brown sites carry houses
    assert forms.offer_trade.their_squares == {1: [39], 2: []}
    assert forms.offer_trade.their_jail_cards == {1: [], 2: ["CC05"]}
    assert forms.build == [1, 3] and forms.bid is None


def test_no_offer_example_while_an_offer_of_yours_is_open():
    t = table(own={0: (1,)})
    t.play(ev.OfferTrade(to=1, give=ev.Holdings(squares=(1,))), 0)
    assert not any(isinstance(c, ev.OfferTrade) for c in legal_commands(t.state, 0))
    assert legal_forms(t.state, 0).offer_trade is None


def test_the_bid_form_runs_from_the_least_bid_to_the_bidders_cash():
    t = table(cash={1: 300}).dice(1, 2)
    t.play(ev.Roll(), 0).play(ev.Decline(), 0).play(ev.Bid(amount=20), 0)
    form = legal_forms(t.state, 1).bid
    assert (form.min, form.max) == (21, 300)
    assert ev.Bid(amount=21) in legal_commands(t.state, 1)
