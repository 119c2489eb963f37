"""Bots that peek are caught; bots that do not are never refused (issue 30, docs/fairness.md "Bots that never peek").

A server bot is asked on a world of its own seat (``service/bots/sight.py``), and ``replays verify`` re-derives every
move of a bot seated at ``bot_version`` 1 from that world (``replays/bots.py``). These tests give that check teeth on
the runner's own path — ``server_move`` → ``_owed_move`` → ``_bot_move`` → ``sight.bot_move``, the server seating the
bots, in process with no HTTP and no store:

- honest bots of every kind play games that all verify, with their bot moves re-derived;
- a bot patched to read the true table (the next Second Chance card, the next dice, the next redeal), seated under an
  honest bot's name by a service that hands its bots the true table (``sight.world_of`` patched to return it during
  play), is refused at a bot move in at least 95% of 200 seeded games of each kind;
- the world a bot chooses in offers exactly the true table's legal commands, so an honest bot never picks a command
  the true game would not take.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest

from replays.verify import verify
from service.api import schedule
from service.api.schedule import next_due, server_move
from service.bots import BOTS, params_of, sight
from service.bots.free_parking import GreedyBot as CardGreedy
from service.bots.monopoly import StrategicBot
from service.bots.solitaire import GreedyBot as SolitaireGreedy
from service.bots.solitaire import worth
from service.events import free_parking as fp
from service.events import monopoly as mono
from service.events import solitaire as sol
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.envelope import Envelope
from service.events.export import ExportHeader
from service.rules.engine import Game, export_header, rules_for
from service.rules.free_parking import cards
from service.rules.rng import Stream
from service.rules.solitaire import layout as grid
from tests.depth import count

START_AT = 1_767_225_600_000
STEP_MS = 1_000
MAX_COMMANDS = 20_000

PEEKING_GAMES = count("FREE_PARKING_PEEKING_GAMES", 200, 1_000)
"""Seeded games per kind with a peeking bot: the share caught is measured over these."""
HONEST_GAMES = count("FREE_PARKING_HONEST_BOT_GAMES", 6, 40)
"""Seeded games per kind and mix of honest bots on the runner's path: every one must verify."""
CAUGHT = 0.95
"""The least share of peeking games refused (issue 30)."""


# --- games on the runner's path ---------------------------------------------------------------------------------


def seated_game(kind: str, bots: list[str], n: int, *, options: dict | None = None) -> tuple[Game, list[Envelope]]:
    """A game of ``kind`` created and seated by the server with ``bots``, as ``POST /games/{id}/seats`` seats a bot:
    its name, ``bot_version`` 1 and the parameters the service seats it with (``params_of``); with its log so far."""
    seed = hashlib.sha256(f"peeking:{kind}:{'+'.join(bots)}:{n}".encode()).digest()
    rules = rules_for(kind)
    game = Game.new(kind, f"{kind}-{'-'.join(bots)}-{n}", rules.CONFIG(seats=len(bots), **(options or {})), seed)
    log = game.play(Create(), None, START_AT)
    for i, name in enumerate(bots):
        player = Player(name=f"{name} bot {i}", bot=name, bot_version=sight.SIGHTED, bot_params=params_of(kind, name))
        log += game.play(TakeSeat(player=player), None, START_AT)
    return game, log


def run(game: Game, log: list[Envelope]) -> list[Envelope]:
    """Play ``game`` to its end as the runner does: whatever ``server_move`` owes it now (a bot's move, or a timeout
    once a deadline has passed), the clock moving on a second a command, or to the next due time when nothing is
    owed. Returns the whole log, ``log`` (the game's so far) and what it adds."""
    envelopes = list(log)
    now = START_AT
    for _ in range(MAX_COMMANDS):
        if game.rules.status_of(game.state) == "finished":
            return envelopes
        move = server_move(game, now)
        if move is None:
            due = next_due(game, now)
            assert due is not None and due > now, f"{game.game_id} waits on nobody at version {game.version}"
            now = due
            continue
        envelopes += game.play(move.command, move.seat, now, move.command_id)
        now += STEP_MS
    raise AssertionError(f"{game.game_id} did not end within {MAX_COMMANDS} commands")


