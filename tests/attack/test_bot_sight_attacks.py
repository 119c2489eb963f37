"""Attacks on "bots that provably never peek" (issue 30; docs/fairness.md, service/bots/sight.py, replays/bots.py).

1. Sight: two true tables a seat sees alike give it the same world and the same choice, for every kind (hidden
   hands, deck orders, fans, seeds, a combined game's seed all varied).
2. An operator who rewrites a log (the whole chain re-hashed, as the service itself could) to hide a bot's moves from
   the check, or to seat a bot under another name or other parameters, is refused or visibly not checked.
3. Honest play is never refused: a bot made afresh at every move verifies as one kept all game.
4. Nothing in a hostile log crashes the verifier or makes it run for hours.
"""

from __future__ import annotations

import random
import signal
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from msgspec.structs import replace

from replays.verify import verify
from service.api import schedule
from service.bots import BOTS, bot, params_of, sight, worlds
from service.events.base import BotParams, Player
from service.events.common import TakeSeat
from service.events.envelope import NULL, Envelope
from service.rules.engine import Game, command_of, rules_for
from service.rules.resign import bot_legal
from tests.bots.test_peeking_bots import START_AT, STEP_MS, exported, run, seated_game


@pytest.fixture(autouse=True)
def fresh_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schedule, "_seated", OrderedDict())


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail (rather than hang the run) if the block takes longer than ``seconds``."""

    def alarm(*_: object) -> None:
        raise TimeoutError(f"took over {seconds}s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --- 1. two tables a seat sees alike --------------------------------------------------------------------------


def twin(kind: str, s, seat: int, rnd: random.Random):
    """Another true table ``seat`` cannot tell from ``s``: every hidden place dealt otherwise, other seeds."""
    if kind == "free-parking":
        other = worlds.sample(s, seat, rnd)  # the other hands, both decks, the fan: re-dealt
    elif kind == "monopoly":
        chance, chest = list(s.chance), list(s.chest)
        rnd.shuffle(chance)
        rnd.shuffle(chest)
        other = replace(s, chance=tuple(chance), chest=tuple(chest))
    else:
        other = s
    return replace(other, seed=rnd.randbytes(32), seeding="combined", game_seed=rnd.randbytes(32))


SIGHT_TABLES = {
    "free-parking": (["greedy", "random", "greedy"], {}, ["greedy", "random", "expert"]),
    "monopoly": (["strategic", "random", "strategic"], {"max_rounds": 8}, ["strategic", "random"]),
    "solitaire": (["greedy"], {}, ["greedy", "solver"]),
}


@pytest.mark.parametrize("kind", sorted(SIGHT_TABLES))
def test_tables_a_seat_sees_alike_give_it_the_same_world_and_choice(kind: str) -> None:
    table, options, names = SIGHT_TABLES[kind]
    rules = rules_for(kind)
    game, _ = seated_game(kind, table, 7, options=options)
    rnd = random.Random(kind)
    checked = 0
    for step in range(400):
        s = game.state
        if rules.status_of(s) == "finished":
            break
        if step % 5 == 0:
            for seat in range(len(s.seats)):
                other = twin(kind, s, seat, rnd)
                if kind != "solitaire":
                    assert other != s
                k = rnd.getrandbits(64)
                a = sight.world_of(kind, s, seat, random.Random(k))
                b = sight.world_of(kind, other, seat, random.Random(k))
                assert a == b, (kind, s.version, seat)
                # what the seat may do is its own information: the same on its world (sight.LIST_FIRST relies on it)
                assert bot_legal(rules, a, seat) == bot_legal(rules, s, seat), (kind, s.version, seat)
                for name in names:
                    params = BotParams(nodes=40) if name == "expert" else params_of(kind, name)
                    mine = sight.decide(bot(kind, name, params), rules, s, seat, game.game_id)
                    theirs = sight.decide(bot(kind, name, params), rules, other, seat, game.game_id)
                    assert mine == theirs, (kind, name, s.version, seat)
                checked += 1
        move = schedule.server_move(game, START_AT + 10**9)
        if move is None:
            break
        game.play(move.command, move.seat, START_AT + 10**9, move.command_id)
    assert checked >= 10


# --- 2. a log rewritten by its operator -------------------------------------------------------------------------


def rewritten(game: Game, envelopes: list[Envelope], edit: Callable[[Player], Player]) -> tuple[Game, list[Envelope]]:
    """The log an operator makes by playing the same commands again with every bot's ``seat_taken`` edited: a
    consistent chain, every hash recomputed (only players' receipts could tell it from the true one)."""
    again = Game.new(game.rules.KIND, game.game_id, game.state.config, game.seed, game.state.rules_version)
    out: list[Envelope] = []
    for env in envelopes:
        if env.command == NULL:
            continue
        command, seat = command_of(game, env)
        if isinstance(command, TakeSeat) and command.player.bot:
            command = TakeSeat(player=edit(command.player))
        out += again.play(command, seat, env.at, env.command_id)
    return again, out


def played(kind: str, bots: list[str], n: int = 3, options: dict | None = None) -> tuple[Game, list[Envelope]]:
    game, log = seated_game(kind, bots, n, options=options)
    return game, run(game, log)


def test_an_honest_log_rewritten_unchanged_verifies() -> None:
    """The rewriting itself is faithful: the same players give a log that verifies, its bot moves re-derived."""
    game, envelopes = played("free-parking", ["greedy", "random"])
    verdict = verify(*exported(*rewritten(game, envelopes, lambda p: p)))
    assert verdict.ok, verdict.divergence
    assert "bot moves re-derived" in verdict.bots


def test_a_bot_renamed_to_another_of_its_kind_is_refused() -> None:
    game, envelopes = played("free-parking", ["greedy", "random"])
    edited = rewritten(game, envelopes, lambda p: replace(p, bot="random" if p.bot == "greedy" else "greedy"))
    verdict = verify(*exported(*edited))
    assert not verdict.ok and verdict.divergence.what.startswith("bot move"), verdict.summary()


def test_a_bot_whose_version_is_dropped_is_not_silently_passed() -> None:
    """Drop ``bot_version``: its moves are no longer re-derived. The verdict must say so (held: the words name
    the seats), and the count of bot moves re-derived falls to nothing."""
    game, envelopes = played("free-parking", ["greedy", "random"])
    verdict = verify(*exported(*rewritten(game, envelopes, lambda p: replace(p, bot_version=None))))
    assert "seats 0, 1" in verdict.bots and "re-derived" not in verdict.bots, verdict.bots


def test_a_bot_given_a_version_from_the_future_is_not_described_as_from_the_past() -> None:
    """``bot_version`` 2 (which no service has written) made the moves "not checkable" and the verdict said they
    were "played before bots were checkable": a false statement, and a way for an operator to hide a peeking bot
    under words that read as harmless history. The verdict must name it for what it is, and refuse the log."""
    game, envelopes = played("free-parking", ["greedy", "random"])
    verdict = verify(*exported(*rewritten(game, envelopes, lambda p: replace(p, bot_version=99))))
    assert "before bots were checkable" not in (verdict.bots or ""), verdict.bots
    assert not verdict.ok, verdict.summary()
    assert "bot_version 99" in verdict.divergence.found, verdict.divergence


# --- 4. a hostile log never crashes the verifier, nor makes it run for hours -----------------------------------


HOSTILE: dict[str, tuple[str, list[str], Callable[[Player], Player]]] = {
    "no-such-bot": ("solitaire", ["greedy"], lambda p: replace(p, bot="nonexistent")),
    "params-the-bot-does-not-take": ("solitaire", ["greedy"], lambda p: replace(p, bot_params=BotParams(budget=5))),
    "a-jail-policy-no-bot-has": ("monopoly", ["strategic", "random"],
                                 lambda p: replace(p, bot_params=BotParams(jail="whatever")) if p.bot == "strategic" else p),
    "expert-with-a-trillion-nodes": ("free-parking", ["greedy", "random"],
                                     lambda p: replace(p, bot="expert", bot_params=BotParams(nodes=10**12))
                                     if p.bot == "greedy" else p),
    "expert-with-a-horizon-of-a-trillion": ("free-parking", ["greedy", "random"],
                                            lambda p: replace(p, bot="expert", bot_params=BotParams(horizon=10**12))
                                            if p.bot == "greedy" else p),
    "solver-with-a-trillion-nodes": ("solitaire", ["greedy"],
                                     lambda p: replace(p, bot="solver", bot_params=BotParams(budget=10**12))),
    "negative-budget": ("solitaire", ["greedy"], lambda p: replace(p, bot="solver", bot_params=BotParams(budget=-1))),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_bot_in_the_log_is_refused_quickly_not_a_crash(case: str) -> None:
    kind, bots, edit = HOSTILE[case]
    game, envelopes = played(kind, bots, options={"max_rounds": 4} if kind == "monopoly" else None)
    edited = rewritten(game, envelopes, edit)
    with within(10):
        verdict = verify(*exported(*edited))
    assert not verdict.ok, verdict.summary()
    assert verdict.divergence.what.startswith("bot"), verdict.divergence


# --- 3. honest play is never refused ----------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "bots"), [("solitaire", ["solver"]), ("monopoly", ["strategic", "strategic"]),
                                            ("free-parking", ["greedy", "random", "greedy"])])
