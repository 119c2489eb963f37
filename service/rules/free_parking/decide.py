"""``decide``: the card game's rules. Each command either yields events or raises ``RuleViolation``.

A decision is built as a batch: every event is folded at once into a scratch state, so the next
rule sees the table as it now is (a draw after a reshuffle, a win the moment the points land).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from service.events import free_parking as ev
from service.events.common import Close, Create, SeedRevealed, TakeSeat, Timeout

from .. import batch, rng
from ..close import closing
from ..errors import RuleViolation
from ..setup import created, seat_taken
from . import actions, cards, clock
from .evolve import evolve
from .legal import swap_draws
from .state import State
from .view import status_of


class Batch(batch.Batch[State]):
    """The events of one decision, and the table they leave."""

    evolve = staticmethod(evolve)

    @property
    def over(self) -> bool:
        return self.state.phase == "finished"


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
        _deal(b, round_=1, dealer=0)


def _deal(b: Batch, round_: int, dealer: int) -> None:
    """Shuffle both decks, five cards each from the dealer's left, one at a time; the next seat plays first."""
    s = b.state
    sets = cards.sets_for(s.n)
    deck = rng.shuffle(s.rng_seed, f"deal:{round_}:playing", [c.id for c in cards.playing_deck(sets)])
    second = rng.shuffle(s.rng_seed, f"deal:{round_}:second_chance", [c.id for c in cards.second_chance_deck(sets)])
    hands: list[list[str]] = [[] for _ in range(s.n)]
    order = [(dealer + k) % s.n for k in range(1, s.n + 1) if not s.seats[(dealer + k) % s.n].forfeited]
    for _ in range(cards.DEAL_SIZE):
        for seat in order:
            hands[seat].append(deck.pop(0))
    secret = ev.DealSecret(hands=tuple(tuple(h) for h in hands), deck=tuple(deck), second_chance=tuple(second))
    b.emit(ev.RoundDealt(round=round_, dealer=dealer, hand_size=cards.DEAL_SIZE, secret=secret))
    _begin_turn(b, clock.next_seat(s, dealer))


def _begin_turn(b: Batch, seat: int) -> None:
    """A turn starts with the server drawing the player's hand up to six."""
    b.emit(ev.TurnBegan(seat=seat, turn=b.state.turn + 1, deadline_at=b.turn_deadline))
    _draw(b, seat, cards.HAND_SIZE - len(b.state.seats[seat].hand), "turn")


def _draw(b: Batch, seat: int, count: int, reason: str) -> None:
    """Draw from the playing deck; when it runs short, the discard pile is shuffled in under it."""
    s = b.state
    if len(s.deck) < count and s.discard:
        n = s.reshuffles + 1
        order = rng.shuffle(s.rng_seed, f"reshuffle:playing:{n}", s.discard)
        b.emit(ev.DeckReshuffled(deck="playing", count=len(order), reshuffle=n, secret=ev.OrderSecret(order=tuple(order))))
    take = b.state.deck[: max(count, 0)]
    if take or reason == "second_chance":
        b.emit(ev.CardsDrawn(seat=seat, count=len(take), reason=reason, secret=ev.CardsSecret(cards=take)))


def _end_turn(b: Batch, after: int | None = None) -> None:
    """The turn passes to the next seat — or to ``after``, where a trade moved the player who was next."""
    seat = b.state.turn_seat
    b.emit(ev.TurnEnded(seat=seat))
    _begin_turn(b, clock.next_seat(b.state, seat) if after is None else after)


def _check_win(b: Batch, seat: int) -> None:
    """The moment a seat's Point cards total 200 or more, its player wins — on their turn or not. In tournament
    mode, 150 ends the round instead."""
    st = b.state.seats[seat]
    if st.forfeited:  # a resigned drawer may still be handed a Point card by its action: out, it wins nothing
        return
    if b.state.config.mode == "tournament":
        if st.score >= cards.ROUND_POINTS:
            _end_round(b, seat)
    elif st.score >= cards.WINNING_POINTS:
        _won(b, seat, st.score)


def _won(b: Batch, seat: int, points: int) -> None:
    player = b.state.seats[seat].player
    assert player is not None
    b.emit(ev.GameWon(seat=seat, player=player, points=points))
    b.emit(SeedRevealed(seed=b.state.seed.hex()))


