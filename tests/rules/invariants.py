"""Invariants of the card game's table, checked after every event of seeded games (and fuzzed commands).

``Checker(seats)`` holds what never changes in a game (its decks); ``after_event`` checks the table
after any event, ``at_rest`` the stronger facts that hold between commands, ``finished`` the end.
``play_checked`` plays a seeded bot game through the real engine path (``simulate``) while folding
every recorded envelope into a shadow table that is checked event by event and compared with the
engine's own state at the end of each command's batch.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from functools import cache

import msgspec

from service.events import free_parking as ev
from service.events.common import SeatTaken, SeedRevealed, TurnClockRestarted, TurnClockStopped
from service.events.envelope import GENESIS
from service.rules.engine import Game
from service.rules.free_parking import actions, cards, evolve, legal_commands
from service.rules.free_parking.state import State
from service.sim.games import Simulation, new_game, play

KIND = "free-parking"
PHASES = ("new", "waiting", "main", "after_main", "finished")
CODEC = Game.new(KIND, "x", ev.FreeParkingConfig(seats=2), bytes(32)).codec

VALUE = {c.id: c.value or 0 for c in cards.playing_deck(2)}
POINT_IDS = frozenset(c.id for c in cards.playing_deck(2) if c.kind == "point")


@cache
def decks(sets: int) -> tuple[frozenset[str], frozenset[str]]:
    """The ids of every playing card and every Second Chance card of ``sets`` sets."""
    return (
        frozenset(c.id for c in cards.playing_deck(sets)),
        frozenset(c.id for c in cards.second_chance_deck(sets)),
    )


def score(points: tuple[str, ...]) -> int:
    """What ``SeatState.score`` must be: the sum of the Point cards' values (computed here from the table)."""
    return sum(map(VALUE.__getitem__, points))


def exactly(found: list[str], expected: frozenset[str]) -> bool:
    """Every card of ``expected`` found once and nothing else: as many ids as cards, and the same set."""
    return len(found) == len(expected) and expected.issuperset(found) and len(set(found)) == len(found)


def playing_cards_of(s: State) -> list[str]:
    """Every playing card in a place: hands, Point cards down, deck, discard, the action in play."""
    out: list[str] = []
    for seat in s.seats:
        out += seat.hand
        out += seat.points
    out += s.deck
    out += s.discard
    if s.action is not None and not s.action.card.startswith("SC-"):
        out.append(s.action.card)
    return out


def second_chance_cards_of(s: State) -> list[str]:
    out = list(s.second_chance) + list(s.second_chance_discard)
    if s.action is not None and s.action.card.startswith("SC-"):
        out.append(s.action.card)
    return out


class InvariantError(AssertionError):
    pass


def _fail(s: State, what: str) -> None:
    raise InvariantError(f"v{s.version} phase={s.phase} turn={s.turn_seat}: {what}")


