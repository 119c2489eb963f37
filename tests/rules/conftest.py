"""Builders for the card game's rule tests: a dealt game, then an exact table to play a ruling on.

``table(...)`` starts from a real dealt game (``service.sim.games.new_game``: Create + TakeSeat × n through
``Game``) and then lays out exact hands, meters, Point cards and decks with ``msgspec.structs.replace``,
keeping every card in exactly one place. It returns a ``Table``: the state plus a clock, which plays
commands through the real decider (``run``) and remembers the last batch of events::

    def test_feeding_the_meter_adds_its_minutes(table):
        t = table(hands={1: ["M20-1"]}, meters={1: 30})
        t.play(FeedMeter(card="M20-1"), 1)
        assert t.seat(1).meter == 50

Seats not named in ``hands`` hold nothing; cards not placed anywhere make up the playing deck (in the
unshuffled order of ``cards.playing_deck``) — or, when ``deck`` is given, the discard pile; ``rest_to=<seat>``
puts them in that seat's hand instead. The Second Chance deck works the same way (the rest to its deck, or
to its discards when ``second_chance`` is given). ``rules_version=1`` plays the table under an older rules version,
as a game recorded under it replays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec
import pytest

from service.rules.errors import RuleViolation
from service.rules.free_parking import cards, legal_commands, run
from service.rules.free_parking.state import State
from service.sim.games import new_game

SEED = bytes(range(32))
AT = 1_800_000_000_000  # every command of a test is sent at this instant unless it says otherwise

replace = msgspec.structs.replace


@cache
def dealt_state(
    seats: int = 3, seed: bytes = SEED, options: tuple[tuple[str, Any], ...] = (), rules_version: int | None = None
) -> State:
    """The state right after the deal (a real game: Create, then TakeSeat for every seat), under the current rules
    version unless ``rules_version`` names an older one (a game recorded under it)."""
    sim = new_game("free-parking", seats, seed, f"rules-{seats}", ["random"] * seats, dict(options), rules_version)
    return sim.game.state


def cards_in_play(s: State) -> tuple[list[str], list[str]]:
    """Every playing card and every Second Chance card, wherever it lies (hands, tables, piles, the action)."""
    playing = [*s.deck, *s.discard]
    for st in s.seats:
        playing += [*st.hand, *st.points]
    second = [*s.second_chance, *s.second_chance_discard]
    if s.action is not None:
        (second if s.action.card.startswith("SC-") else playing).append(s.action.card)
    return playing, second


def assert_cards_conserved(s: State) -> None:
    """Each physical card lies in exactly one place: none lost, none doubled."""
    if s.phase in ("new", "waiting"):
        return
    sets = cards.sets_for(s.n)
    playing, second = cards_in_play(s)
    doubled = [c for c, n in Counter(playing + second).items() if n > 1]
    assert not doubled, f"cards in two places: {doubled}"
    assert sorted(playing) == sorted(c.id for c in cards.playing_deck(sets))
    assert sorted(second) == sorted(c.id for c in cards.second_chance_deck(sets))


class Table:
    """A game under test: ``state``, the instant ``at`` commands are sent, and the last batch of ``events``."""

    def __init__(self, state: State, at: int = AT) -> None:
        self.state = state
        self.at = at
        self.events: list[msgspec.Struct] = []
        self.log: list[msgspec.Struct] = []

    # -- acting ------------------------------------------------------------------------------------

    def play(self, command: msgspec.Struct, seat: int | None, *, at: int | None = None) -> list[msgspec.Struct]:
        """Decide ``command`` from ``seat`` (``None``: the server) and adopt the resulting state."""
        events, state = run(self.state, command, seat, self.at if at is None else at)
        assert events, f"{command!r} was accepted but produced no event"
        assert state.version == self.state.version + len(events)
        self.state, self.events = state, events
        self.log += events
        assert_cards_conserved(state)
        return events

    def refused(self, command: msgspec.Struct, seat: int | None, *, at: int | None = None) -> str:
        """The code ``command`` is refused with; the table must be left exactly as it was."""
        before = self.state
        with pytest.raises(RuleViolation) as caught:
            run(self.state, command, seat, self.at if at is None else at)
        assert self.state is before
        return caught.value.code

    # -- looking -----------------------------------------------------------------------------------

    def seat(self, i: int):
        return self.state.seats[i]

    @property
    def pending(self):
        return self.state.pending

    @property
    def action(self):
        return self.state.action

    @property
    def deadline(self) -> int:
        """When a wait opened by the last command ends: ``at`` + response_seconds × 1000."""
        return self.at + self.state.config.response_seconds * 1000

    def cards_in_play(self) -> tuple[list[str], list[str]]:
        return cards_in_play(self.state)

    def legal(self, seat: int) -> list[msgspec.Struct]:
        return legal_commands(self.state, seat)

    def types(self, events: Iterable[msgspec.Struct] | None = None) -> list[type]:
        return [type(e) for e in (self.events if events is None else events)]

    def all(self, cls: type) -> list[Any]:
        """The events of type ``cls`` in the last batch."""
        return [e for e in self.events if isinstance(e, cls)]

    def one(self, cls: type) -> Any:
        """The only event of type ``cls`` in the last batch."""
        found = self.all(cls)
        assert len(found) == 1, f"expected one {cls.__name__} in {self.types()}"
        return found[0]

    def none(self, cls: type) -> bool:
        return not self.all(cls)


def build_table(
    seats: int = 3,
    *,
    hands: dict[int, list[str]] | None = None,
    meters: dict[int, int] | None = None,
    points: dict[int, list[str]] | None = None,
    deck: list[str] | None = None,
    discard: list[str] | None = None,
    second_chance: list[str] | None = None,
    second_chance_discard: list[str] | None = None,
    turn: int = 1,
    phase: str = "main",
    rest_to: int | str | None = None,
    seed: bytes = SEED,
    at: int = AT,
    rules_version: int | None = None,
    **options: Any,
) -> Table:
    """A dealt game of ``seats`` seats, then exactly this table; it is ``turn``'s turn, in ``phase``.

    Cards placed nowhere go to ``rest_to``: ``"deck"`` (under any ``deck`` given), ``"discard"``, or a seat's
    hand; by default the deck, or the discard pile when ``deck`` is given. ``rules_version``: a game created under
    that version (default: the current one).
    """
    s = dealt_state(seats, seed, tuple(sorted(options.items())), rules_version)
    sets = cards.sets_for(seats)
    hands, meters, points = dict(hands or {}), dict(meters or {}), dict(points or {})

    universe = [c.id for c in cards.playing_deck(sets)]
    placed = [c for h in hands.values() for c in h] + [c for p in points.values() for c in p]
    placed += list(deck or []) + list(discard or [])
    _check(placed, universe)
    rest = [c for c in universe if c not in set(placed)]
    if rest_to is None:
        rest_to = "deck" if deck is None else "discard" if discard is None else None
    if rest_to == "deck":
        deck = [*(deck or []), *rest]
    elif rest_to == "discard":
        discard = [*(discard or []), *rest]
    elif isinstance(rest_to, int):
        hands[rest_to] = [*hands.get(rest_to, []), *rest]
    elif rest:
        raise ValueError(f"{len(rest)} cards have nowhere to go: say rest_to=<seat>")

    sc_universe = [c.id for c in cards.second_chance_deck(sets)]
    sc_placed = list(second_chance or []) + list(second_chance_discard or [])
    _check(sc_placed, sc_universe)
    sc_rest = [c for c in sc_universe if c not in set(sc_placed)]
    if second_chance is None:
        second_chance, sc_rest = sc_rest, []
    else:
        second_chance_discard, sc_rest = [*(second_chance_discard or []), *sc_rest], []

    new_seats = tuple(
        replace(
            st,
            hand=tuple(hands.get(i, ())),
            points=tuple(points.get(i, ())),
            meter=meters.get(i, 0),
        )
        for i, st in enumerate(s.seats)
    )
    s = replace(
        s,
        seats=new_seats,
        deck=tuple(deck),
        discard=tuple(discard or ()),
        second_chance=tuple(second_chance),
        second_chance_discard=tuple(second_chance_discard or ()),
        turn_seat=turn,
        phase=phase,
        action=None,
        pending=None,
    )
    assert_cards_conserved(s)
    return Table(s, at)


def _check(placed: list[str], universe: list[str]) -> None:
    known = set(universe)
    strangers = [c for c in placed if c not in known]
    if strangers:
        raise ValueError(f"not cards of this game: {strangers}")
    doubled = [c for c, n in Counter(placed).items() if n > 1]
    if doubled:
        raise ValueError(f"cards placed twice: {doubled}")


def dealt_table(seats: int = 3, seed: bytes = SEED, at: int = AT, **options: Any) -> Table:
    return Table(dealt_state(seats, seed, tuple(sorted(options.items()))), at)


def fresh_game(seats: int = 3, seed: bytes = SEED, **options: Any) -> Table:
    """A created game with no seat taken yet (phase ``waiting``)."""
    from service.events.common import Create
    from service.rules.free_parking import CONFIG, initial

    t = Table(initial(CONFIG(seats=seats, **options), seed))
    t.play(Create(), None)
    return t


@pytest.fixture
def table():
    """``table(seats=3, hands={1: [...]}, meters={1: 60}, points={2: [...]}, deck=[...], second_chance=[...])``."""
    return build_table


@pytest.fixture(name="fresh_game")
def fresh_game_fixture():
    """``fresh_game(seats=3)``: a created game whose seats are all open."""
    return fresh_game


@pytest.fixture
def dealt():
    """``dealt(seats=3, seed=SEED)``: a game right after the deal, as the server left it."""
    return dealt_table