def test_a_service_that_forgets_its_bots_after_every_move_still_verifies(kind, bots, monkeypatch) -> None:
    """A restart between every two moves (no bot kept): the log verifies as one played by bots kept all game."""
    monkeypatch.setattr(schedule, "seated_bot", lambda game_id, seat, kind, name, params=None: bot(kind, name, params))
    game, envelopes = played(kind, bots, 11, options={"max_rounds": 10} if kind == "monopoly" else None)
    verdict = verify(*exported(game, envelopes))
    assert verdict.ok, verdict.divergence
    assert "bot moves re-derived" in verdict.bots


def test_every_seated_bot_name_of_every_kind_has_a_class() -> None:
    """The join route seats only names of BOTS (service/api/routes.py), and every name there can be made."""
    for kind, names in BOTS.items():
        for name in names:
            bot(kind, name, params_of(kind, name))


# --- 1b. the order of what is hidden must not show through the world --------------------------------------------


def test_a_monopoly_world_does_not_carry_the_true_deck_order() -> None:
    """HOLE (fixed): ``_monopoly`` shuffled the true Chance and Community Chest decks with the seat's public
    randomness, so the world's order was a known permutation of the true one. Anyone (a bot handed ``rnd``, or a
    service that seats a bot decoding it) reads the true next card back out of the world, and ``replays verify``
    re-deals the very same world, so such a peeking bot's moves re-derive. Two decks in other orders must give
    the same world."""
    game, _ = seated_game("monopoly", ["strategic", "random"], 1, options={"max_rounds": 4})
    s = game.state
    assert len(s.chance) > 2
    other = replace(s, chance=tuple(reversed(s.chance)), chest=tuple(reversed(s.chest)))
    for k in range(20):
        a = sight.world_of("monopoly", s, 0, random.Random(k))
        b = sight.world_of("monopoly", other, 0, random.Random(k))
        assert (a.chance, a.chest) == (b.chance, b.chest), k
    # and the decoding itself: the permutation is public, so the true order comes straight back out
    world = sight.world_of("monopoly", s, 0, random.Random(5))
    order = list(range(len(s.chance)))
    random.Random(5).shuffle(order)
    decoded = [None] * len(order)
    for at, came_from in enumerate(order):
        decoded[came_from] = world.chance[at]
    assert tuple(decoded) != s.chance, "the world's Chance order gives away the true one"