class Checker:
    """The invariants of one game of ``seats`` seats."""

    def __init__(self, seats: int, mode: str = "standard") -> None:
        self.n = seats
        self.tournament = mode == "tournament"
        # a standard game is won at 200; a tournament round ends at 150 (and the tournament by totals)
        self.threshold = cards.ROUND_POINTS if self.tournament else cards.WINNING_POINTS
        self.owed: type = ev.RoundEnded if self.tournament else ev.GameWon
        self.owed_win: int | None = None  # a seat that reached the threshold with the last event: owed must follow
        self.totals = [0] * seats  # tournament: each seat's player's cumulative total, as the events said
        self.last: msgspec.Struct | None = None  # the event before this one
        self.playing, self.second = decks(cards.sets_for(seats))

    # -- after every event ------------------------------------------------------------------------

    def after_event(self, s: State, event: msgspec.Struct | None = None) -> None:
        n = self.n
        if self.owed_win is not None:
            if not (isinstance(event, self.owed) and event.seat == self.owed_win):
                _fail(s, f"seat {self.owed_win} reached {self.threshold} but {type(event).__name__} came instead of {self.owed.__name__}")
            self.owed_win = None
        if s.phase not in PHASES:
            _fail(s, f"unknown phase {s.phase!r}")
        if len(s.seats) != n:
            _fail(s, f"{len(s.seats)} seats, expected {n}")
        for i, st in enumerate(s.seats):
            if not 0 <= st.meter <= cards.METER_MAX:
                _fail(s, f"seat {i} meter {st.meter} outside 0–60")
            if not POINT_IDS.issuperset(st.points):
                _fail(s, f"seat {i} has a non-Point card down: {st.points}")
        if s.round >= 1:
            if not exactly(playing_cards_of(s), self.playing):
                _fail(s, f"playing cards not each in exactly one place: {_diff(playing_cards_of(s), self.playing)}")
            if not exactly(second_chance_cards_of(s), self.second):
                _fail(s, f"Second Chance cards not each in one place: {_diff(second_chance_cards_of(s), self.second)}")
            if not 0 <= s.turn_seat < n:
                _fail(s, f"turn seat {s.turn_seat} out of range")
            if s.phase == "new" or (s.phase == "waiting" and not isinstance(event, ev.RoundDealt)):
                _fail(s, "dealt but not in play")  # only the deal itself comes before the first turn
        else:
            if any(st.hand or st.points for st in s.seats) or s.deck or s.discard or s.second_chance:
                _fail(s, "cards on the table before the deal")
        # the score on the table is the sum of the Point cards down, and the events say so too
        if isinstance(event, ev.ErrandRun):
            st = s.seats[event.seat]
            if event.points != score(st.points) or event.card not in st.points or event.value != VALUE[event.card]:
                _fail(s, f"ErrandRun says {event.points} points, seat {event.seat} has {score(st.points)}")
            if event.free_parking is None and event.meter != s.seats[event.seat].meter:
                _fail(s, "ErrandRun meter differs from the table")
        elif isinstance(event, ev.GameWon):
            self._game_won(s, event)
        elif isinstance(event, ev.RoundEnded):
            self._round_ended(s, event)
        elif isinstance(event, ev.PlacesTraded):
            self.totals[event.seat], self.totals[event.other] = self.totals[event.other], self.totals[event.seat]
        elif isinstance(event, ev.ThreeSwapped) and s.rules_version >= 2:
            self._swapped(s, event)
        elif isinstance(event, ev.MeterFed) and s.seats[event.seat].meter != event.meter:
            _fail(s, "MeterFed meter differs from the table")
        elif isinstance(event, ev.MeterSet) and s.seats[event.seat].meter != event.meter:
            _fail(s, "MeterSet meter differs from the table")
        self._pending(s)
        self._winner(s, event)
        self.last = event

    def _swapped(self, s: State, event: ev.ThreeSwapped) -> None:
        """From rules version 2 a swap draws first (at least one card), and never draws back the three it discards."""
        drawn = self.last
        if not (isinstance(drawn, ev.CardsDrawn) and drawn.reason == "swap" and drawn.seat == event.seat):
            _fail(s, f"three_swapped after {type(drawn).__name__}, not after the swap's draw")
        if not drawn.count:
            _fail(s, "a swap drew nothing")
        if drawn.secret is not None and set(drawn.secret.cards) & set(event.cards):
            _fail(s, f"the swap drew back {sorted(set(drawn.secret.cards) & set(event.cards))}")

    def _game_won(self, s: State, event: ev.GameWon) -> None:
        st = s.seats[event.seat]
        if event.player != st.player:
            _fail(s, f"GameWon names {event.player}, the seat holds {st.player}")
        if len(s.playing) == 1:  # every other seat forfeited: the one left wins with what it has
            if event.seat != s.playing[0] or event.points != (st.total if self.tournament else score(st.points)):
                _fail(s, f"GameWon({event.seat}, {event.points}) but the one left is {s.playing}")
            return
        if not self.tournament:
            if event.points != score(st.points) or event.points < cards.WINNING_POINTS:
                _fail(s, f"GameWon({event.seat}, {event.points}) but the seat has {score(st.points)}")
            return
        live = [self.totals[i] for i in s.playing]  # a forfeited seat keeps its total but wins nothing
        top = max(live)
        if event.points != self.totals[event.seat] or top < cards.TOURNAMENT_POINTS or live.count(top) != 1 or self.totals[event.seat] != top:
            _fail(s, f"GameWon({event.seat}, {event.points}) but the totals are {self.totals}")

    def _round_ended(self, s: State, event: ev.RoundEnded) -> None:
        if not self.tournament:
            _fail(s, "a round ended in a standard game")
        expected = [score(st.points) + (cards.ROUND_BONUS if i == event.seat else 0) for i, st in enumerate(s.seats)]
        if list(event.scores) != expected or score(s.seats[event.seat].points) < cards.ROUND_POINTS:
            _fail(s, f"RoundEnded scores {event.scores}, the table says {expected}")
        totals = [t + sc for t, sc in zip(self.totals, event.scores, strict=True)]
        if list(event.totals) != totals or [st.total for st in s.seats] != totals:
            _fail(s, f"RoundEnded totals {event.totals}, expected {totals}")
        self.totals = totals

    def _pending(self, s: State) -> None:
        p, a = s.pending, s.action
        if a is not None:
            if not 0 <= a.by < self.n:
                _fail(s, f"action by seat {a.by}")
            if a.target is not None and not (0 <= a.target < self.n and a.target != a.by):
                _fail(s, f"action target {a.target} by {a.by}")
            if s.phase not in ("main", "after_main", "finished"):
                _fail(s, "an action outside play")
            if a.card.startswith("SC-"):
                if a.by != s.turn_seat:
                    _fail(s, "a Second Chance card drawn out of turn")
                if a.kind != cards.effect_of(a.card):
                    _fail(s, f"action kind {a.kind} but card {a.card}")
            else:
                if a.kind != cards.kind_of(a.card):
                    _fail(s, f"action kind {a.kind} but card {a.card}")
                if a.kind == "time_expires" and s.phase == "main":
                    _fail(s, "Time Expires is a main play")
        if p is None:
            return
        if s.phase not in ("main", "after_main"):
            _fail(s, f"pending {p.kind} in phase {s.phase}")
        if a is None:
            _fail(s, f"pending {p.kind} with no action in play")
        if not a.steps:
            _fail(s, "pending but the action has no step left")
        step = a.steps[0]
        if actions.what(step) != p.kind or actions.who(s, step) != p.seat:
            _fail(s, f"pending {p.kind}@{p.seat} but the next step is {step}")
        if not 0 <= p.seat < self.n:
            _fail(s, f"pending seat {p.seat}")
        if p.kind == "respond":
            if p.options:
                _fail(s, "a response with options")
            return
        if len(p.options) < 2:
            _fail(s, f"a choice of {p.kind} with {len(p.options)} options (one option is chosen at once)")
        if len(set(p.options)) != len(p.options):
            _fail(s, "duplicate options")
        if p.kind == "card":
            if tuple(p.options) != tuple(cards.lowest_first(s.seats[p.seat].points)):
                _fail(s, "card options are not the seat's Point cards, lowest first")
        elif p.kind == "target":
            if tuple(p.options) != actions.target_options(s) or p.seat != a.by:
                _fail(s, "target options are not the drawer's targets")
        elif p.kind == "position":
            if tuple(p.options) != tuple(range(len(a.fan))) or p.seat != a.by:
                _fail(s, "positions are not the fan's")
            assert a.target is not None
            if sorted(a.fan) != sorted(s.seats[a.target].points):
                _fail(s, "the fan is not the target's Point cards")

    def _winner(self, s: State, event: msgspec.Struct | None) -> None:
        scores = [score(st.points) for st in s.seats]
        over = [i for i, v in enumerate(scores) if v >= self.threshold]
        if s.phase == "finished" and s.closed is not None:  # the server closed it, nobody moving: no winner
            if s.winner is not None or s.pending is not None:
                _fail(s, f"closed with winner {s.winner}, pending {s.pending}")
        elif s.phase == "finished" and len(s.playing) == 1:
            if s.winner != s.playing[0] or s.pending is not None:
                _fail(s, f"finished with winner {s.winner}, but the one left is {s.playing}")
        elif s.phase == "finished":
            if s.winner is None or (not self.tournament and over != [s.winner]):
                _fail(s, f"finished with winner {s.winner} and seats over {self.threshold}: {over}")
            if s.pending is not None:
                _fail(s, "finished but still waiting")
        elif s.winner is not None:
            _fail(s, f"not finished but winner {s.winner}")
        elif over and not isinstance(event, ev.RoundEnded):
            # only the event that scored may leave a seat at the threshold; GameWon (or RoundEnded) comes next
            if len(over) != 1 or not isinstance(event, (ev.ErrandRun, ev.PointCardMoved)):
                _fail(s, f"not finished, seats over {self.threshold}: {over}")
            self.owed_win = over[0]

    # -- between commands ---------------------------------------------------------------------------

    def at_rest(self, s: State, *, progress: bool = True) -> None:
        """Between two commands (checked on top of ``after_event``): an action in play waits on someone,
        and someone can act."""
        if self.owed_win is not None:
            _fail(s, f"seat {self.owed_win} reached {self.threshold} and the batch ended without {self.owed.__name__}")
        for i, st in enumerate(s.seats):
            if st.score != score(st.points):
                _fail(s, f"seat {i}: SeatState.score {st.score} is not the sum of its Point cards")
        if s.round == 0:
            return
        if s.phase == "finished":
            return
        if s.phase not in ("main", "after_main"):
            _fail(s, f"at rest in phase {s.phase}")
        if s.action is not None and s.pending is None:
            _fail(s, "an action in play that waits on no one")
        if s.action is None and s.pending is not None:
            _fail(s, "a wait with no action")
        if progress:
            if s.pending is not None:
                if not legal_commands(s, s.pending.seat):
                    _fail(s, f"seat {s.pending.seat} is awaited but has nothing legal")
            elif not legal_commands(s, s.turn_seat):
                _fail(s, f"seat {s.turn_seat} has the turn but nothing legal")

    # -- the end ----------------------------------------------------------------------------------

    def finished(self, s: State, events: list[msgspec.Struct], seed: bytes) -> None:
        if s.phase != "finished":
            _fail(s, "the game did not finish")
        if len(s.playing) == 1:
            winners = list(s.playing)
        elif self.tournament:
            top = max(s.seats[i].total for i in s.playing)
            winners = [i for i in s.playing if s.seats[i].total == top and top >= cards.TOURNAMENT_POINTS]
        else:
            winners = [i for i, st in enumerate(s.seats) if score(st.points) >= cards.WINNING_POINTS]
        if winners != [s.winner]:
            _fail(s, f"winner {s.winner}, but the winners by the table are {winners}")
        if len(events) < 2 or not isinstance(events[-2], ev.GameWon) or not isinstance(events[-1], SeedRevealed):
            _fail(s, f"the last two events are {[type(e).__name__ for e in events[-2:]]}")
        won = [e for e in events if isinstance(e, ev.GameWon)]
        if len(won) != 1 or won[0].seat != s.winner:
            _fail(s, f"{len(won)} GameWon events")
        if sum(isinstance(e, SeedRevealed) for e in events) != 1:
            _fail(s, "SeedRevealed more than once")
        if events[-1].seed != seed.hex():
            _fail(s, "SeedRevealed does not reveal the seed")
        created = events[0]
        if not isinstance(created, ev.GameCreated) or created.seed_commitment != hashlib.sha256(seed).hexdigest():
            _fail(s, "the seed does not match its commitment")
        seated = [e for e in events if isinstance(e, SeatTaken)]
        if sorted(e.seat for e in seated) != list(range(self.n)):
            _fail(s, "seats not each taken once")


