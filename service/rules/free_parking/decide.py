"""``decide``: the card game's rules. Each command either yields events or raises ``RuleViolation``.

A decision is built as a batch: every event is folded at once into a scratch state, so the next
rule sees the table as it now is (a draw after a reshuffle, a win the moment the points land).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from service.events import free_parking as ev
from service.events.common import Close, Create, TakeSeat, Timeout

from .. import batch, rng
from ..close import closing
from ..errors import RuleViolation
from ..setup import created, reveal_seed, seat_taken
from . import cards, clock, resolving, turns
from .legal import swap_draws
from .state import State
from .turns import Batch
from .view import status_of


def decide(state: State, command: msgspec.Struct, seat: int | None, at: int) -> list[msgspec.Struct]:
    """The events ``command`` from ``seat`` (``None``: the server) yields at time ``at`` (ms)."""
    return run(state, command, seat, at)[0]


def run(state: State, command: msgspec.Struct, seat: int | None, at: int) -> tuple[list[msgspec.Struct], State]:
    """``decide`` and the state after its events, folded once."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"{type(command).__name__} is not a command of this game")
    if seat is not None and not 0 <= seat < state.n:  # else seat -1 would act with the last seat's hand
        raise RuleViolation("not_a_seat", f"There is no seat {seat} at this table", seat=seat)
    if seat is not None and state.seats[seat].forfeited:
        raise RuleViolation("forfeited", "You forfeited this game: you no longer play", seat=seat)
    batch = Batch(state, at)
    handler(batch, command, seat)
    clock.hold(batch)  # version 3: a wait on another seat stops the turn clock, its end restarts it
    return batch.events, batch.state


# --- guards: each raises the rule code the API answers with ----------------------------------------


def _server_only(seat: int | None) -> None:
    if seat is not None:
        raise RuleViolation("server_only", "Only the server may send this command")


def _a_seat(seat: int | None) -> int:
    if seat is None:
        raise RuleViolation("seat_only", "This command must come from a seat")
    return seat


def _in_play(s: State) -> None:
    if s.phase in ("new", "waiting"):
        raise RuleViolation("game_not_started", "The game has not been dealt yet: every seat must be taken first")
    if s.phase == "finished":
        raise RuleViolation("game_over", "The game is over")


def _no_wait(s: State, seat: int) -> None:
    p = s.pending
    if p is None:
        return
    if p.seat == seat:
        what = "an answer (accept or talk_out)" if p.kind == "respond" else f"a choice of {p.kind}"
        raise RuleViolation("answer_owed", f"The game is waiting for your {what} first", pending=p.kind)
    raise RuleViolation("awaiting_response", f"The game is waiting for seat {p.seat} to answer", seat=p.seat)


def _my_turn(s: State, seat: int) -> None:
    _in_play(s)
    _no_wait(s, seat)
    if s.turn_seat != seat:
        raise RuleViolation("not_your_turn", f"It is seat {s.turn_seat}'s turn", turn=s.turn_seat)


def _main_play(s: State, seat: int) -> None:
    _my_turn(s, seat)
    if s.phase != "main":
        raise RuleViolation("main_play_done", "You have made this turn's main play: draw a Second Chance or end the turn")


def _after_main(s: State, seat: int) -> None:
    _my_turn(s, seat)
    if s.phase == "main" and s.seats[seat].hand:
        raise RuleViolation("main_play_required", "Make your main play first (feed, errand, special, swap or discard)")


def _holding(s: State, seat: int, card: str, kind: str | None = None) -> None:
    if card not in s.seats[seat].hand:
        raise RuleViolation("card_not_in_hand", f"{card} is not in your hand", card=card)
    if kind is not None and cards.kind_of(card) != kind:
        raise RuleViolation("wrong_card_kind", f"{card} is not a {kind} card", card=card, expected=kind)


def _opponent(s: State, seat: int, target: int) -> None:
    if target == seat or not 0 <= target < s.n or s.seats[target].forfeited:
        raise RuleViolation("invalid_target", f"Seat {target} is not an opponent at this table", target=target)


# --- setup ---------------------------------------------------------------------------------------


def _create(b: Batch, c: Create, seat: int | None) -> None:
    _server_only(seat)
    b.emit(created(ev.GameCreated, "free-parking", b.state, b.state.rules_version, c.seeding, key_id=c.key_id))


def _take_seat(b: Batch, c: TakeSeat, seat: int | None) -> None:
    _server_only(seat)
    s = b.state
    if s.phase != "waiting":
        raise RuleViolation("game_full" if s.phase != "new" else "game_not_started", "No seat is open in this game")
    free = next(i for i, st in enumerate(s.seats) if st.player is None)
    b.emit(seat_taken(s, free, c))
    if all(st.player is not None for st in b.state.seats):
        turns.deal(b, round_=1, dealer=0)


