"""``evolve``: the total fold of the card game's events into its table. No choices are made here.

A redacted event (``secret`` withheld) still folds: the hidden cards are simply not placed.
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import free_parking as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed, TurnClockRestarted, TurnClockStopped

from ..clock import clock_held
from ..close import closed_of
from ..setup import seeded
from .actions import script
from .progress import moves_on
from .state import Action, Pending, State, with_seat, without

replace = msgspec.structs.replace


def evolve(state: State, event: msgspec.Struct) -> State:
    s, version = _apply(event, state), state.version + 1
    return replace(s, version=version, progress=version if moves_on(s.rules_version, event) else s.progress)


@singledispatch
def _apply(event: msgspec.Struct, state: State) -> State:
    return state


@_apply.register
def _(e: ev.GameCreated, s: State) -> State:
    return replace(s, phase="waiting", rules_version=e.rules_version, seeding=e.seeding)


@_apply.register
def _(e: SeatTaken, s: State) -> State:
    return replace(with_seat(s, e.seat, player=e.player), **seeded(s, e, s.n))


@_apply.register
def _(e: ev.RoundDealt, s: State) -> State:
    hidden = e.secret
    seats = tuple(
        replace(seat, meter=0, points=(), hand=hidden.hands[i] if hidden else ()) for i, seat in enumerate(s.seats)
    )
    return replace(
        s,
        round=e.round,
        dealer=e.dealer,
        seats=seats,
        deck=hidden.deck if hidden else (),
        discard=(),
        second_chance=hidden.second_chance if hidden else (),
        second_chance_discard=(),
        action=None,
        pending=None,
    )


@_apply.register
def _(e: ev.TurnBegan, s: State) -> State:
    return replace(s, turn=e.turn, turn_seat=e.seat, phase="main", turn_deadline_at=e.deadline_at, turn_left_ms=None,
                   timed_out=False)  # fmt: skip


@_apply.register
def _(e: ev.CardsDrawn, s: State) -> State:
    drawn = e.secret.cards if e.secret else ()
    s = replace(s, deck=s.deck[e.count :])
    s = with_seat(s, e.seat, hand=s.seats[e.seat].hand + drawn)
    return _step_done(s) if e.reason == "second_chance" else s


@_apply.register
def _(e: ev.DeckReshuffled, s: State) -> State:
    order = e.secret.order if e.secret else ()
    if e.deck == "playing":
        return replace(s, deck=s.deck + order, discard=(), reshuffles=e.reshuffle)
    return replace(
        s, second_chance=s.second_chance + order, second_chance_discard=(), second_chance_reshuffles=e.reshuffle
    )


def _played(s: State, seat: int, *played: str, to_discard: bool = True) -> State:
    """Cards leave a hand (to the discard pile, or into play) and the turn's main play is made: the player played
    themselves, so their missed turns start again from 0."""
    s = with_seat(s, seat, hand=without(s.seats[seat].hand, *played), missed=0)
    if to_discard:
        s = replace(s, discard=s.discard + played)
    return s


@_apply.register
def _(e: ev.MeterFed, s: State) -> State:
    s = _played(s, e.seat, e.card)
    return replace(with_seat(s, e.seat, meter=e.meter), phase="after_main")


@_apply.register
def _(e: ev.ErrandRun, s: State) -> State:
    s = with_seat(s, e.seat, hand=without(s.seats[e.seat].hand, e.card), missed=0)
    if e.free_parking:
        s = _played(s, e.seat, e.free_parking)
    seat = s.seats[e.seat]
    return replace(with_seat(s, e.seat, meter=e.meter, points=seat.points + (e.card,)), phase="after_main")


@_apply.register
def _(e: ev.ThreeSwapped, s: State) -> State:
    return replace(_played(s, e.seat, *e.cards), phase="after_main")


@_apply.register
def _(e: ev.CardDiscarded, s: State) -> State:
    return replace(_played(s, e.seat, e.card), phase="after_main")


@_apply.register
def _(e: ev.TimeExpiresPlayed, s: State) -> State:
    s = _played(s, e.seat, e.card, to_discard=False)
    action = Action(kind="time_expires", by=e.seat, card=e.card, target=e.target, steps=_script(s, "time_expires", e))
    return replace(s, action=action, phase="after_main")


@_apply.register
def _(e: ev.OfficerJonesPlayed, s: State) -> State:
    s = _played(s, e.seat, e.card, to_discard=False)
    action = Action(kind="officer_jones", by=e.seat, card=e.card, target=e.target, steps=_script(s, "officer_jones", e))
    return replace(s, action=action)


@_apply.register
def _(e: ev.SecondChanceDrawn, s: State) -> State:
    s = replace(s, second_chance=s.second_chance[1:])
    return replace(s, action=Action(kind=e.effect, by=e.seat, card=e.card, steps=_script(s, e.effect, e)))


def _script(s: State, kind: str, e: msgspec.Struct) -> tuple[str, ...]:
    return script(s, kind, e.seat, getattr(e, "target", None))


@_apply.register
def _(e: ev.ResponseAwaited, s: State) -> State:
    return replace(s, pending=Pending(seat=e.seat, kind="respond", deadline_at=e.deadline_at))


@_apply.register
def _(e: ev.ChoiceAwaited, s: State) -> State:
    return replace(s, pending=Pending(seat=e.seat, kind=e.choice, deadline_at=e.deadline_at, options=e.options))


@_apply.register
def _(e: ev.Accepted, s: State) -> State:
    return _step_done(replace(s, pending=None))


@_apply.register
def _(e: ev.TalkedOut, s: State) -> State:
    s = replace(_played(s, e.seat, e.card), pending=None)
    action = s.action
    if action is None:
        return s
    if action.kind == "all_minus_20":
        return replace(s, action=replace(action, steps=action.steps[2:]))
    return replace(s, action=replace(action, steps=(), cancelled=True))


@_apply.register
def _(e: ev.Chosen, s: State) -> State:
    s = replace(s, pending=None)
    action = s.action
    if action is None:
        return s
    if e.choice == "target":
        action = replace(action, target=e.value)
    elif e.choice == "card":
        action = replace(action, chosen=e.value)
    else:
        action = replace(action, chosen=action.fan[e.value] if action.fan else None)
    return _step_done(replace(s, action=action))


@_apply.register
def _(e: ev.MeterSet, s: State) -> State:
    return _step_done(with_seat(s, e.seat, meter=e.meter))


@_apply.register
def _(e: ev.PointCardsFanned, s: State) -> State:
    fan = e.secret.order if e.secret else ()
    return _step_done(replace(s, action=replace(s.action, fan=fan))) if s.action else s


@_apply.register
def _(e: ev.PointCardMoved, s: State) -> State:
    s = with_seat(s, e.seat, points=without(s.seats[e.seat].points, e.card))
    if e.to is None:
        s = replace(s, discard=s.discard + (e.card,))
    else:
        s = with_seat(s, e.to, points=s.seats[e.to].points + (e.card,))
    return _step_done(s)


@_apply.register
def _(e: ev.PlacesTraded, s: State) -> State:
    a, b = s.seats[e.seat], s.seats[e.other]
    s = with_seat(s, e.seat, player=b.player, total=b.total, missed=b.missed)
    return _step_done(with_seat(s, e.other, player=a.player, total=a.total, missed=a.missed))


@_apply.register
def _(e: ev.RoundEnded, s: State) -> State:
    """The round is over: totals move on, and an action cut short by it leaves its card on its discard pile."""
    seats = tuple(replace(seat, total=total) for seat, total in zip(s.seats, e.totals, strict=True))
    if s.action is not None:
        s = _discarded(s, s.action.card)
    return replace(s, seats=seats, action=None, pending=None)


def _discarded(s: State, card: str) -> State:
    if card.startswith("SC-"):
        return replace(s, second_chance_discard=s.second_chance_discard + (card,))
    return replace(s, discard=s.discard + (card,))


@_apply.register
def _(e: ev.ActionResolved, s: State) -> State:
    return replace(_discarded(s, e.card), action=None, pending=None)


@_apply.register
def _(e: ev.TurnEnded, s: State) -> State:
    """A turn ended by its player with no main play (an empty hand) is still one they played themselves."""
    if s.phase == "main" and not s.timed_out:
        s = with_seat(s, e.seat, missed=0)
    return replace(s, turn_deadline_at=None, turn_left_ms=None)


@_apply.register
def _(e: ev.TurnTimedOut, s: State) -> State:
    """The server played the turn: the lowest card discarded (if any), the main play made, a missed turn counted."""
    s = replace(with_seat(s, e.seat, missed=e.missed), timed_out=True, turn_deadline_at=None)
    if e.card is None:
        return s
    s = with_seat(s, e.seat, hand=without(s.seats[e.seat].hand, e.card))
    return replace(s, discard=s.discard + (e.card,), phase="after_main")


@_apply.register
def _(e: TurnClockStopped | TurnClockRestarted, s: State) -> State:
    return clock_held(s, e)


@_apply.register
def _(e: ev.SeatForfeited, s: State) -> State:
    """Out of the game: the hand stays face down with the seat, out of play; Point cards and total stay as they are."""
    return with_seat(s, e.seat, forfeited=True, missed=e.missed)


@_apply.register
def _(e: ev.SeatResigned, s: State) -> State:
    """Out exactly as a forfeited seat is (``forfeited``), its resignation noted for the view and the standings. A
    choice of target that offered it is withdrawn: ``decide`` asks it again without the seat."""
    p = s.pending
    if p is not None and p.kind == "target" and e.seat in p.options:
        s = replace(s, pending=None)
    return with_seat(s, e.seat, forfeited=True, resigned=True)


@_apply.register
def _(e: ev.GameWon, s: State) -> State:
    return replace(s, phase="finished", winner=e.seat, pending=None)


@_apply.register
def _(e: GameClosed, s: State) -> State:
    return replace(s, phase="finished", pending=None, closed=closed_of(e))


@_apply.register
def _(e: SeedRevealed, s: State) -> State:
    return s


def _step_done(s: State) -> State:
    """The head of the current action's script is done."""
    if s.action is None or not s.action.steps:
        return s
    return replace(s, action=replace(s.action, steps=s.action.steps[1:]))