def _end_round(b: Batch, seat: int) -> None:
    """Tournament: the seat that reached 150 scores its round total + 25, every other its round total. Once a
    cumulative total reaches 300 the highest wins; a tie at the top plays another round. Else the next seat deals."""
    s = b.state
    scores = tuple(st.score + (cards.ROUND_BONUS if i == seat else 0) for i, st in enumerate(s.seats))
    totals = tuple(st.total + score for st, score in zip(s.seats, scores, strict=True))
    b.emit(ev.RoundEnded(round=s.round, seat=seat, scores=scores, totals=totals))
    top = max(totals[i] for i in s.playing)  # a forfeited seat keeps its total, but wins nothing
    leaders = [i for i in s.playing if totals[i] == top]
    if top >= cards.TOURNAMENT_POINTS and len(leaders) == 1:
        _won(b, leaders[0], top)
    else:
        _deal(b, round_=s.round + 1, dealer=(s.dealer + 1) % s.n)


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
    _check_win(b, seat)


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
    _check_win(b, seat)


def _time_expires(b: Batch, c: ev.TimeExpires, seat: int | None) -> None:
    seat = _a_seat(seat)
    s = b.state
    _main_play(s, seat)
    _holding(s, seat, c.card, "time_expires")
    _opponent(s, seat, c.target)
    b.emit(ev.TimeExpiresPlayed(seat=seat, card=c.card, target=c.target))
    _resolve(b)


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
        _draw(b, seat, cards.SWAP_SIZE, "swap")
        return
    if not swap_draws(s):
        raise RuleViolation("nothing_to_draw", "No new card can be drawn: the deck and the discard pile are empty")
    _draw(b, seat, cards.SWAP_SIZE, "swap")  # up to three new cards, before the three reach the discard pile
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
    _resolve(b)


def _end_turn_command(b: Batch, c: ev.EndTurn, seat: int | None) -> None:
    seat = _a_seat(seat)
    _after_main(b.state, seat)
    _end_turn(b)


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
    _resolve(b)


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
    _resolve(b)


def _accept(b: Batch, c: ev.Accept, seat: int | None) -> None:
    seat = _a_seat(seat)
    _awaited(b.state, seat, ("respond",))
    b.emit(ev.Accepted(seat=seat))
    _resolve(b)


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
    _resolve(b)


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
    _resolve(b)


def _turn_timeout(b: Batch) -> None:
    """The turn clock ran out (``clock``): the turn is played for its seat, or the seat forfeits; then the turn
    ends — or, one player left, that player wins (with their total in tournament mode)."""
    clock.time_out_turn(b)
    if not _last_one_wins(b):
        _end_turn(b)


def _last_one_wins(b: Batch) -> bool:
    """With one seat left in (the others forfeited or resigned), its player wins at once — with their cumulative
    total in tournament mode. Whether they did."""
    s = b.state
    if len(s.playing) != 1:
        return False
    last = s.playing[0]
    _won(b, last, s.seats[last].total if s.config.mode == "tournament" else s.seats[last].score)
    return True


def _resign(b: Batch, c: ev.Resign, seat: int | None) -> None:
    """RULES.md §1 "Resigning": the seat is out at once and for good, as a forfeited one is. One seat left in wins;
    else a wait on the resigned seat closes as if it had accepted (``_resolve`` answers for an out seat), a trade of
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
        if p is not None and (p.seat == seat or _void(s) or (p.kind == "target" and seat in p.options)):
            _resolve(b)  # answered for it, void, or the choice of target asked again without it
    elif s.turn_seat == seat:
        _end_turn(b)


def _close(b: Batch, c: Close, seat: int | None) -> None:
    """Nobody moved for the service's idle time: the game ends with no winner, an action in play left as it lies."""
    b.emit(closing(b.state, status_of(b.state), c, seat, b.at))
    b.emit(SeedRevealed(seed=b.state.seed.hex()))


# --- resolving an action -------------------------------------------------------------------------