def _diff(got: list[str], expected: frozenset[str]) -> str:
    from collections import Counter

    g, e = Counter(got), Counter(expected)
    return f"extra {sorted((g - e).elements())}, missing {sorted((e - g).elements())}"


# --- a checked game --------------------------------------------------------------------------------


@dataclass
class Played:
    sim: Simulation
    events: list[msgspec.Struct] = field(default_factory=list)
    rest_states: list[State] = field(default_factory=list)
    commands: int = 0

    @property
    def state(self) -> State:
        return self.sim.game.state


def bots_for(mix: str, seats: int, rnd: random.Random) -> list[str]:
    if mix in ("random", "greedy"):
        return [mix] * seats
    names = ["random", "greedy"]
    out = [names[i % 2] for i in range(seats)]
    rnd.shuffle(out)
    return out


def _clock_held_as_the_wait_says(s: State) -> None:
    """At rest, under rules version 3 with a turn clock: the clock of a turn in play is stopped exactly while the game
    waits on another seat than the one on turn (docs/rules-free-parking.md, "The turn clock")."""
    if s.rules_version < 3 or not s.config.turn_seconds or s.phase not in ("main", "after_main") or s.timed_out:
        return
    others = s.pending is not None and s.pending.seat != s.turn_seat
    if (s.turn_left_ms is not None) != others or (s.turn_deadline_at is None) != others:
        raise InvariantError(f"v{s.version}: the turn clock is {'stopped' if s.turn_left_ms is not None else 'running'}"
                             f" while the game waits on {'another seat' if others else 'no other seat'}")