def exported(game: Game, envelopes: list[Envelope]) -> tuple[ExportHeader, list[Envelope]]:
    return export_header(game, with_seed=True), envelopes


@pytest.fixture(autouse=True)
def fresh_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner keeps its seated bots between moves: each test starts with none, so no test plays another's."""
    monkeypatch.setattr(schedule, "_seated", OrderedDict())


@contextmanager
def peeking_service(monkeypatch: pytest.MonkeyPatch, kind: str, name: str, peeker: type) -> Iterator[None]:
    """A service that hands its bots the true table, with ``peeker`` registered under the honest ``name``: the log
    records the honest bot (``name``, version 1). Both are undone on leaving, before anything is verified."""
    with monkeypatch.context() as m:
        m.setattr(sight, "world_of", lambda kind, s, seat, rnd: s)
        m.setitem(BOTS[kind], name, peeker)
        m.setattr(schedule, "_seated", OrderedDict())
        yield


# --- peeking bots: each an honest bot that changes its mind on what its seat cannot see -------------------------

CHANGED: list[int] = []
"""The seq of each command a peek changed (the first event of its batch), over the game being played."""


class Peeking:
    """An honest bot (the next base class) that asks first what the honest bot chooses, then lets ``peek`` — which
    reads the true table — change its mind; every change is noted in ``CHANGED``."""

    def choose(self, s: Any, seat: int, legal: list[msgspec.Struct], rnd: random.Random) -> msgspec.Struct | None:
        honest = super().choose(s, seat, legal, rnd)  # type: ignore[misc]
        chosen = self.peek(s, seat, legal, honest)
        if chosen != honest:
            CHANGED.append(s.version + 1)
        return chosen

    def peek(self, s: Any, seat: int, legal: list[msgspec.Struct], honest: msgspec.Struct | None) -> msgspec.Struct | None:
        raise NotImplementedError


GOOD_SECOND_CHANCE = frozenset({"take_point", "add_20", "add_40", "set_60", "draw_2", "trade_places"})


class PeekingCardGreedy(Peeking, CardGreedy):
    """The card game's greedy bot that reads the Second Chance deck and the other hands: it draws a Second Chance
    card only when the true top one is good for it (ending its turn otherwise, or drawing when it would not have),
    and aims Time Expires at an opponent whose true hand holds no Talk Your Way Out card."""

    def peek(self, s: Any, seat: int, legal: list[msgspec.Struct], honest: msgspec.Struct | None) -> msgspec.Struct | None:
        if s.second_chance and seat == s.turn_seat and s.pending is None:
            good = s.second_chance[0].split("-")[1] in GOOD_SECOND_CHANCE
            if isinstance(honest, fp.DrawSecondChance) and not good and fp.EndTurn() in legal:
                return fp.EndTurn()
            if isinstance(honest, fp.EndTurn) and good and fp.DrawSecondChance() in legal:
                return fp.DrawSecondChance()
        if isinstance(honest, fp.TimeExpires):
            unguarded = [c for c in legal if isinstance(c, fp.TimeExpires) and c.card == honest.card
                         and not any(cards.kind_of(h) == "talk_your_way_out" for h in s.seats[c.target].hand)]
            if unguarded and honest not in unguarded:
                return unguarded[0]
        return honest


def next_dice(s: Any) -> tuple[int, int]:
    """The dice the true table throws next (``turn.throw``): roll ``rolls + 1`` of the game's seed."""
    stream = Stream(s.rng_seed, f"dice:{s.rolls + 1}")
    return stream.below(6) + 1, stream.below(6) + 1


