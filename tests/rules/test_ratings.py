"""The pure ratings module (RULES.md §4): which games are rated, each one's order of finish, and the fold."""

from __future__ import annotations

import random

import msgspec
import pytest
from openskill.models import PlackettLuce

from service.events.base import Player
from service.events.common import Create, Resign, TakeSeat
from service.rules.engine import Game, rules_for
from service.rules.ratings import Place, RatedGame, Ratings, fold, rated_game
from service.sim.games import Simulation, new_game, play


def _played(kind: str, seats: int, i: int, bots: str = "greedy", seeding: str = "combined", **options):
    sim = new_game(kind, seats, bytes([i]) * 32, f"g{i}", [bots] * seats, options=options, seeding=seeding)
    for _ in play(sim, [bots] * seats, random.Random(i), turn_timeouts=0.02 if "turn_seconds" in options else 0.0):
        pass
    return sim


def test_a_forfeited_seat_finishes_after_every_seat_still_in_whatever_its_points():
    sim = _played("free-parking", 3, 0, turn_seconds=30, forfeit_after=1)
    s = sim.game.state
    assert s.seats[0].forfeited and s.seats[0].score > s.seats[1].score  # out with 50 points, the other in with 0
    game = rated_game(sim.envelopes)
    assert [p.rank for p in game.places] == [3, 2, 1]
    assert game.finished_at == sim.envelopes[-1].at and game.version == len(sim.envelopes)


def test_the_card_game_ranks_the_winner_then_points():
    sim = _played("free-parking", 4, 3)
    s = sim.game.state
    game = rated_game(sim.envelopes)
    assert game.places[s.winner].rank == 1
    others = sorted((p for p in game.places if p.seat != s.winner), key=lambda p: p.rank)
    points = [s.seats[p.seat].score for p in others]
    assert points == sorted(points, reverse=True)
    for a, b in zip(others, others[1:]):
        assert (a.rank == b.rank) == (s.seats[a.seat].score == s.seats[b.seat].score)


def test_monopoly_with_max_rounds_ranks_those_still_in_by_worth():
    sim = _played("monopoly", 3, 1, bots="strategic", max_rounds=8)
    ended = next(e for e in sim.envelopes if e.type == "game_ended")
    game = rated_game(sim.envelopes)
    assert game is not None and game.kind == "monopoly"
    state = sim.game.state
    still = [p for p in game.places if not state.seats[p.seat].bankrupt]
    worth = sim.game.rules.CODEC.join(ended.public).worth
    for a in still:
        for b in still:
            assert (a.rank < b.rank) == (worth[a.seat] > worth[b.seat])
    assert all(p.rank > max(q.rank for q in still) for p in game.places if state.seats[p.seat].bankrupt)


@pytest.mark.parametrize("seeding", ["legacy", "fixed"])
def test_a_seed_not_drawn_is_not_rated(seeding):
    assert rated_game(_played("free-parking", 2, 2, seeding=seeding).envelopes) is None