def play_checked(
    seats: int,
    seed: bytes,
    bots: list[str],
    rnd_seed: int,
    *,
    timeouts: float = 0.0,
    game_id: str = "prop",
    keep_states: bool = False,
    check: bool = True,
    mode: str = "standard",
    rules_version: int | None = None,
    options: dict | None = None,
    turn_timeouts: float = 0.0,
    resigns: float = 0.0,
) -> Played:
    """Play a seeded bot game (under the current rules unless ``rules_version`` names another); fold every envelope
    into a shadow table and check it after each event."""
    sim = new_game(KIND, seats, seed, game_id, bots, {"mode": mode, **(options or {})}, rules_version)
    out = Played(sim)
    checker = Checker(seats, sim.game.state.config.mode)
    shadow: State = Game.new(KIND, game_id, sim.game.state.config, seed).state
    join = CODEC.join

    wait_ms = sim.game.state.config.response_seconds * 1000
    last = {"hash": GENESIS, "at": 0}

    def absorb(env) -> None:
        nonlocal shadow
        event = join(env.public, env.secret)
        before = shadow
        shadow = evolve(shadow, event)
        out.events.append(event)
        if check:
            # the envelope: consecutive seqs, a chain, a clock that never runs backwards
            if env.seq != shadow.version or env.prev_hash != last["hash"] or env.at < last["at"]:
                raise InvariantError(f"seq {env.seq}: envelope out of sequence, chain or time")
            last["hash"], last["at"] = env.hash, env.at
            if isinstance(event, (ev.ResponseAwaited, ev.ChoiceAwaited)) and event.deadline_at != env.at + wait_ms:
                raise InvariantError(f"seq {env.seq}: deadline {event.deadline_at} is not at + {wait_ms} ms")
            by_server = (isinstance(event, ev.Accepted) and event.by_server) or (
                isinstance(event, ev.Chosen) and event.how == "timeout"
            )
            if isinstance(event, ev.TurnTimedOut) and (
                before.turn_deadline_at is None or env.at < before.turn_deadline_at or env.actor != "server"
            ):
                raise InvariantError(f"seq {env.seq}: the server played a turn before its clock ran out")
            if by_server and (before.pending is None or env.at < before.pending.deadline_at or env.actor != "server"):
                raise InvariantError(f"seq {env.seq}: the server answered before the deadline")
            if isinstance(event, TurnClockStopped) and (
                before.turn_deadline_at is None or event.left_ms != max(0, before.turn_deadline_at - env.at)
            ):
                raise InvariantError(f"seq {env.seq}: the turn clock stopped with another time than it had left")
            if isinstance(event, TurnClockRestarted) and (
                before.turn_left_ms is None or event.deadline_at != env.at + before.turn_left_ms
            ):
                raise InvariantError(f"seq {env.seq}: the turn clock restarted with another time than it had left")
            checker.after_event(shadow, event)
        if shadow.version == sim.game.state.version:  # the end of a command's batch
            out.commands += 1
            if shadow != sim.game.state:
                raise InvariantError(f"v{shadow.version}: the folded envelopes differ from the decided state")
            if check:
                checker.at_rest(shadow)
                _clock_held_as_the_wait_says(shadow)
            if keep_states:
                out.rest_states.append(shadow)

    for env in list(sim.envelopes):
        absorb(env)
    rnd = random.Random(rnd_seed)
    for env in play(sim, bots, rnd, timeouts=timeouts, turn_timeouts=turn_timeouts, resigns=resigns):
        absorb(env)
    if check:
        checker.finished(shadow, out.events, seed)
    return out
