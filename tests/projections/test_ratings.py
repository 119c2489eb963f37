"""The ratings read model (RULES.md §4) on every store: games projected in an order other than the one they finished
in — on several partitions, each game's events in chunks — give, at every step, exactly the offline fold of the
rated games so far (``service.rules.ratings.fold``, what ``python -m replays ratings`` runs), and a rebuild the same."""

from __future__ import annotations

import msgspec

from service.projections import Projector, rebuild
from service.projections import ratings as ratings_model
from service.rules.ratings import fold, rated_game
from service.store.keys import partition
from tests.projections.helpers import Feeder
from tests.ratings.games import rated_games

KIND = "free-parking"


def table(ratings) -> list:
    return msgspec.to_builtins(ratings.table(KIND))


async def test_ratings_equal_the_offline_fold_whatever_order_games_arrive_in(store):
    games = rated_games(12)
    arrival = sorted(games, key=lambda g: g.game_id)  # ids, not finishing times: several arrive after a later finisher
    finished = [rated_game(g.envelopes) for g in arrival]
    assert all(finished)
    assert len({partition(g.game_id) for g in arrival}) >= 2
    late = [i for i in range(1, len(finished)) if finished[i].order < max(f.order for f in finished[:i])]
    assert late, "the games must arrive out of the order they finished in"
    feeder = Feeder(store, arrival, chunk=100)  # big appends: what is tested here is the order games arrive in
    projector = Projector(store, "ratings-test")
    for i, game in enumerate(arrival):
        await feeder.append_all(game)
        await projector.catch_up()
        assert table(await ratings_model.read_kind(store, KIND)) == table(fold(finished[: i + 1])), game.game_id
    assert ratings_model.refolds(store, KIND) >= 1
    want = table(fold(finished))
    assert want and any(r["rated_id"].startswith("bot:") for r in want)
    await rebuild(store)
    assert table(await ratings_model.read_kind(store, KIND)) == want


async def test_a_game_not_rated_adds_nothing(store):
    from tests.ratings.games import play_one

    legacy = play_one(1, seeding="legacy")
    assert rated_game(legacy.envelopes) is None
    await Feeder(store, [legacy]).append_all(legacy)
    await Projector(store, "ratings-test").catch_up()
    assert await ratings_model.rated_games(store, KIND) == []


async def test_monopoly_ratings_equal_the_offline_fold(store):
    import random

    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import Game, rules_for
    from service.sim.games import START_AT, Simulation, play

    games = []
    for i in range(3):
        n = 2 + i % 2
        config = rules_for("monopoly").CONFIG(seats=n, max_rounds=6)
        sim = Simulation(Game.new("monopoly", f"mono-{i}", config, bytes([i + 1]) * 32), at=START_AT + (3 - i) * 10**8)
        sim.send(Create(seeding="combined"), None)  # above: the later the id, the earlier it finished
        for seat in range(n):
            who = f"m{(i + seat) % 3}"
            player = Player(name=f"Player {who}", player_id=who)
            sim.send(TakeSeat(player=player, client_seed=bytes([seat]).hex() * 32), None)
        for _ in play(sim, ["strategic"] * n, random.Random(i)):
            pass
        games.append(sim)
    rated = [rated_game(sim.envelopes) for sim in games]
    assert all(rated) and rated[0].order > rated[-1].order

    class Played:  # what the feeder reads of a game
        def __init__(self, sim):
            self.game_id, self.envelopes = sim.game.game_id, sim.envelopes

    played = [Played(sim) for sim in games]
    feeder = Feeder(store, played)
    for game in played:
        await feeder.append_all(game)
        await Projector(store, "ratings-test").catch_up()
    got = msgspec.to_builtins((await ratings_model.read_kind(store, "monopoly")).table("monopoly"))
    assert got == msgspec.to_builtins(fold(rated).table("monopoly")) and got
