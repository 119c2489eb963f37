"""The server's ``close`` in every kind: a game nobody joined or moved in for the idle time ends with no winner, in
one ``game_closed`` event followed by the seed's reveal. It is accepted only from the server, only on a game waiting
or playing, only once ``at >= since + idle_ms``, and only when ``since`` is the time the game last moved on — here its
last event; what does not move a game on (a trade offer, an interrupt) is ``test_progress_close.py``'s."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.events.base import Player
from service.events.common import Close, Create, TakeSeat, Timeout
from service.projections import scores
from service.rules.close import Closed, duration
from service.rules.engine import Game, audit_lines, rules_for
from service.rules.errors import RuleViolation
from service.rules.free_parking.standings import table_standing
from service.sim.games import Simulation, new_game, play, simulate

DAY = 86_400_000
SEED = bytes(range(32))
KINDS = {"free-parking": (3, ["random"] * 3), "solitaire": (1, ["greedy"]), "monopoly": (3, ["random"] * 3)}


def created(kind: str, seated: int = 0) -> Simulation:
    """A game created, and ``seated`` of its seats taken: still waiting."""
    sim = Simulation(Game.new(kind, f"close-{kind}", _config(kind), SEED))
    sim.send(Create(), None)
    for i in range(seated):
        sim.send(TakeSeat(player=Player(name=f"p{i}", player_id=f"g_{i}", guest=True)), None)
    return sim


def _config(kind: str):
    return rules_for(kind).CONFIG(seats=KINDS[kind][0])


def playing(kind: str, moves: int = 6) -> Simulation:
    """A game dealt and a few moves in."""
    seats, bots = KINDS[kind]
    sim = new_game(kind, seats, SEED, f"close-{kind}", bots)
    for _, _ in zip(range(moves), play(sim, bots, random.Random(1)), strict=False):
        pass
    assert sim.game.rules.status_of(sim.game.state) == "playing"
    return sim


def close(game: Game, idle_ms: int = DAY, after: int | None = None, seat: int | None = None, since: int | None = None):
    """Decide a close ``after`` ms past the last event (default: exactly ``idle_ms``) and adopt it."""
    command = Close(idle_ms=idle_ms, since=game.last_at if since is None else since)
    return game.play(command, seat, game.last_at + (idle_ms if after is None else after))


def refused(game: Game, **kw) -> str:
    before = (game.state, game.head)
    with pytest.raises(RuleViolation) as caught:
        close(game, **kw)
    assert (game.state, game.head) == before
    return caught.value.code


def games(kind: str) -> dict[str, Simulation]:
    return {"waiting, no seat taken": created(kind), "waiting, one seat taken": created(kind, 1), "playing": playing(kind)}


@pytest.mark.parametrize("kind", KINDS)
def test_a_game_idle_that_long_is_closed_with_no_winner_and_its_seed_revealed(kind):
    for what, sim in games(kind).items():
        game = sim.game
        envelopes = close(game)
        assert [e.type for e in envelopes] == ["game_closed", "seed_revealed"], what
        assert msgspec.json.decode(envelopes[0].public) == {"type": "game_closed", "reason": "idle", "idle_ms": DAY}
        assert msgspec.json.decode(envelopes[1].public)["seed"] == SEED.hex()
        assert envelopes[0].actor == "server" and envelopes[0].at == envelopes[1].at
        assert game.rules.status_of(game.state) == "finished", what
        assert game.state.winner is None
        for seat in range(game.state.n):
            view = game.view(seat)
            assert view.status == "finished" and view.closed == Closed(reason="idle", idle_ms=DAY)
            assert getattr(view, "winner", None) is None  # a solitaire's view has no winner, only a result
            assert view.legal == [] and game.rules.legal_commands(game.state, seat) == []
        assert audit_lines(game.rules, envelopes)[0].split("  ")[3] == "closed: nobody moved for 24 h"


@pytest.mark.parametrize("kind", KINDS)
def test_a_close_is_refused_before_the_idle_time_has_passed(kind):
    for sim in games(kind).values():
        assert refused(sim.game, after=DAY - 1) == "not_idle"
        assert len(close(sim.game, after=DAY + 5)) == 2  # later than due is fine


@pytest.mark.parametrize("kind", KINDS)
def test_only_the_server_may_close_a_game(kind):
    sim = playing(kind)
    assert refused(sim.game, seat=0) == "server_only"
    assert refused(sim.game, seat=0, after=10 * DAY) == "server_only"


@pytest.mark.parametrize("kind", KINDS)
def test_a_close_must_name_the_last_events_time(kind):
    """Else a log could claim a game idle that was not: the rules read the idle time off the log itself."""
    game = playing(kind).game
    assert refused(game, since=game.last_at - 1) == "stale_close"
    assert refused(game, since=game.last_at - DAY, after=1) == "stale_close"


@pytest.mark.parametrize("kind", KINDS)
def test_an_idle_time_of_nothing_is_refused(kind):
    assert refused(playing(kind).game, idle_ms=0, after=DAY) == "invalid_close"


@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_game_or_one_not_created_is_not_closed(kind):
    seats, bots = KINDS[kind]
    done = simulate(kind, seats, SEED, f"done-{kind}", bots).game
    assert refused(done) == "game_over"
    closed = playing(kind).game
    close(closed)
    assert refused(closed) == "game_over"
    fresh = Game.new(kind, "never", _config(kind), SEED)
    assert refused(fresh, since=0) == "game_not_started"


@pytest.mark.parametrize("kind", KINDS)
def test_after_a_close_nothing_more_happens(kind):
    sim = created(kind, 0)
    close(sim.game)
    with pytest.raises(RuleViolation):
        sim.send(TakeSeat(player=Player(name="late", player_id="g_late", guest=True)), None)
    if kind != "solitaire":
        with pytest.raises(RuleViolation):
            sim.send(Timeout(), None)


@pytest.mark.parametrize("kind", ["free-parking", "monopoly"])
def test_a_close_during_a_wait_leaves_nothing_waiting(kind):
    seats, bots = KINDS[kind]
    sim = new_game(kind, seats, SEED, f"wait-{kind}", bots)
    for _ in play(sim, bots, random.Random(3)):
        if sim.game.state.pending is not None:
            break
    assert sim.game.state.pending is not None
    close(sim.game, idle_ms=1000)  # the wait's deadline has not passed: a close does not care
    assert sim.game.state.pending is None and sim.game.view(None).pending is None


def test_a_closed_solitaire_is_lost_as_a_game_left_for_the_configured_time():
    game = playing("solitaire").game
    close(game)
    view = game.view(0)
    assert (view.result, view.reason, view.hint) == ("lost", "idle", None)


@pytest.mark.parametrize("kind", KINDS)
def test_a_closed_game_folds_to_the_same_state_and_scores_as_finished_without_a_winner(kind):
    sim = playing(kind)
    last_move = sim.game.last_at
    sim.envelopes += close(sim.game)
    folded = Game.new(kind, sim.game.game_id, sim.game.state.config, SEED)
    folded.fold(sim.envelopes)
    assert folded.state == sim.game.state and folded.head == sim.game.head
    model = scores.fold(None, sim.envelopes)
    assert (model.status, model.winner, model.finished_version) == ("finished", None, sim.envelopes[-2].seq)
    if kind == "solitaire":
        assert (model.solitaire.result, model.solitaire.reason) == ("lost", "idle")
        first_move = next(e.at for e in sim.envelopes if e.type == "card_moved")
        assert model.solitaire.time_ms == last_move - first_move  # from the first move to the last, not to the close


def test_a_closed_tournament_table_is_finished_without_a_winner():
    sim = new_game("free-parking", 3, SEED, "table", ["random"] * 3, {"mode": "tournament"})
    sim.envelopes += close(sim.game)
    events = [sim.game.codec.join(e.public) for e in sim.envelopes]
    standing = table_standing("table", sim.game.state.config, events)
    assert standing.finished and standing.winner is None


def test_durations_are_said_in_the_largest_exact_unit():
    assert [duration(ms) for ms in (DAY, 90 * 60_000, 5000, 1500, 300)] == ["24 h", "90 min", "5 s", "1500 ms", "300 ms"]
