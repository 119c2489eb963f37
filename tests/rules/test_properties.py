"""Property tests: many seeded bot games for every player count, with the table's invariants checked after
every single event (see ``invariants.py``), the recorded log folded from scratch, and replays reproduced.

``FREE_PARKING_PROPERTY_GAMES`` sets the number of seeded games per player count (``tests/depth.py``: 60 in
``make test``, the fewest at which every corner the test asserts on must come up; 2,000 in ``make soak``). Games cycle through random bots, greedy bots and mixes, with and
without ``timeouts`` (a share of the waits left to the server's ``Timeout``). Throughput is written to the
terminal at the end of the module.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import Counter, defaultdict

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.events import free_parking as ev
from service.events.envelope import redacted
from service.rules.engine import Game
from service.rules.free_parking import cards, evolve
from service.rules.free_parking.state import Pending
from tests.depth import count
from tests.rules.invariants import CODEC, KIND, Checker, bots_for, play_checked

GAMES = count("FREE_PARKING_PROPERTY_GAMES", 60, 2000)  # 60: the fewest at which every corner below must come up
WIDE_GAMES = count("FREE_PARKING_WIDE_PROPERTY_GAMES", 15, 2000)
"""Games at six seats and more: each costs several times a small table's (more seats, more rounds), and the corners
are checked at two to five seats; the wide tables keep every invariant of every event of theirs, and reach every
corner at release depth (``make soak``)."""
REPLAY_EVERY = 10  # every tenth game is played a second time and must reproduce byte for byte
SEATS = range(2, 9)


def games_at(seats: int) -> int:
    return GAMES if seats <= 5 else WIDE_GAMES


def tournaments_at(seats: int) -> int:
    return max(1, games_at(seats) // 8)  # tournaments run several rounds each

# (bots, share of waits timed out): cycled over the games of each player count
CONFIGS = [
    ("random", 0.0),
    ("greedy", 0.0),
    ("mix", 0.0),
    ("random", 0.2),
    ("greedy", 0.2),
    ("mix", 0.2),
]


def game_seed(seats: int, g: int) -> bytes:
    return hashlib.sha256(f"free-parking-property:{seats}:{g}".encode()).digest()


@pytest.fixture(scope="module")
def throughput(request):
    """Per player count: games, events, seconds — written to the terminal when the module is done."""
    stats: dict[int, list[float]] = defaultdict(lambda: [0, 0, 0.0, 0.0])  # games, events, wall s, CPU s
    yield stats
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not stats:
        return
    with capture.global_and_fixture_disabled():
        _report(reporter, stats)


def _report(reporter, stats) -> None:
    """Rates are per CPU second (the wall clock of a shared machine says more about its neighbours)."""
    reporter.write_line("")
    reporter.write_line(
        f"free-parking property games (FREE_PARKING_PROPERTY_GAMES={GAMES}; every event checked, every log folded, "
        f"every {REPLAY_EVERY}th game replayed):"
    )
    total = [0, 0, 0.0, 0.0]
    for seats in sorted(stats):
        games, events, wall, cpu = stats[seats]
        total = [total[0] + games, total[1] + events, total[2] + wall, total[3] + cpu]
        reporter.write_line(
            f"  {seats} seats: {games:5d} games {events:8d} events  wall {wall:6.1f} s  CPU {cpu:6.1f} s"
            f"  {games / cpu:6.1f} games/s {events / cpu:7.0f} events/s"
        )
    games, events, wall, cpu = total
    reporter.write_line(
        f"  all    : {games:5d} games {events:8d} events  wall {wall:6.1f} s  CPU {cpu:6.1f} s"
        f"  {games / cpu:6.1f} games/s {events / cpu:7.0f} events/s"
    )


def fold_from_scratch(played, *, redact: bool = False) -> Game:
    sim = played.sim
    game = Game.new(KIND, sim.game.game_id, sim.game.state.config, sim.game.seed)
    game.fold([redacted(e) for e in sim.envelopes] if redact else sim.envelopes)
    return game


@pytest.mark.parametrize("seats", SEATS)
def test_seeded_tournaments_keep_every_invariant(seats):
    """Tournament mode: every event keeps the invariants, every round ends at 150 with the right scores and
    totals, and the tournament ends with the one highest total of 300 or more."""
    rounds = 0
    for g in range(tournaments_at(seats)):
        mix, timeouts = CONFIGS[g % len(CONFIGS)]
        bots = bots_for(mix, seats, random.Random(f"tournament:{seats}:{g}"))
        played = play_checked(seats, game_seed(seats, 10_000 + g), bots, g, timeouts=timeouts, game_id=f"t-{seats}-{g}", mode="tournament")
        assert fold_from_scratch(played).state == played.state
        ended = [e for e in played.events if isinstance(e, ev.RoundEnded)]
        assert ended and ended[-1].totals[played.state.winner] == max(ended[-1].totals) >= 300
        rounds += len(ended)
    assert rounds >= tournaments_at(seats)  # every tournament had at least one round


@pytest.mark.parametrize("seats", SEATS)
def test_seeded_games_keep_every_invariant(seats, throughput):
    """Every event of every game keeps the invariants; the log folds back into the very state that was played."""
    started, cpu_started = time.perf_counter(), time.process_time()
    seen: Counter[str] = Counter()
    events_total = 0
    for g in range(games_at(seats)):
        mix, timeouts = CONFIGS[g % len(CONFIGS)]
        rnd = random.Random(f"bots:{seats}:{g}")
        bots = bots_for(mix, seats, rnd)
        seed = game_seed(seats, g)
        game_id = f"prop-{seats}-{g}"
        played = play_checked(seats, seed, bots, g, timeouts=timeouts, game_id=game_id)
        events_total += len(played.events)

        # the projection replay: fold the recorded envelopes (secrets included) from scratch
        folded = fold_from_scratch(played)
        assert folded.state == played.state
        assert (folded.head, folded.last_at) == (played.sim.game.head, played.sim.game.last_at)

        # what the run exercised, so the test proves it reached the hard parts
        for e in played.events:
            seen[type(e).__name__] += 1
            if isinstance(e, ev.SecondChanceDrawn):
                seen[f"sc:{e.effect}"] += 1
            elif isinstance(e, ev.ChoiceAwaited):
                seen[f"choice:{e.choice}"] += 1
            elif isinstance(e, ev.Accepted) and e.by_server:
                seen["timeout:accept"] += 1
            elif isinstance(e, ev.Chosen) and e.how == "timeout":
                seen["timeout:choice"] += 1
            elif isinstance(e, ev.OfficerJonesPlayed) and e.out_of_turn:
                seen["officer_jones:out_of_turn"] += 1
            elif isinstance(e, ev.DeckReshuffled):
                seen[f"reshuffle:{e.deck}"] += 1
            elif isinstance(e, ev.ResponseAwaited) and e.action == "trade_places" and e.seat == e.by:
                seen["trade_places:drawer_asked"] += 1

        if g % REPLAY_EVERY == 0:
            again = play_checked(seats, seed, bots, g, timeouts=timeouts, game_id=game_id, check=False)
            assert [msgspec.json.encode(e) for e in again.sim.envelopes] == [
                msgspec.json.encode(e) for e in played.sim.envelopes
            ]
            assert again.sim.game.head == played.sim.game.head

    stats = throughput[seats]
    stats[0] += games_at(seats)
    stats[1] += events_total
    stats[2] += time.perf_counter() - started
    stats[3] += time.process_time() - cpu_started

    if games_at(seats) >= 60:  # enough games that every corner must have come up
        expected = {
            "GameWon",
            "SeedRevealed",
            "TalkedOut",
            "PlacesTraded",
            "PointCardsFanned",
            "PointCardMoved",
            "TimeExpiresPlayed",
            "OfficerJonesPlayed",
            "ThreeSwapped",
            "timeout:accept",
            "timeout:choice",
            "choice:card",
            "choice:position",
            "reshuffle:playing",
            "trade_places:drawer_asked",
            *(f"sc:{effect}" for effect, _ in cards.SECOND_CHANCE_DECK),
        }
        if seats > 2:
            expected.add("choice:target")  # with two seats there is one opponent to name: chosen at once
        missing = sorted(expected - set(seen))
        assert not missing, f"{seats} seats, {games_at(seats)} games never reached {missing}"


CLOCK = {"turn_seconds": 30, "forfeit_after": 2}


@pytest.mark.parametrize("seats", [2, 3, 5, 8])
@pytest.mark.parametrize("mode", ["standard", "tournament"])
def test_seeded_games_with_a_turn_clock_keep_every_invariant(seats, mode):
    """The turn clock on (``turn_seconds``, two missed turns forfeit), a share of turns left to it: every event keeps
    the invariants, the log folds back, a replay reproduces every event; turns time out and seats forfeit."""
    seen: Counter[str] = Counter()
    for g in range(12):
        mix, timeouts = CONFIGS[g % len(CONFIGS)]
        bots = bots_for(mix, seats, random.Random(f"clock:{seats}:{g}"))
        seed = game_seed(seats, 30_000 + g)
        kw = dict(timeouts=timeouts, game_id=f"clock-{seats}-{g}", mode=mode, options=CLOCK, turn_timeouts=0.25)
        played = play_checked(seats, seed, bots, g, **kw)
        assert fold_from_scratch(played).state == played.state
        seen.update(type(e).__name__ for e in played.events)
        if g % 4 == 0:
            again = play_checked(seats, seed, bots, g, check=False, **kw)
            assert again.sim.envelopes == played.sim.envelopes
    assert seen["TurnTimedOut"] and seen["SeatForfeited"]


@pytest.mark.parametrize("seats", [2, 5, 8])
def test_games_under_rules_version_1_still_keep_every_invariant(seats):
    """Old games replay: bots playing under version 1 (the drawer never asked, swap three discarding first) keep every
    invariant, and their logs fold back into the state that was played."""
    for g in range(6):
        mix, timeouts = CONFIGS[g % len(CONFIGS)]
        bots = bots_for(mix, seats, random.Random(f"v1:{seats}:{g}"))
        played = play_checked(seats, game_seed(seats, 20_000 + g), bots, g, timeouts=timeouts, rules_version=1)
        assert played.state.rules_version == 1
        asked = [e for e in played.events if isinstance(e, ev.ResponseAwaited) and e.action == "trade_places"]
        assert all(e.seat != e.by for e in asked)  # only the named player was ever asked about a trade
        assert fold_from_scratch(played).state == played.state


@pytest.mark.parametrize("seats", [2, 5, 8])
def test_a_redacted_log_still_folds(seats):
    """DESIGN.md: a redacted log (``secret: null``) folds too — public facts come out the same, hidden cards unplaced."""
    for g in range(6):
        mix, timeouts = CONFIGS[g % len(CONFIGS)]
        played = play_checked(
            seats, game_seed(seats, 10_000 + g), bots_for(mix, seats, random.Random(g)), g, timeouts=timeouts
        )
        public = fold_from_scratch(played, redact=True)
        s, full = public.state, played.state
        assert public.head == played.sim.game.head
        assert (s.phase, s.winner, s.turn, s.turn_seat, s.round) == (
            full.phase,
            full.winner,
            full.turn,
            full.turn_seat,
            full.round,
        )
        assert [(st.meter, st.points, st.player) for st in s.seats] == [
            (st.meter, st.points, st.player) for st in full.seats
        ]
        assert all(not st.hand for st in s.seats) and not s.deck


def test_replays_are_deterministic_and_seeds_matter():
    """Same seed and bot seeds: identical envelopes and hashes. Another seed: another game."""
    bots = ["random", "greedy", "random", "greedy"]
    a = play_checked(4, game_seed(4, 99), bots, 7, timeouts=0.2, game_id="same", check=False)
    b = play_checked(4, game_seed(4, 99), bots, 7, timeouts=0.2, game_id="same", check=False)
    c = play_checked(4, game_seed(4, 100), bots, 7, timeouts=0.2, game_id="same", check=False)
    assert [e.hash for e in a.sim.envelopes] == [e.hash for e in b.sim.envelopes]
    assert a.sim.envelopes == b.sim.envelopes
    assert a.sim.envelopes[0].hash != c.sim.envelopes[0].hash  # the commitment differs already
    deal_a, deal_c = (next(e for e in x.events if isinstance(e, ev.RoundDealt)) for x in (a, c))
    assert deal_a.secret != deal_c.secret  # the deal differs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.binary(min_size=32, max_size=32),
    seats=st.integers(2, 8),
    mix=st.sampled_from(["random", "greedy", "mix"]),
    timeouts=st.sampled_from([0.0, 0.2, 0.6]),
    rnd_seed=st.integers(0, 2**32 - 1),
)
def test_any_seed_keeps_every_invariant(seed, seats, mix, timeouts, rnd_seed):
    bots = bots_for(mix, seats, random.Random(rnd_seed))
    played = play_checked(seats, seed, bots, rnd_seed, timeouts=timeouts, game_id="hyp")
    folded = fold_from_scratch(played)
    assert folded.state == played.state and folded.head == played.sim.game.head


def test_the_checker_is_not_vacuous():
    """A table with a card missing or doubled, a meter over 60, or a wait with no action is refused."""
    played = play_checked(3, game_seed(3, 1), ["greedy"] * 3, 1, keep_states=True)
    s = played.rest_states[len(played.rest_states) // 2]
    checker = Checker(3)
    checker.after_event(s)
    replace = msgspec.structs.replace
    some = next(c for c in (*s.deck, *(c for st in s.seats for c in st.hand)))
    hands = tuple(replace(st, hand=tuple(c for c in st.hand if c != some)) for st in s.seats)
    lost = replace(s, deck=tuple(c for c in s.deck if c != some), seats=hands)
    doubled = replace(s, discard=(*s.discard, some))
    over = replace(s, seats=(replace(s.seats[0], meter=61), *s.seats[1:]))
    stray_wait = replace(s, pending=Pending(seat=0, kind="respond", deadline_at=1), action=None)
    for bad in (lost, doubled, over, stray_wait):
        with pytest.raises(AssertionError):
            Checker(3).after_event(bad)
    assert s.rules_version >= 2
    with pytest.raises(AssertionError, match="not after the swap's draw"):  # version 2 swaps draw first
        Checker(3).after_event(s, ev.ThreeSwapped(seat=0, cards=("M20-1", "M20-2", "M20-3")))


def test_the_log_decodes_to_the_events_that_were_played():
    """Each envelope joins back to an event of the union; the fold of those events is the played state."""
    played = play_checked(5, game_seed(5, 3), ["random"] * 5, 3, timeouts=0.2)
    s = Game.new(KIND, "x", played.state.config, played.sim.game.seed).state
    for env, event in zip(played.sim.envelopes, played.events, strict=True):
        assert CODEC.join(env.public, env.secret) == event
        assert env.type == type(event).__struct_config__.tag
        s = evolve(s, event)
    assert s == played.state
