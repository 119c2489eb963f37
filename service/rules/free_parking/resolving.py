"""Resolving an action: carrying an Officer Jones, a Time Expires or a Second Chance card's script forward, step by
step, to its next wait or its end — the effects of each step, the choices' options, and a wait on a seat that
resigned answered for it (RULES.md §1 "Resigning")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.events import free_parking as ev

from .. import rng
from . import actions, cards, clock
from .state import State
from .turns import Batch, check_win, draw, end_turn


def resolve(b: Batch) -> None:
    """Carry the current action's script forward to its next wait, or to its end."""
    while not b.over and b.state.action is not None:
        s = b.state
        a = s.action
        assert a is not None
        if not a.steps or is_void(s):
            void = bool(a.steps)
            b.emit(ev.ActionResolved(card=a.card, cancelled=a.cancelled or void))
            if a.kind not in ("officer_jones", "time_expires"):  # a Second Chance card ends the turn once resolved
                end_turn(b, None if void else next_after_trade(s, a))
            elif s.seats[s.turn_seat].forfeited:  # the seat on turn resigned meanwhile
                end_turn(b)
            return
        step = a.steps[0]
        kind, seat = actions.what(step), actions.who(s, step)
        if s.seats[seat].forfeited and kind in ("respond", "target", "card", "position"):
            answer_for_out(b, kind, seat)
            continue
        if kind == "respond":
            b.emit(ev.ResponseAwaited(seat=seat, action=a.kind, by=a.by, card=a.card, deadline_at=b.deadline))
            return
        if kind in ("target", "card", "position"):
            options = options_of(s, kind, seat)
            if len(options) == 1:
                b.emit(ev.Chosen(seat=seat, choice=kind, value=options[0], how="only_option"))
                continue
            b.emit(ev.ChoiceAwaited(seat=seat, choice=kind, options=options, deadline_at=b.deadline))
            return
        EFFECTS[kind](b, seat)


def is_void(s: State) -> bool:
    """An action a resignation left with nothing to do ends at once, cancelled: a trade of places with a seat that
    resigned (a live player must not be seated in its place), a Point card to take for a drawer that resigned (out,
    it gains nothing), or a target to name when every seat it could name has resigned. None can happen without a
    resignation."""
    a = s.action
    if a is None:
        return False
    out = s.seats[a.by].forfeited
    if a.kind == "take_point" and out:
        return True
    if a.kind == "trade_places" and (out or (a.target is not None and s.seats[a.target].forfeited)):
        return True
    return bool(a.steps) and actions.what(a.steps[0]) == "target" and not actions.target_options(s)


def answer_for_out(b: Batch, kind: str, seat: int) -> None:
    """A wait on a seat that resigned closes at once as if it had accepted, a choice with the server's default (the
    first option, as on a timeout)."""
    if kind == "respond":
        b.emit(ev.Accepted(seat=seat))
        return
    options = options_of(b.state, kind, seat)
    b.emit(ev.Chosen(seat=seat, choice=kind, value=options[0], how="resigned"))  # type: ignore[arg-type]


def next_after_trade(s: State, a: Any) -> int | None:
    """"Play proceeds to the next person whose turn it would have been if you hadn't moved": when the drawer
    traded with the player on their left, that player — now in the drawer's old seat — plays next."""
    nxt = clock.next_seat(s, s.turn_seat)
    if a.kind == "trade_places" and not a.cancelled and a.target == nxt:
        return s.turn_seat
    return None


def options_of(s: State, kind: str, seat: int) -> tuple[Any, ...]:
    """A choice's options, the server's default first."""
    a = s.action
    assert a is not None
    if kind == "target":
        return actions.target_options(s)
    if kind == "card":
        return tuple(cards.lowest_first(s.seats[seat].points))
    return tuple(range(len(a.fan)))


def fan(b: Batch, seat: int) -> None:
    """The target's Point cards, face down in an order of the RNG; the drawer will pick a position."""
    s = b.state
    order = rng.shuffle(s.rng_seed, f"unseen:{s.version + 1}", s.seats[seat].points)
    b.emit(ev.PointCardsFanned(seat=seat, count=len(order), secret=ev.OrderSecret(order=tuple(order))))


def move_point(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None and a.chosen is not None
    step = actions.what(a.steps[0])
    if step == "take":
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card, to=a.by))
        check_win(b, a.by)
    elif step == "give":
        assert a.target is not None
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card, to=a.target))
        check_win(b, a.target)
    else:
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card))


def set_meter(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None
    step, meter = actions.what(a.steps[0]), b.state.seats[seat].meter
    after = actions.gain_after(a.kind, meter) if step == "gain" else actions.meter_after(step, meter)
    b.emit(ev.MeterSet(seat=seat, meter=after, cause=a.card))


def trade_places(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None
    b.emit(ev.PlacesTraded(seat=a.by, other=seat))


def draw_two(b: Batch, seat: int) -> None:
    draw(b, seat, cards.SECOND_CHANCE_DRAWS, "second_chance")


EFFECTS: dict[str, Callable[[Batch, int], None]] = {
    "fan": fan,
    "take": move_point,
    "give": move_point,
    "lose": move_point,
    "expire": set_meter,
    "violation": set_meter,
    "minus_20": set_meter,
    "gain": set_meter,
    "trade": trade_places,
    "draw_2": draw_two,
}