def test_a_solitaire_and_an_unfinished_game_are_not_rated():
    assert rated_game(_played("solitaire", 1, 2, bots="greedy", seeding="fixed").envelopes) is None
    sim = _played("free-parking", 2, 2)
    assert rated_game(sim.envelopes[: len(sim.envelopes) // 2]) is None


def _game(game_id: str, at: int, *places: tuple[str | None, int]) -> RatedGame:
    return RatedGame(game_id=game_id, kind="free-parking", finished_at=at, version=10,
                     places=tuple(Place(seat=i, rank=rank, rated_id=who, name=who or "guest")
                                  for i, (who, rank) in enumerate(places)))


def test_one_game_is_openskill_plackett_luce_with_its_defaults():
    ratings = fold([_game("a", 1, ("ann", 2), ("bob", 1), (None, 3))])
    model = PlackettLuce()
    [[ann], [bob], _] = model.rate([[model.rating()], [model.rating()], [model.rating()]], ranks=[2, 1, 3])
    got = {r.rated_id: (r.mu, r.sigma, r.games) for r in ratings.table("free-parking")}
    assert got == {"ann": (ann.mu, ann.sigma, 1), "bob": (bob.mu, bob.sigma, 1)}  # the guest has no rating
    assert ratings.table("free-parking")[0].shown == bob.mu - 3 * bob.sigma


def test_a_bot_kind_holding_several_seats_plays_as_it_stands_and_keeps_its_rating():
    first = _game("a", 1, ("bot:greedy", 1), ("ann", 2))
    both = _game("b", 2, ("bot:greedy", 1), ("ann", 2), ("bot:greedy", 3))
    ratings = fold([first, both])
    after_first = fold([first]).kinds["free-parking"]
    table = ratings.kinds["free-parking"]
    assert table["bot:greedy"] == after_first["bot:greedy"]
    assert table["ann"].games == 2 and table["ann"].mu != after_first["ann"].mu


def test_the_fold_follows_the_order_games_finished_not_the_order_given():
    games = [_game(f"g{i}", at, ("ann", 1 + i % 2), ("bob", 2 - i % 2)) for i, at in enumerate([5, 1, 3, 3])]
    assert fold(games).ranked("free-parking") == fold(reversed(games)).ranked("free-parking")
    in_order = Ratings()
    for g in sorted(games, key=lambda g: (g.finished_at, g.game_id)):
        in_order.add(g)
    assert in_order.ranked("free-parking") == fold(games).ranked("free-parking")
    with pytest.raises(ValueError):
        in_order.add(_game("g0", 0, ("ann", 1), ("bob", 2)))  # finished before the last one folded: fold again


def test_a_game_closed_idle_is_not_rated():
    from service.events.common import Close

    sim = new_game("free-parking", 2, bytes([4]) * 32, "g-idle", ["greedy"] * 2, seeding="combined")
    for _, _ in zip(range(6), play(sim, ["greedy"] * 2, random.Random(4)), strict=False):
        pass
    day = 86_400_000
    sim.envelopes += sim.game.play(Close(idle_ms=day, since=sim.game.last_at), None, sim.game.last_at + day)
    assert any(e.type == "game_closed" for e in sim.envelopes)
    assert rated_game(sim.envelopes) is None


def test_a_tournament_game_ranks_by_the_cumulative_total():
    sim = _played("free-parking", 3, 5, mode="tournament")
    s = sim.game.state
    game = rated_game(sim.envelopes)
    assert any(e.type == "round_ended" for e in sim.envelopes)
    assert game.places[s.winner].rank == 1
    for a in game.places:
        for b in game.places:
            if s.winner not in (a.seat, b.seat):
                assert (a.rank < b.rank) == (s.seats[a.seat].total > s.seats[b.seat].total)


def test_a_monopoly_seat_that_resigned_finishes_after_every_seat_bankrupt_in_play():
    """RULES.md §4: a resigned seat after every seat still in; in Monopoly a resignation is a bankruptcy to the bank,
    yet it ranks after the players who went bankrupt in play, even one who went out before it."""
    for i in range(40):
        sim = new_game("monopoly", 4, bytes([i]) * 32, f"g_resign{i}", ["random"] * 4, options={"max_rounds": 300},
                       seeding="combined")
        steps = play(sim, ["random"] * 4, random.Random(i))
        broke = next((st for _ in steps for st in sim.game.state.seats if st.bankrupt), None)
        if broke is not None and sum(not st.bankrupt for st in sim.game.state.seats) >= 3:
            break
    else:
        pytest.fail("no game of 40 had a bankruptcy in play with three seats still in")
    bankrupt = next(seat for seat, st in enumerate(sim.game.state.seats) if st.bankrupt)
    quitter = next(seat for seat, st in enumerate(sim.game.state.seats) if not st.bankrupt)
    sim.send(Resign(), quitter)  # out after the bankrupt seat, by its own hand
    for _ in play(sim, ["random"] * 4, random.Random(i)):
        pass
    assert sim.game.state.seats[quitter].resigned
    game = rated_game(sim.envelopes)
    assert game is not None
    assert game.places[quitter].rank > game.places[bankrupt].rank


def test_each_row_says_whether_its_player_is_a_bot():
    """A bot kind's row is a bot's (also from a place stored before bot accounts, which kept no account); a registered
    player's row says what they registered as, at their last rated game; the seats' places keep a bot account only."""
    robo = Place(seat=1, rank=1, rated_id="p_robo", name="Robo", account="bot")
    game = RatedGame(game_id="a", kind="free-parking", finished_at=1, version=9, places=(
        Place(seat=0, rank=2, rated_id="ann", name="Ann"), robo, Place(seat=2, rank=3, rated_id="bot:greedy", name="greedy bot")))
    rows = {r.player_id: r.account for r in fold([game]).ranked("free-parking")}
    assert rows == {"ann": "person", "p_robo": "bot", "bot:greedy": "bot"}
    assert msgspec.json.encode(game.places[0]) == b'{"seat":0,"rank":2,"rated_id":"ann","name":"Ann"}'
    assert msgspec.json.decode(msgspec.json.encode(robo), type=Place) == robo



def test_a_bot_accounts_seat_is_rated_by_its_player_id_and_kept_as_a_bot():
    rules = rules_for("free-parking")
    sim = Simulation(Game.new("free-parking", "g_robo", rules.CONFIG(seats=2), bytes([7]) * 32))
    sim.send(Create(seeding="combined"), None)
    for player in (Player(name="Robo", player_id="p_robo", account="bot"), Player(name="Greedy", player_id="b_1", bot="greedy")):
        sim.send(TakeSeat(player=player), None)
    for _ in play(sim, ["greedy", "greedy"], random.Random(7)):  # the account's seat played by a greedy bot
        pass
    places = rated_game(sim.envelopes).places
    assert [(p.rated_id, p.account) for p in places] == [("p_robo", "bot"), ("bot:greedy", None)]
    assert {r.player_id: r.account for r in fold([rated_game(sim.envelopes)]).ranked("free-parking")} == {
        "p_robo": "bot", "bot:greedy": "bot"}
