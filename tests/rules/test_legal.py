"""``legal_commands`` is exact (API.md: every listed command is accepted, and no other is), and ``view`` keeps secrets.

The states are reached by seeded bot games of every player count (2–8), sampled so that every kind of wait —
a response, a choice of target, card or position — is among them, as well as plain turns, the after-main phase
and finished games. For each state and each seat (and seats out of range) a broad set of candidate commands is
put to ``decide``; the accepted ones must be exactly the listed ones.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import combinations

import msgspec
import pytest

from service.events import free_parking as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat, Timeout
from service.rules.errors import RuleViolation
from service.rules.free_parking import cards, decide, legal_commands, view
from service.rules.free_parking.state import State
from tests.rules.invariants import Checker, bots_for, play_checked

SEATS = range(2, 9)
AT = 1_900_000_000_000  # later than any deadline of the sampled games: only the server's Timeout cares
COMMANDS = msgspec.json.Decoder(ev.FreeParkingCommand)
ALL_IDS = [c.id for c in cards.playing_deck(2)]
ALL_SC = [c.id for c in cards.second_chance_deck(2)]


# --- the sample of reached states ------------------------------------------------------------------


@lru_cache(maxsize=None)
def sample(seats: int) -> tuple[State, ...]:
    """States between commands of seeded games: every wait kind, plain turns, after-main, and the end."""
    rnd = random.Random(f"legal:{seats}")
    by_kind: dict[str, list[State]] = {"respond": [], "target": [], "card": [], "position": []}
    plain: list[State] = []
    special: list[State] = []
    for g in range(6):
        mix = ("random", "mix", "greedy")[g % 3]
        played = play_checked(
            seats,
            bytes([seats, g]) * 16,
            bots_for(mix, seats, rnd),
            g,
            timeouts=0.1 * (g % 2),
            game_id=f"legal-{seats}-{g}",
            keep_states=True,
            check=False,
        )
        states = played.rest_states
        special += [states[0], states[-1]]  # the first turn, and the finished game
        for s in states:
            if s.pending is not None:
                by_kind[s.pending.kind].append(s)
            elif s.phase == "main" and not s.seats[s.turn_seat].hand:
                special.append(s)  # a turn with nothing in hand: only draw or end
            else:
                plain.append(s)
    out = list(special)
    for kind, found in by_kind.items():
        out += rnd.sample(found, min(len(found), 6))
    out += rnd.sample(plain, min(len(plain), 14))
    return tuple(out)


def test_the_sample_covers_every_kind_of_wait():
    kinds = {s.pending.kind for seats in SEATS for s in sample(seats) if s.pending is not None}
    assert kinds == {"respond", "target", "card", "position"}
    phases = {s.phase for seats in SEATS for s in sample(seats)}
    assert {"main", "after_main", "finished"} <= phases
    # states where some seat other than the turn's could interrupt with Officer Jones
    assert any(
        isinstance(c, ev.OfficerJones)
        for seats in SEATS
        for s in sample(seats)
        for seat in range(seats)
        if seat != s.turn_seat
        for c in legal_commands(s, seat)
    )


# --- candidates ------------------------------------------------------------------------------------


def key(command: msgspec.Struct) -> tuple:
    """A command's identity for comparison; SwapThree's cards are an unordered set."""
    if isinstance(command, ev.SwapThree):
        return ("swap_three", frozenset(command.cards))
    return (type(command).__name__, msgspec.json.encode(command))


def card_pool(s: State, seat: int, rnd: random.Random) -> list[str]:
    """The seat's hand, plus a few cards that are not in it: other hands, the deck, the table, the other set, nonsense."""
    hand = list(s.seats[seat].hand) if 0 <= seat < s.n else []
    elsewhere = [c for i, st in enumerate(s.seats) if i != seat for c in (*st.hand, *st.points)]
    elsewhere += [*s.deck[:3], *s.discard[-2:]]
    extras = rnd.sample(elsewhere, min(3, len(elsewhere)))
    extras += rnd.sample(ALL_IDS, 2)  # any card of either set (the second set's ids do not exist with ≤ 4 seats)
    extras += ["XX-9", "OJ-99", "SC-take_point-1"]  # unknown ids, and a Second Chance id where a card is asked
    return list(dict.fromkeys(hand + extras))


