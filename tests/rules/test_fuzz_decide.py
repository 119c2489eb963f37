"""Command fuzzing of ``decide``: any command the schema admits, in any reachable state, from any seat (in range
or not) or the server, either yields events that keep the invariants or raises ``RuleViolation`` — nothing else.

The states come from seeded bot games of every player count (between commands, including every kind of
wait), plus the states before the deal. Commands are drawn from the schema (``FreeParkingCommand``): card ids
from the seat's hand, the rest of the game, the other set, or made up; seats 0–7; positions 0–255; and half
the time a legal command, as it is or with one field changed. ``FREE_PARKING_FUZZ_EXAMPLES`` sets how many.
"""

from __future__ import annotations

import random
from functools import cache

import msgspec
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.events import free_parking as ev
from service.events.base import Player
from service.events.common import Close, Create, TakeSeat, Timeout
from service.rules.engine import Game
from service.rules.errors import RuleViolation
from service.rules.free_parking import cards, evolve, legal_commands, run
from service.rules.free_parking.state import State
from tests.depth import count
from tests.rules.invariants import CODEC, KIND, Checker, bots_for, play_checked

EXAMPLES = count("FREE_PARKING_FUZZ_EXAMPLES", 1200, 20000)
COMMANDS = msgspec.json.Decoder(ev.FreeParkingCommand)
ALL_IDS = [c.id for c in cards.playing_deck(2)]
ALL_SC = [c.id for c in cards.second_chance_deck(2)]
NONSENSE = ["XX-9", "P10-99", "OJ-0", "p10-1", "P10-1 ", "SC-nothing-1", "M20", "-", "x" * 40]


@cache
def pool() -> tuple[State, ...]:
    """Reachable states: before the deal, half-seated, and between commands of seeded games of 2–8 seats."""
    out: list[State] = []
    rnd = random.Random("fuzz")
    for seats in range(2, 9):
        config = ev.FreeParkingConfig(seats=seats, response_seconds=15)
        fresh = Game.new(KIND, "fuzz", config, bytes([seats]) * 32)
        out.append(fresh.state)  # phase "new": only Create
        fresh.play(Create(), None, 1)
        out.append(fresh.state)  # waiting, no seat taken
        fresh.play(TakeSeat(player=Player(name="a")), None, 2)
        out.append(fresh.state)  # waiting, one seat taken
        for g in range(2):
            played = play_checked(
                seats,
                bytes([seats, g, 7]) * 10 + b"fz",
                bots_for(("random", "mix")[g], seats, rnd),
                g,
                timeouts=0.15,
                game_id=f"fuzz-{seats}-{g}",
                keep_states=True,
                check=False,
            )
            states = played.rest_states
            waits = [s for s in states if s.pending is not None]
            out += rnd.sample(waits, min(12, len(waits)))
            out += rnd.sample(states, min(12, len(states)))
            out.append(states[-1])  # finished
    return tuple(out)


# --- strategies -----------------------------------------------------------------------------------


@st.composite
def card_ids(draw, s: State) -> str:
    hands = [c for seat in s.seats for c in (*seat.hand, *seat.points)]
    choices = [st.sampled_from(ALL_IDS), st.sampled_from(ALL_SC), st.sampled_from(NONSENSE), st.text(min_size=1, max_size=40)]
    if hands:
        choices = [st.sampled_from(hands)] * 3 + choices
    if s.pending is not None and s.pending.kind == "card":
        choices.append(st.sampled_from([o for o in s.pending.options if isinstance(o, str)] or ["XX-9"]))
    return draw(st.one_of(*choices))


@st.composite
def commands(draw, s: State) -> msgspec.Struct:
    card = card_ids(s)
    target = st.integers(0, 7)
    kind = draw(
        st.sampled_from(
            [
                "feed_meter",
                "run_errand",
                "free_parking",
                "time_expires",
                "swap_three",
                "discard",
                "draw_second_chance",
                "end_turn",
                "officer_jones",
                "talk_out",
                "accept",
                "choose",
                "create",
                "take_seat",
                "timeout",
                "close",
            ]
        )
    )
    if kind == "feed_meter":
        return ev.FeedMeter(card=draw(card))
    if kind == "run_errand":
        return ev.RunErrand(card=draw(card))
    if kind == "free_parking":
        return ev.FreeParking(card=draw(card), errand=draw(card))
    if kind == "time_expires":
        return ev.TimeExpires(card=draw(card), target=draw(target))
    if kind == "swap_three":
        return ev.SwapThree(cards=(draw(card), draw(card), draw(card)))
    if kind == "discard":
        return ev.Discard(card=draw(card))
    if kind == "draw_second_chance":
        return ev.DrawSecondChance()
    if kind == "end_turn":
        return ev.EndTurn()
    if kind == "officer_jones":
        return ev.OfficerJones(card=draw(card), target=draw(target))
    if kind == "talk_out":
        return ev.TalkOut(card=draw(card))
    if kind == "accept":
        return ev.Accept()
    if kind == "choose":
        return ev.Choose(
            card=draw(st.none() | card),
            target=draw(st.none() | target),
            position=draw(st.none() | st.integers(0, 255)),
        )
    if kind == "create":
        return Create()
    if kind == "take_seat":
        return TakeSeat(player=Player(name=draw(st.text(min_size=1, max_size=10)), bot=draw(st.none() | st.just("random"))))
    if kind == "close":
        return Close(idle_ms=draw(st.integers(0, 10**8)), since=draw(st.integers(0, 2**53)))
    return Timeout()