def _resolve(b: Batch) -> None:
    """Carry the current action's script forward to its next wait, or to its end."""
    while not b.over and b.state.action is not None:
        s = b.state
        a = s.action
        assert a is not None
        if not a.steps or _void(s):
            void = bool(a.steps)
            b.emit(ev.ActionResolved(card=a.card, cancelled=a.cancelled or void))
            if a.kind not in ("officer_jones", "time_expires"):  # a Second Chance card ends the turn once resolved
                _end_turn(b, None if void else _next_after_trade(s, a))
            elif s.seats[s.turn_seat].forfeited:  # the seat on turn resigned meanwhile
                _end_turn(b)
            return
        step = a.steps[0]
        kind, seat = actions.what(step), actions.who(s, step)
        if s.seats[seat].forfeited and kind in ("respond", "target", "card", "position"):
            _answer_for_out(b, kind, seat)
            continue
        if kind == "respond":
            b.emit(ev.ResponseAwaited(seat=seat, action=a.kind, by=a.by, card=a.card, deadline_at=b.deadline))
            return
        if kind in ("target", "card", "position"):
            options = _options(s, kind, seat)
            if len(options) == 1:
                b.emit(ev.Chosen(seat=seat, choice=kind, value=options[0], how="only_option"))
                continue
            b.emit(ev.ChoiceAwaited(seat=seat, choice=kind, options=options, deadline_at=b.deadline))
            return
        _EFFECTS[kind](b, seat)


def _void(s: State) -> bool:
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


def _answer_for_out(b: Batch, kind: str, seat: int) -> None:
    """A wait on a seat that resigned closes at once as if it had accepted, a choice with the server's default (the
    first option, as on a timeout)."""
    if kind == "respond":
        b.emit(ev.Accepted(seat=seat))
        return
    options = _options(b.state, kind, seat)
    b.emit(ev.Chosen(seat=seat, choice=kind, value=options[0], how="resigned"))  # type: ignore[arg-type]


def _next_after_trade(s: State, a: Any) -> int | None:
    """"Play proceeds to the next person whose turn it would have been if you hadn't moved": when the drawer
    traded with the player on their left, that player — now in the drawer's old seat — plays next."""
    nxt = clock.next_seat(s, s.turn_seat)
    if a.kind == "trade_places" and not a.cancelled and a.target == nxt:
        return s.turn_seat
    return None


def _options(s: State, kind: str, seat: int) -> tuple[Any, ...]:
    """A choice's options, the server's default first."""
    a = s.action
    assert a is not None
    if kind == "target":
        return actions.target_options(s)
    if kind == "card":
        return tuple(cards.lowest_first(s.seats[seat].points))
    return tuple(range(len(a.fan)))


def _fan(b: Batch, seat: int) -> None:
    """The target's Point cards, face down in an order of the RNG; the drawer will pick a position."""
    s = b.state
    order = rng.shuffle(s.rng_seed, f"unseen:{s.version + 1}", s.seats[seat].points)
    b.emit(ev.PointCardsFanned(seat=seat, count=len(order), secret=ev.OrderSecret(order=tuple(order))))


def _move_point(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None and a.chosen is not None
    step = actions.what(a.steps[0])
    if step == "take":
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card, to=a.by))
        _check_win(b, a.by)
    elif step == "give":
        assert a.target is not None
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card, to=a.target))
        _check_win(b, a.target)
    else:
        b.emit(ev.PointCardMoved(seat=seat, card=a.chosen, cause=a.card))


def _meter(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None
    step, meter = actions.what(a.steps[0]), b.state.seats[seat].meter
    after = actions.gain_after(a.kind, meter) if step == "gain" else actions.meter_after(step, meter)
    b.emit(ev.MeterSet(seat=seat, meter=after, cause=a.card))


def _trade(b: Batch, seat: int) -> None:
    a = b.state.action
    assert a is not None
    b.emit(ev.PlacesTraded(seat=a.by, other=seat))


def _draw_two(b: Batch, seat: int) -> None:
    _draw(b, seat, cards.SECOND_CHANCE_DRAWS, "second_chance")


_EFFECTS: dict[str, Callable[[Batch, int], None]] = {
    "fan": _fan,
    "take": _move_point,
    "give": _move_point,
    "lose": _move_point,
    "expire": _meter,
    "violation": _meter,
    "minus_20": _meter,
    "gain": _meter,
    "trade": _trade,
    "draw_2": _draw_two,
}

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