# --- main plays ----------------------------------------------------------------------------------


def _feed_meter(b: Batch, c: ev.FeedMeter, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    _holding(s, seat, c.card, "feed_meter")
    minutes = cards.value_of(c.card)
    meter = min(cards.METER_MAX, s.seats[seat].meter + minutes)
    b.emit(ev.MeterFed(seat=seat, card=c.card, minutes=minutes, meter=meter))


def _run_errand(b: Batch, c: ev.RunErrand, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    _holding(s, seat, c.card, "point")
    value, meter = cards.value_of(c.card), s.seats[seat].meter
    if meter < value:
        raise RuleViolation("meter_too_low", f"Your meter shows {meter} minutes; this errand needs {value}", meter=meter)
    points = s.seats[seat].score + value
    b.emit(ev.ErrandRun(seat=seat, card=c.card, value=value, meter=meter - value, points=points))
    turns.check_win(b, seat)


def _free_parking(b: Batch, c: ev.FreeParking, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    _holding(s, seat, c.card, "free_parking")
    _holding(s, seat, c.errand, "point")
    value, st = cards.value_of(c.errand), s.seats[seat]
    b.emit(
        ev.ErrandRun(seat=seat, card=c.errand, value=value, meter=st.meter, points=st.score + value, free_parking=c.card)
    )
    turns.check_win(b, seat)


def _time_expires(b: Batch, c: ev.TimeExpires, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    _holding(s, seat, c.card, "time_expires")
    _opponent(s, seat, c.target)
    b.emit(ev.TimeExpiresPlayed(seat=seat, card=c.card, target=c.target))
    resolving.resolve(b)


def _swap_three(b: Batch, c: ev.SwapThree, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    if len(set(c.cards)) != 3:
        raise RuleViolation("duplicate_cards", "Name three different cards to swap")
    for card in c.cards:
        _holding(s, seat, card)
    if s.rules_version == 1:  # version 1 discarded first, so a reshuffle could hand the three back
        b.emit(ev.ThreeSwapped(seat=seat, cards=c.cards))
        turns.draw(b, seat, cards.SWAP_SIZE, "swap")
        return
    if not swap_draws(s):
        raise RuleViolation("nothing_to_draw", "No new card can be drawn: the deck and the discard pile are empty")
    turns.draw(b, seat, cards.SWAP_SIZE, "swap")  # up to three new cards, before the three reach the discard pile
    b.emit(ev.ThreeSwapped(seat=seat, cards=c.cards))


def _discard(b: Batch, c: ev.Discard, seat: int | None) -> None:
    seat = _a_seat(seat)
    _main_play(b.state, seat)
    _holding(b.state, seat, c.card)
    b.emit(ev.CardDiscarded(seat=seat, card=c.card))


# --- after the main play -------------------------------------------------------------------------


def _draw_second_chance(b: Batch, c: ev.DrawSecondChance, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _after_main(s, seat)
    if not s.second_chance and not s.second_chance_discard:
        raise RuleViolation("second_chance_empty", "No Second Chance card is left to draw")
    if not s.second_chance:
        n = s.second_chance_reshuffles + 1
        order = rng.shuffle(s.rng_seed, f"reshuffle:second_chance:{n}", s.second_chance_discard)
        b.emit(
            ev.DeckReshuffled(
                deck="second_chance", count=len(order), reshuffle=n, secret=ev.OrderSecret(order=tuple(order))
            )
        )
    top = b.state.second_chance[0]
    b.emit(ev.SecondChanceDrawn(seat=seat, card=top, effect=cards.effect_of(top)))
    resolving.resolve(b)


def _end_turn_command(b: Batch, c: ev.EndTurn, seat: int | None) -> None:
    seat = _a_seat(seat)
    _after_main(b.state, seat)
    turns.end_turn(b)


# --- interrupts and answers ----------------------------------------------------------------------


def _officer_jones(b: Batch, c: ev.OfficerJones, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _in_play(s)
    _no_wait(s, seat)
    _holding(s, seat, c.card, "officer_jones")
    _opponent(s, seat, c.target)
    target = s.seats[c.target]
    if target.meter != 0:
        raise RuleViolation("target_not_in_violation", f"Seat {c.target}'s meter shows {target.meter} minutes")
    if not target.points:
        raise RuleViolation("target_has_no_points", f"Seat {c.target} has no Point card down")
    b.emit(ev.OfficerJonesPlayed(seat=seat, card=c.card, target=c.target, out_of_turn=seat != s.turn_seat))
    resolving.resolve(b)


def _awaited(s: State, seat: int, kinds: tuple[str, ...]) -> None:
    _in_play(s)
    p = s.pending
    if p is None or p.kind not in kinds:
        code = "no_response_awaited" if "respond" in kinds else "no_choice_awaited"
        raise RuleViolation(code, "Nothing of that kind is awaited from anyone now")
    if p.seat != seat:
        raise RuleViolation("awaiting_response", f"The game is waiting for seat {p.seat}, not you", seat=p.seat)


def _talk_out(b: Batch, c: ev.TalkOut, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _awaited(s, seat, ("respond",))
    _holding(s, seat, c.card, "talk_your_way_out")
    assert s.action is not None
    b.emit(ev.TalkedOut(seat=seat, card=c.card, cancelled=s.action.card))
    resolving.resolve(b)


def _accept(b: Batch, c: ev.Accept, seat: int | None) -> None:
    seat = _a_seat(seat)
    _awaited(b.state, seat, ("respond",))
    b.emit(ev.Accepted(seat=seat))
    resolving.resolve(b)


def _choose(b: Batch, c: ev.Choose, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _awaited(s, seat, ("target", "card", "position"))
    assert s.pending is not None
    given = {k: v for k, v in (("card", c.card), ("target", c.target), ("position", c.position)) if v is not None}
    kind = s.pending.kind
    if list(given) != [kind]:
        raise RuleViolation("wrong_choice", f"Choose exactly one {kind}", expected=kind)
    if given[kind] not in s.pending.options:
        raise RuleViolation("not_an_option", f"{given[kind]} is not a {kind} you may choose", options=s.pending.options)
    b.emit(ev.Chosen(seat=seat, choice=kind, value=given[kind]))
    resolving.resolve(b)


def _timeout(b: Batch, c: Timeout, seat: int | None) -> None:
    """The server answers for a seat whose deadline passed: accept, or the first option (the documented default)."""
    _server_only(seat)
    s = b.state
    _in_play(s)
    p = s.pending
    if p is None:
        _turn_timeout(b)
        return
    if b.at < p.deadline_at:
        raise RuleViolation("deadline_not_reached", "The deadline has not passed yet", deadline_at=p.deadline_at)
    if p.kind == "respond":
        b.emit(ev.Accepted(seat=p.seat, by_server=True))
    else:
        b.emit(ev.Chosen(seat=p.seat, choice=p.kind, value=p.options[0], how="timeout"))
    resolving.resolve(b)


def _turn_timeout(b: Batch) -> None:
    """The turn clock ran out (``clock``): the turn is played for its seat, or the seat forfeits; then the turn
    ends — or, one player left, that player wins (with their total in tournament mode)."""
    clock.time_out_turn(b)
    if not _last_one_wins(b):
        turns.end_turn(b)


def _last_one_wins(b: Batch) -> bool:
    """With one seat left in (the others forfeited or resigned), its player wins at once — with their cumulative
    total in tournament mode. Whether they did."""
    s = b.state
    if len(s.playing) != 1:
        return False
    last = s.playing[0]
    turns.won(b, last, s.seats[last].total if s.config.mode == "tournament" else s.seats[last].score)
    return True


def _resign(b: Batch, c: ev.Resign, seat: int | None) -> None:
    """RULES.md §1 "Resigning": the seat is out at once and for good, as a forfeited one is. One seat left in wins;
    else a wait on the resigned seat closes as if it had accepted (``resolving.resolve`` answers for an out seat), a trade of
    places it was part of is void, it can no longer be named a target, and its turn, if it was on turn, passes once
    no action is left in play."""
    seat = _a_seat(seat)
    _in_play(b.state)
    player, p = b.state.seats[seat].player, b.state.pending
    assert player is not None
    b.emit(ev.SeatResigned(seat=seat, player=player))
    if _last_one_wins(b):
        return
    s = b.state
    if s.action is not None:
        if p is not None and (p.seat == seat or resolving.is_void(s) or (p.kind == "target" and seat in p.options)):
            resolving.resolve(b)  # answered for it, void, or the choice of target asked again without it
    elif s.turn_seat == seat:
        turns.end_turn(b)


def _close(b: Batch, c: Close, seat: int | None) -> None:
    """Nobody moved for the service's idle time: the game ends with no winner, an action in play left as it lies."""
    b.emit(closing(b.state, status_of(b.state), c, seat, b.at))
    reveal_seed(b)


_HANDLERS: dict[type, Callable[[Batch, Any, int | None], None]] = {
    Create: _create,
    TakeSeat: _take_seat,
    Timeout: _timeout,
    Close: _close,
    ev.FeedMeter: _feed_meter,
    ev.RunErrand: _run_errand,
    ev.FreeParking: _free_parking,
    ev.TimeExpires: _time_expires,
    ev.SwapThree: _swap_three,
    ev.Discard: _discard,
    ev.DrawSecondChance: _draw_second_chance,
    ev.EndTurn: _end_turn_command,
    ev.OfficerJones: _officer_jones,
    ev.TalkOut: _talk_out,
    ev.Accept: _accept,
    ev.Choose: _choose,
    ev.Resign: _resign,
}