def candidates(s: State, seat: int, rnd: random.Random) -> list[msgspec.Struct]:
    pool = card_pool(s, seat, rnd)
    hand = list(s.seats[seat].hand) if 0 <= seat < s.n else []
    targets = range(8)  # every seat the schema allows, in range or not
    out: list[msgspec.Struct] = [ev.Accept(), ev.DrawSecondChance(), ev.EndTurn(), Timeout(), Create(), ev.Resign()]
    out.append(TakeSeat(player=Player(name="intruder")))
    for c in pool:
        out += [ev.FeedMeter(card=c), ev.RunErrand(card=c), ev.Discard(card=c), ev.TalkOut(card=c)]
        out += [ev.TimeExpires(card=c, target=t) for t in targets]
        out += [ev.OfficerJones(card=c, target=t) for t in targets]
        out += [ev.FreeParking(card=c, errand=e) for e in pool]
    # swap three: every 3-combination of the hand (in two orders), and some that must fail
    for trio in combinations(hand, 3):
        out += [ev.SwapThree(cards=trio), ev.SwapThree(cards=trio[::-1])]
    extras = [c for c in pool if c not in hand]
    if len(hand) >= 2:
        out += [ev.SwapThree(cards=(hand[0], hand[0], hand[1])), ev.SwapThree(cards=(hand[0], hand[1], extras[0]))]
    if hand:
        out.append(ev.SwapThree(cards=(hand[0], hand[0], hand[0])))
    out.append(ev.SwapThree(cards=tuple(extras[:3])))
    # choices: every card of the pool and every Point card down, every seat, every position up to the largest fan
    points_down = [c for st in s.seats for c in st.points]
    for c in dict.fromkeys(pool + points_down):
        out.append(ev.Choose(card=c))
    out += [ev.Choose(target=t) for t in targets]
    fan = max((len(st.points) for st in s.seats), default=0)
    out += [ev.Choose(position=p) for p in range(fan + 2)]
    out += [ev.Choose(), ev.Choose(target=0, position=0), ev.Choose(card=(points_down or pool)[0], position=0)]
    return out


def accepted(s: State, command: msgspec.Struct, seat: int | None) -> bool:
    try:
        events = decide(s, command, seat, AT)
    except RuleViolation:
        return False
    assert events, f"{command!r} from {seat} was accepted with no event"
    return True


# --- legal is exact ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", SEATS)
def test_legal_is_exact(seats):
    assert _exact(sample(seats), seats, random.Random(f"candidates:{seats}")) >= 30


@lru_cache(maxsize=None)
def clock_sample(seats: int) -> tuple[State, ...]:
    """States of seeded games under a turn clock (two missed turns forfeit) once a seat has forfeited."""
    out: list[State] = []
    for g in range(4):
        played = play_checked(
            seats, bytes([seats, g, 7]) * 10 + b"cl", bots_for("mix", seats, random.Random(g)), g,
            game_id=f"legal-clock-{seats}-{g}", keep_states=True, check=False,
            options={"turn_seconds": 30, "forfeit_after": 2}, turn_timeouts=0.4,
        )
        out += [s for s in played.rest_states if any(st.forfeited for st in s.seats)][::7]
    return tuple(out)


@pytest.mark.parametrize("seats", [3, 5])
def test_legal_is_exact_with_a_forfeited_seat(seats):
    """A forfeited seat's legal is empty and decide refuses it all; no one may target it; the rest as ever."""
    states = clock_sample(seats)
    assert states
    assert _exact(states, seats, random.Random(f"clock-candidates:{seats}")) >= 10
    for s in states:
        for seat, st in enumerate(s.seats):
            if st.forfeited:
                assert legal_commands(s, seat) == []
            assert all(getattr(c, "target", None) not in [i for i, o in enumerate(s.seats) if o.forfeited]
                       for c in legal_commands(s, seat))


def _exact(states, seats: int, rnd: random.Random) -> int:
    """Every listed command is accepted, every accepted candidate listed; the states and seats checked."""
    checked = 0
    for s in states:
        for seat in [-1, *range(seats), seats, 7]:
            listed = legal_commands(s, seat)
            keys = [key(c) for c in listed]
            assert len(set(keys)) == len(keys), f"duplicates in legal for seat {seat}: {listed}"
            # (a) every listed command is accepted, and is sent in a form that decodes to itself
            for command in listed:
                assert accepted(s, command, seat), f"legal lists {command!r} for seat {seat} but decide refuses it"
                assert COMMANDS.decode(msgspec.json.encode(command)) == command
            # (b) every command decide accepts is listed
            ok = {key(c) for c in candidates(s, seat, rnd) if accepted(s, c, seat)}
            assert ok == set(keys), (
                f"v{s.version} seat {seat} phase {s.phase} pending {s.pending}: "
                f"accepted but not listed {sorted(ok - set(keys), key=str)[:5]}, "
                f"listed but not among the accepted candidates {sorted(set(keys) - ok, key=str)[:5]}"
            )
            checked += 1
    return checked


