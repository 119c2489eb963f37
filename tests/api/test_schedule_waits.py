"""Waits on several seats at once (a Monopoly auction, a building shortage): the server treats one as a bot's when any
seat it awaits is a server bot — that bot answers now — and as people's otherwise, timed out at its deadline. A wait
with no ``seats`` (the card game's) awaits its ``seat`` alone, as it always did. A wait that holds up nothing (a
Monopoly trade offer) lets a bot's turn go on meanwhile."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import SimpleNamespace

import msgspec
import pytest

from service.api.schedule import due_at, server_move
from service.bots import BOTS, awaited, next_move
from service.events.base import Player
from service.events.common import Timeout
from tests.api.helpers import plain_monopoly_move

KIND = "stub-waits"
NOW, DEADLINE = 1_000, 5_000


class Answer(msgspec.Struct, tag="answer"):
    seat: int


class Wait(msgspec.Struct, frozen=True):
    seat: int
    deadline_at: int
    seats: tuple[int, ...] = ()


class OldWait(msgspec.Struct, frozen=True):
    """A wait as the card game has it: one seat, no ``seats``."""

    seat: int
    deadline_at: int


class Answering:
    name = "answering"

    def choose(self, s, seat, legal, rnd):
        return legal[0]


class Silent:
    name = "silent"

    def choose(self, s, seat, legal, rnd):
        return None


class Plain:
    """Monopoly played plainly: buy what you land on, pass every auction, take the flat tax, refuse trades, roll."""

    name = "plain"

    def choose(self, s, seat, legal, rnd):
        return plain_monopoly_move(legal)


@dataclass
class Table:
    pending: object
    seats: tuple
    turn_seat: int = 0
    version: int = 7
    answered_by: set[int] = field(default_factory=set)

    @property
    def n(self) -> int:
        return len(self.seats)

    def opponents(self, seat):
        return [(seat + k) % self.n for k in range(1, self.n)]


def _legal(s: Table, seat: int):
    """Only the awaited seats may answer."""
    return [Answer(seat=seat)] if seat in awaited(s.pending) else []


RULES = SimpleNamespace(KIND=KIND, status_of=lambda s: "playing", legal_commands=_legal)


def _game(pending, bots: dict[int, str]):
    seats = tuple(SimpleNamespace(player=Player(name=f"s{i}", bot=bots.get(i))) for i in range(4))
    state = Table(pending=pending, seats=seats)
    return SimpleNamespace(state=state, rules=RULES, game_id="g_waits", version=state.version)


@pytest.fixture(autouse=True)
def _stub_bots(monkeypatch):
    monkeypatch.setitem(BOTS, KIND, {"answering": Answering, "silent": Silent, "random": Answering})


def test_an_auction_awaiting_a_person_and_a_bot_is_the_bots_to_answer_now():
    game = _game(Wait(seat=1, deadline_at=DEADLINE, seats=(1, 2)), {2: "answering"})
    assert due_at(game, NOW, bot_delay_ms=50) == NOW + 50
    move = server_move(game, NOW)
    assert (move.seat, move.command, move.command_id) == (2, Answer(seat=2), "bot:g_waits:7")


def test_a_wait_on_people_only_lasts_to_its_deadline_then_the_server_times_it_out():
    game = _game(Wait(seat=1, deadline_at=DEADLINE, seats=(1, 2)), {0: "answering", 3: "answering"})
    assert due_at(game, NOW) == DEADLINE
    assert server_move(game, DEADLINE - 1) is None
    move = server_move(game, DEADLINE)
    assert (move.seat, move.command, move.command_id) == (None, Timeout(), "timeout:g_waits:7")


def test_bots_awaited_that_let_the_wait_pass_leave_it_to_the_deadline():
    game = _game(Wait(seat=1, deadline_at=DEADLINE, seats=(1, 2)), {1: "silent", 2: "silent"})
    assert server_move(game, NOW) is None
    assert server_move(game, DEADLINE).command == Timeout()


def test_a_wait_without_seats_awaits_its_seat_alone():
    on_bot = _game(OldWait(seat=2, deadline_at=DEADLINE), {2: "answering"})
    assert awaited(on_bot.state.pending) == (2,)
    assert due_at(on_bot, NOW) == NOW and server_move(on_bot, NOW).seat == 2
    on_person = _game(OldWait(seat=1, deadline_at=DEADLINE), {2: "answering"})
    assert due_at(on_person, NOW) == DEADLINE and server_move(on_person, NOW) is None


def test_next_move_tries_every_awaited_seat_in_order():
    s = _game(Wait(seat=0, deadline_at=DEADLINE, seats=(0, 1, 3)), {}).state
    players = [Silent(), Silent(), Answering(), Answering()]
    assert next_move(RULES, s, players, random.Random(0)) == (
        3,
        Answer(seat=3),
    )  # 0 and 1 let it pass; 2 is not awaited
    assert next_move(RULES, s, players, random.Random(0), seats={0, 1, 2}) is None


@dataclass
class OpenTable(Table):
    """A table whose wait holds up nothing (a Monopoly trade offer): ``blocked`` says so."""

    blocked: bool = False


def test_a_wait_that_holds_up_nothing_lets_a_bots_turn_go_on_and_still_expires():
    game = _game(Wait(seat=1, deadline_at=DEADLINE, seats=(1,)), {0: "answering"})
    game.state = OpenTable(pending=game.state.pending, seats=game.state.seats, turn_seat=0)
    game.rules = SimpleNamespace(
        KIND=KIND, status_of=lambda s: "playing", legal_commands=lambda s, seat: [Answer(seat=seat)]
    )
    assert due_at(game, NOW) == NOW
    move = server_move(game, NOW)
    assert (move.seat, move.command) == (0, Answer(seat=0))  # the person awaited (seat 1) is not the server's to play
    assert server_move(game, DEADLINE).command == Timeout()  # the offer still expires on time
    game.state.turn_seat = 2  # a person's turn: nothing the server must do before the deadline
    assert due_at(game, NOW) == DEADLINE


def test_a_monopoly_trade_offer_to_a_person_leaves_the_bots_turn_going():
    """Seats 0 and 1 are people, 2 and 3 server bots: with a trade from seat 0 to seat 1 awaiting its answer, the bot
    whose turn it is plays on at once instead of waiting for the offer's deadline."""
    from service.events import monopoly as ev
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for

    rules = rules_for("monopoly")
    game = Game.new("monopoly", "g_trade_wait", rules.CONFIG(seats=4, response_seconds=30), bytes(range(32)))
    game.play(Create(), None, NOW)
    for i in range(4):
        game.play(TakeSeat(player=Player(name=f"p{i}", bot="strategic" if i >= 2 else None)), None, NOW)
    players = [Plain(), Plain(), Plain(), Plain()]
    for _ in range(500):  # people and bots alike play plainly until it is a bot's turn to roll
        s = game.state
        if s.turn_seat == 2 and s.pending is None and ev.Roll() in rules.legal_commands(s, 2):
            break
        seat, command = next_move(rules, s, players, random.Random(0))
        game.play(command, seat, NOW)
    else:
        raise AssertionError("seat 2 never came to roll")
    game.play(ev.OfferTrade(to=1, give=ev.Holdings(cash=10)), 0, NOW)
    assert game.state.pending.kind == "trade" and game.state.pending.seats == (1,)
    assert due_at(game, NOW) == NOW
    move = server_move(game, NOW)
    assert move.seat == 2 and move.command_id == f"bot:g_trade_wait:{game.version}"