def fan_states(limit: int = 3) -> list:
    """Card-game tables where a fan of Point cards lies face down (its order the RNG's secret), from random play."""
    found = []
    for n in range(60):
        game, _ = seated_game("free-parking", ["random", "random", "random"], 500 + n)
        for _ in range(600):
            s = game.state
            if game.rules.status_of(s) == "finished":
                break
            if s.action is not None and len(s.action.fan) >= 2:
                found.append(s)
                break
            move = schedule.server_move(game, START_AT + 10**9)
            if move is None:
                break
            game.play(move.command, move.seat, START_AT + 10**9, move.command_id)
        if len(found) >= limit:
            break
    return found


def test_a_card_game_world_does_not_carry_the_true_fan_order() -> None:
    """HOLE (fixed): ``worlds._dealt`` shuffled the true fan, so the face-down order showed through the world the
    same way (the drawer picking a position could aim at the highest Point card, and re-derive)."""
    states = fan_states()
    assert states, "no fan in 60 random games"
    for s in states:
        other = replace(s, action=replace(s.action, fan=tuple(reversed(s.action.fan))))
        for seat in range(s.n):
            for k in range(10):
                a = sight.world_of("free-parking", s, seat, random.Random(k))
                b = sight.world_of("free-parking", other, seat, random.Random(k))
                assert a.action.fan == b.action.fan, (s.version, seat, k)


def test_a_bot_version_taken_out_of_one_seat_of_a_checkable_table_is_refused():
    """The operator drops one cheating bot's ``bot_version`` (and reseals the chain) to pass its moves off as played
    before bots were checkable: every bot the service seats at a table records one, so the table gives it away."""
    import hashlib

    import msgspec as _msgspec

    from replays.verify import verify as _verify
    from service.events.envelope import canonical, seal
    from service.rules.engine import export_header
    from service.sim.games import new_game, play

    sim = new_game("free-parking", 2, hashlib.sha256(b"drop a version").digest(), "g_drop", ["greedy", "random"],
                   checkable=True)
    for _ in play(sim, ["greedy", "random"], __import__("random").Random(0)):
        pass
    header = export_header(sim.game, with_seed=True)
    assert _verify(header, sim.envelopes).ok
    out, prev = [], "0" * 64
    for env in sim.envelopes:
        public, command = bytes(env.public), bytes(env.command)
        if env.type == "seat_taken" and b'"seat":1' in public:  # the event and the command that seated it
            taken, asked = _msgspec.json.decode(public), _msgspec.json.decode(command)
            del taken["player"]["bot_version"], asked["player"]["bot_version"]
            public, command = canonical(taken), canonical(asked)
        resealed = seal(game_id=env.game_id, seq=env.seq, type=env.type, public=public,
                        secret=bytes(env.secret) if bytes(env.secret) != b"null" else None, seed=sim.game.seed,
                        at=env.at, prev_hash=prev, actor=env.actor, command_id=env.command_id,
                        command=command if command != b"null" else None, sig=env.sig)
        out.append(resealed)
        prev = resealed.hash
    header = _msgspec.structs.replace(header, head=out[-1].hash)
    verdict = _verify(header, out)
    assert not verdict.ok and "without a bot_version" in verdict.divergence.what, verdict.summary()