@pytest.mark.parametrize("seats", SEATS)
def test_while_an_answer_is_awaited_only_that_seat_may_act(seats):
    waits = [s for s in sample(seats) if s.pending is not None]
    assert waits
    for s in waits:
        p = s.pending
        for seat in range(seats):
            listed = legal_commands(s, seat)
            if seat != p.seat:
                assert listed == [ev.Resign()], f"seat {seat} may act while seat {p.seat} owes {p.kind}"
            else:
                assert listed
                if p.kind == "respond":
                    talk = [c for c in s.seats[seat].hand if cards.kind_of(c) == "talk_your_way_out"]
                    assert listed == [ev.Accept(), *(ev.TalkOut(card=c) for c in talk), ev.Resign()]
                else:
                    assert listed == [ev.Choose(**{p.kind: o}) for o in p.options] + [ev.Resign()]


@pytest.mark.parametrize("seats", SEATS)
def test_legal_never_lists_a_server_command(seats):
    for s in sample(seats):
        for seat in range(-1, seats + 1):
            for command in legal_commands(s, seat):
                assert not isinstance(command, ev.SERVER_COMMANDS)
                assert msgspec.json.decode(msgspec.json.encode(command))["type"] not in ("create", "take_seat", "timeout")


@pytest.mark.parametrize("seats", SEATS)
def test_the_sampled_states_keep_the_invariants(seats):
    checker = Checker(seats)
    for s in sample(seats):
        checker.after_event(s)
        checker.at_rest(s)


# --- view privacy ------------------------------------------------------------------------------------


def strings_in(obj) -> set[str]:
    """Every string anywhere in ``obj`` once encoded (keys and values): what a client would receive."""
    out: set[str] = set()
    stack = [msgspec.to_builtins(obj)]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.add(x)
        elif isinstance(x, dict):
            stack += list(x.keys()) + list(x.values())
        elif isinstance(x, list | tuple):
            stack += list(x)
    return out


@pytest.mark.parametrize("seats", SEATS)
def test_view_shows_only_the_own_hand_until_the_end(seats):
    for s in sample(seats):
        public = {c for st in s.seats for c in st.points} | set(s.discard) | set(s.second_chance_discard)
        if s.action is not None:
            public.add(s.action.card)
        hidden_decks = set(s.deck) | set(s.second_chance)
        for seat in [None, *range(seats)]:
            v = view(s, seat)
            seen = strings_in(v)
            own = set(s.seats[seat].hand) if seat is not None else set()
            assert s.seed.hex() not in seen
            if s.phase == "finished":
                assert all(p.hand is not None for p in v.players)  # every hand is shown once the game is over
                continue
            others = {c for i, st in enumerate(s.seats) if i != seat for c in st.hand}
            leaked = (others | hidden_decks) & seen - public - own
            assert not leaked, f"v{s.version}: seat {seat} sees {sorted(leaked)}"
            assert all(p.hand is None for p in v.players)
            # the view agrees with the table
            assert v.seat == seat
            if seat is None:
                assert v.you is None and v.legal == []
            else:
                assert [c.id for c in v.you.hand] == list(s.seats[seat].hand)
                assert v.legal == legal_commands(s, seat)
            for i, p in enumerate(v.players):
                st = s.seats[i]
                assert p.points == st.score == sum(c.value for c in p.point_cards)
                assert [c.id for c in p.point_cards] == list(st.points)
                assert (p.meter, p.hand_size) == (st.meter, len(st.hand))
            assert v.decks.playing == len(s.deck) and v.decks.second_chance == len(s.second_chance)
            if s.pending is not None:
                assert (v.pending.kind, v.pending.seat) == (s.pending.kind, s.pending.seat)
            else:
                assert v.pending is None


def test_a_finished_view_reveals_the_hands():
    s = sample(4)[1]
    assert s.phase == "finished"
    v = view(s, 0)
    assert [[c.id for c in p.hand] for p in v.players] == [list(st.hand) for st in s.seats]
    assert v.winner == s.winner and v.status == "finished"
    assert all(legal_commands(s, seat) == [] for seat in range(4))