class PeekingStrategic(Peeking, StrategicBot):
    """Monopoly's strategic bot that reads the dice to come: in jail it rolls for doubles exactly when the next dice
    are doubles (else it pays or plays its card), and it keeps its cash — declines a purchase it would make — when
    the next throw is high (7 or more), buying what it would have declined when the throw is low."""

    def peek(self, s: Any, seat: int, legal: list[msgspec.Struct], honest: msgspec.Struct | None) -> msgspec.Struct | None:
        a, b = next_dice(s)
        if isinstance(honest, mono.Buy) and a + b >= 7 and mono.Decline() in legal:
            return mono.Decline()
        if isinstance(honest, mono.Decline) and a + b < 7 and mono.Buy() in legal:
            return mono.Buy()
        if isinstance(honest, (mono.Roll, mono.PayFine, mono.UseJailCard)) and s.seats[seat].in_jail:
            leave = [c for c in legal if isinstance(c, (mono.UseJailCard, mono.PayFine))]
            if a == b and mono.Roll() in legal:
                return mono.Roll()
            if a != b and leave:
                return leave[0]
        return honest


class PeekingSolitaireGreedy(Peeking, SolitaireGreedy):
    """The solitaire's greedy bot that reads the next redeal off the seed: it redeals the moment the true redeal
    deals a better layout (by its own ``worth``) than the one it has, and resigns rather than redeal into a worse
    one."""

    def peek(self, s: Any, seat: int, legal: list[msgspec.Struct], honest: msgspec.Struct | None) -> msgspec.Struct | None:
        if s.layout is None or sol.Redeal() not in legal:
            return honest
        better = worth(grid.redeal(s.layout, s.rng_seed, s.redeals_used + 1)) > worth(s.layout)
        if better and honest != sol.Redeal():
            return sol.Redeal()
        if not better and honest == sol.Redeal() and sol.Resign() in legal:
            return sol.Resign()
        return honest


# Each kind: the honest name a peeker is seated under, the peeker, and the tables it plays at (its seat first).
PEEKERS: dict[str, tuple[str, type, Callable[[int], list[str]], dict]] = {
    "free-parking": ("greedy", PeekingCardGreedy, lambda n: ["greedy"] + ["random"] * (1 + n % 3), {}),
    "monopoly": ("strategic", PeekingStrategic, lambda n: ["strategic", "random", "random"][: 2 + n % 2], {"max_rounds": 25}),
    "solitaire": ("greedy", PeekingSolitaireGreedy, lambda n: ["greedy"], {}),
}


# --- honest bots: never refused --------------------------------------------------------------------------------

HONEST: dict[str, list[tuple[list[str], dict]]] = {
    "free-parking": [(["random", "random"], {}), (["greedy", "random", "greedy"], {}), (["greedy"] * 4, {}),
                     (["random", "greedy", "random", "greedy"], {})],
    "monopoly": [(["random", "random"], {"max_rounds": 40}), (["strategic", "random", "strategic"], {"max_rounds": 40}),
                 (["strategic"] * 4, {"max_rounds": 60})],
    "solitaire": [(["greedy"], {}), (["solver"], {})],
}


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_bots_on_the_runners_path_always_verify(kind: str) -> None:
    """Every game the server plays with honest bots verifies, each bot move re-derived from its seat's own world:
    the check refuses nothing a bot that never peeks does (the same bots, the same path, as the service)."""
    for bots, options in HONEST[kind]:
        for n in range(HONEST_GAMES):
            game, log = seated_game(kind, bots, n, options=options)
            verdict = verify(*exported(game, run(game, log)))
            assert verdict.ok, (bots, n, verdict.divergence)
            assert re.match(r"[1-9][0-9]* bot moves re-derived", verdict.bots), verdict.bots