@st.composite
def near(draw, s: State, legal) -> msgspec.Struct:
    """A legal command as it is, or with one field changed: the edge between accepted and refused."""
    command = draw(legal)
    fields = [f for f in command.__struct_fields__ if f not in ("command_id", "expected_version", "sig")]
    if not fields or draw(st.booleans()):
        return command
    field = draw(st.sampled_from(fields))
    if field == "cards":
        i = draw(st.integers(0, 2))
        trio = list(command.cards)
        trio[i] = draw(card_ids(s))
        value = tuple(trio)
    elif field in ("card", "errand"):
        value = draw(card_ids(s))
    elif field == "target":
        value = draw(st.integers(0, 7))
    else:
        value = draw(st.integers(0, 255))
    return msgspec.structs.replace(command, **{field: value})


def instants(s: State):
    """When the command is sent: around the pending deadline (before and after), or any time at all."""
    base = s.pending.deadline_at if s.pending is not None else 1_767_225_600_000
    return st.one_of(
        st.integers(base - 2_000, base + 2_000),
        st.integers(0, 2**53),
    )


# --- the property -----------------------------------------------------------------------------------


def check_outcome(s: State, command: msgspec.Struct, seat: int | None, at: int) -> bool:
    """Decide; a refusal must be a ``RuleViolation``; an acceptance must keep every invariant. True if accepted."""
    assert COMMANDS.decode(msgspec.json.encode(command)) == command  # the command is within the schema
    try:
        events, after = run(s, command, seat, at)
    except RuleViolation as refusal:
        assert refusal.code and refusal.code == refusal.code.lower() and " " not in refusal.code
        assert refusal.message
        return False
    assert events, f"{command!r} accepted with no event"
    assert after.version == s.version + len(events)
    checker = Checker(s.n)
    folded = s
    for e in events:
        _, public, secret = CODEC.split(e)  # the log can store it…
        assert CODEC.join(public, secret) == e  # …and read it back
        folded = evolve(folded, e)
        checker.after_event(folded, e)
    assert folded == after
    checker.at_rest(after, progress=after.round > 0)
    if seat is not None and s.phase in ("main", "after_main"):
        # what a seat may do is exactly what legal lists (up to the order of a swap's cards)
        def key(c):
            return ("swap", frozenset(c.cards)) if isinstance(c, ev.SwapThree) else msgspec.json.encode(c)

        assert key(command) in {key(c) for c in legal_commands(s, seat)}
    return True


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_decide_never_raises_anything_but_a_rule_violation(data):
    s = data.draw(st.sampled_from(pool()), label="state")
    who = data.draw(st.sampled_from(["server", "any", "actor", "actor"]), label="who")
    if who == "server":
        seat = None
    elif who == "any":
        seat = data.draw(st.integers(-2, 9), label="seat")
    else:  # the seat that is awaited, or whose turn it is: so that answers and plays get through
        seat = s.pending.seat if s.pending is not None else s.turn_seat
    legal = legal_commands(s, seat) if seat is not None else []
    if legal and data.draw(st.booleans(), label="near a legal command"):
        command = data.draw(near(s, st.sampled_from(legal)), label="command")
    else:
        command = data.draw(commands(s), label="command")
    at = data.draw(instants(s), label="at")
    event("accepted" if check_outcome(s, command, seat, at) else "refused")


TAGS = sorted(COMMANDS.type.__args__, key=lambda t: t.__struct_config__.tag)  # type: ignore[attr-defined]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 300) | st.sampled_from(ALL_IDS[:20] + NONSENSE) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    tag=st.sampled_from([t.__struct_config__.tag for t in TAGS]),
    fields=st.dictionaries(
        st.sampled_from(["card", "errand", "target", "cards", "position", "player", "name", "bot", "extra"]),
        JSON_VALUES,
        max_size=4,
    ),
)
def test_any_body_that_decodes_is_decided_or_refused(data, tag, fields):
    """Arbitrary JSON bodies: those the schema rejects are the API's 400; every one it admits is decided or refused."""
    s = data.draw(st.sampled_from(pool()), label="state")
    seat = data.draw(st.none() | st.integers(0, 7), label="seat")
    body = msgspec.json.encode({"type": tag, **fields})
    try:
        command = COMMANDS.decode(body)
    except msgspec.ValidationError:
        return
    event("accepted" if check_outcome(s, command, seat, data.draw(instants(s), label="at")) else "refused")


def test_the_pool_reaches_every_phase_and_wait():
    phases = {s.phase for s in pool()}
    assert phases == {"new", "waiting", "main", "after_main", "finished"}
    assert {s.pending.kind for s in pool() if s.pending is not None} == {"respond", "target", "card", "position"}