def test_the_expert_on_the_runners_path_verifies() -> None:
    """The expert searches worlds sampled from its seat (slow: a few games): its moves re-derive too."""
    for n in range(2):
        game, log = seated_game("free-parking", ["expert", "greedy", "random"][: 2 + n], n)
        verdict = verify(*exported(game, run(game, log)))
        assert verdict.ok, verdict.divergence
        assert re.match(r"[1-9][0-9]* bot moves re-derived", verdict.bots), verdict.bots


@pytest.mark.parametrize("kind", sorted(PEEKERS))
def test_the_true_table_alone_is_not_what_is_refused(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Handed the true table, a bot whose choice reads nothing hidden chooses as on its own world: such games verify.
    So a refusal below is the peek's, not the patched service's."""
    name, _, table, options = PEEKERS[kind]
    honest = BOTS[kind][name]
    for n in range(3):
        game, log = seated_game(kind, table(n), n, options=options)
        with peeking_service(monkeypatch, kind, name, honest):
            envelopes = run(game, log)
        verdict = verify(*exported(game, envelopes))
        assert verdict.ok, verdict.divergence


# --- peeking bots: refused -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(PEEKERS))
def test_a_bot_that_reads_the_true_table_is_refused(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A service that hands a bot the true table, and a bot that reads it (the next Second Chance card and the
    other hands; the dice to come; the next redeal), seated under an honest bot's name: ``replays verify``
    re-derives the honest bot's move from its seat's own world and refuses the log at a bot move in at least 95%
    of the seeded games. (A game escapes only when no peek ever changed the bot's mind.)"""
    name, peeker, table, options = PEEKERS[kind]
    caught, escaped = 0, []
    for n in range(PEEKING_GAMES):
        game, log = seated_game(kind, table(n), 10_000 + n, options=options)
        CHANGED.clear()
        with peeking_service(monkeypatch, kind, name, peeker):
            envelopes = run(game, log)
        verdict = verify(*exported(game, envelopes))
        if not CHANGED:  # the peek never changed the bot's mind: its log is an honest bot's, and verifies
            assert verdict.ok, verdict.divergence
            escaped.append(n)
            continue
        assert not verdict.ok, f"game {n}: a peek changed seq {CHANGED[0]}, and the log verified"
        d = verdict.divergence
        assert d.seq == CHANGED[0], (n, d)  # refused at the very move the peek changed (its seat may have moved)
        assert re.fullmatch(rf"bot move \(seat \d+'s {name} bot chose what its own view does not give\)", d.what), d
        caught += 1
    share = caught / PEEKING_GAMES
    print(f"{kind}: {caught}/{PEEKING_GAMES} peeking games refused ({share:.1%}); escaped {escaped}")
    assert share >= CAUGHT, f"{kind}: only {share:.1%} caught; escaped {escaped[:20]}"


# --- the world offers the true table's commands ----------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(PEEKERS))
def test_a_seats_world_has_the_true_tables_legal_commands(kind: str) -> None:
    """A bot chooses from its world's legal commands (``sight.decide``): that list must be the true table's, for
    every seat, or an honest bot could send what the game refuses (and its world would leak what it hides)."""
    rules = rules_for(kind)
    _, _, table, options = PEEKERS[kind]
    checked = 0
    for n in range(4):
        game, _ = seated_game(kind, table(n), 20_000 + n, options=options)
        rnd = random.Random(n)
        for _ in range(MAX_COMMANDS):
            s = game.state
            if rules.status_of(s) == "finished":
                break
            if rnd.random() < 0.3:
                for seat in range(len(s.seats)):
                    world = sight.world_of(kind, s, seat, random.Random(rnd.getrandbits(64)))
                    assert rules.legal_commands(world, seat) == rules.legal_commands(s, seat), (n, s.version, seat)
                    checked += 1
            move = server_move(game, START_AT + s.version * STEP_MS + 10**9)  # far on: any deadline has passed
            assert move is not None
            game.play(move.command, move.seat, START_AT + s.version * STEP_MS + 10**9, move.command_id)
    assert checked >= 50
