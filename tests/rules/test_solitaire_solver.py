"""The solitaire solver, its hint and the bots: exact lines on hand-built boards, budgets that reproduce, and
nothing illegal ever proposed or played."""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest

from service.bots import BOTS
from service.bots.solitaire import GreedyBot, SolverBot, greedy_step, worth
from service.events.solitaire import Resign, Undo
from service.rules.solitaire import legal_commands, run
from service.rules.solitaire.layout import (
    Layout,
    apply_move,
    deal,
    is_shuttle,
    legal_moves,
    parse,
    played,
    redeal,
    runs,
    well_formed,
    won,
)
from service.rules.solitaire.solver import REDEAL, Step, best_line, best_move, ordered_moves, solve, unseating_moves
from service.sim.games import new_game, simulate

replace = msgspec.structs.replace

CLUBS = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC .."
DIAMONDS = "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD .."
HEARTS = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH .."
SPADES = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS .."


def board(*rows: str) -> Layout:
    layout = parse("\n".join(rows))
    assert well_formed(layout)
    return layout


def seed_of(i: int) -> bytes:
    return hashlib.sha256(b"solver test %d" % i).digest()


def replay(layout: Layout, line: list[Step], seed: bytes | None, redeals_used: int = 0) -> Layout:
    """Play ``line`` from ``layout``, checking each move against ``legal_moves``; the layout it leads to."""
    for step in line:
        if step == REDEAL:
            assert seed is not None
            redeals_used += 1
            layout = redeal(layout, seed, redeals_used)
        else:
            assert step in legal_moves(layout), step
            layout = apply_move(layout, step)
    return layout


# --- solve -----------------------------------------------------------------------------------------


def test_a_board_one_move_from_won_is_solved_with_that_move():
    layout = board(CLUBS, DIAMONDS, HEARTS, "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS .. KS")
    solution = solve(layout, seed=None, redeals_used=2, budget=10)
    assert solution.won is True
    assert solution.moves == [("KS", 3, 12)]
    assert solution.nodes == 1


def test_a_won_board_needs_no_line():
    assert solve(board(CLUBS, DIAMONDS, HEARTS, SPADES), seed=None, redeals_used=0, budget=1).moves == []


STUCK = ("2S 3S 4S 5S 6S 7S 8S 9S TS JS KS .. QS",)
"""The king blocks the queen: nothing in this deal seats another card, a redeal does."""


@pytest.mark.parametrize(
    "seed, line",
    [
        (bytes(32), [REDEAL, ("QS", 3, 11)]),
        (bytes([3]) * 32, [REDEAL, ("QS", 3, 11), ("KS", 3, 12)]),
    ],
)
def test_a_board_one_redeal_from_won_is_solved_through_the_redeal_the_seed_deals(seed, line):
    layout = board(CLUBS, DIAMONDS, HEARTS, *STUCK)
    solution = solve(layout, seed=seed, redeals_used=0, budget=100)
    assert solution.won is True
    assert solution.moves == line
    assert won(replay(layout, solution.moves, seed))


def test_without_the_seed_or_a_redeal_left_the_stuck_board_is_lost():
    layout = board(CLUBS, DIAMONDS, HEARTS, *STUCK)
    assert solve(layout, seed=None, redeals_used=0, budget=100).won is False
    assert solve(layout, seed=bytes(32), redeals_used=2, budget=100).won is False


def test_a_tiny_budget_is_exhausted_the_same_way_every_time():
    layout = deal(seed_of(1))
    first = solve(layout, seed=seed_of(1), redeals_used=0, budget=5)
    again = solve(layout, seed=seed_of(1), redeals_used=0, budget=5)
    assert first.won is None and first.moves == []
    assert first == again
    assert 0 < first.nodes <= 5


def test_the_same_search_gives_the_same_line_and_node_count():
    layout = deal(seed_of(2))
    first = solve(layout, seed=seed_of(2), redeals_used=0, budget=3_000)
    assert first == solve(layout, seed=seed_of(2), redeals_used=0, budget=3_000)


@pytest.mark.parametrize("i", range(12))
def test_every_line_found_is_legal_and_wins(i):
    seed = seed_of(i)
    layout = deal(seed)
    solution = solve(layout, seed=seed, redeals_used=0, budget=2_000)
    assert solution.nodes <= 2_000
    if solution.won:
        assert solution.moves.count(REDEAL) <= 2
        assert won(replay(layout, solution.moves, seed))
    else:
        assert solution.moves == []


@pytest.mark.parametrize("i", range(6))
def test_the_moves_searched_are_the_legal_ones_that_unseat_nothing(i):
    layout = deal(seed_of(i))
    for _ in range(30):
        options = ordered_moves(layout)
        searched = {o.move for o in options}
        assert searched | set(unseating_moves(layout)) == set(legal_moves(layout))
        for o in options:
            assert o.layout == apply_move(layout, o.move)
            assert o.lengths == runs(o.layout)
            assert sum(o.lengths) == sum(runs(layout)) + o.seated_gain
        if not options:
            break
        layout = options[-1].layout


# --- the line before the next redeal, and the hint ---------------------------------------------------


def test_best_line_never_looks_past_the_redeal():
    layout = deal(seed_of(3))
    line = best_line(layout, budget=500)
    assert line.nodes <= 500
    assert sum(runs(replay(layout, list(line.moves), None))) == line.seated >= sum(runs(layout))


GROW_OR_NOT = board(
    CLUBS,
    "2D 3D 4D 5D 6D 7D 8D JD .. KD 9D TD QD",
    HEARTS,
    "2S 3S .. 5S 6S 7S 8S 9S TS JS QS KS 4S",
)
"""Two moves: the queen of diamonds beside its jack (listed first, seats nothing), or the four of spades home."""


def test_the_hint_prefers_the_move_that_grows_a_run():
    assert legal_moves(GROW_OR_NOT) == [("QD", 1, 9), ("4S", 3, 3)]
    assert best_move(GROW_OR_NOT, budget=50) == ("4S", 3, 3)
    assert greedy_step(GROW_OR_NOT, 2) == ("4S", 3, 3)


BEFORE_SHUTTLE = board(CLUBS, "2D 3D 4D 5D 6D 7D 8D KD .. JD 9D TD QD", HEARTS, SPADES)
"""One move: the ten of diamonds before its jack. After it the ten fits back beside the nine too."""


def test_the_hint_never_sends_the_card_just_moved_straight_back():
    move = ("TD", 1, 9)
    previous = played(BEFORE_SHUTTLE, move)
    layout = apply_move(BEFORE_SHUTTLE, move)
    assert legal_moves(layout) == [("TD", 1, 12), ("JD", 1, 12)]
    assert is_shuttle(layout, ("TD", 1, 12), previous)
    for budget in (1, 10, 1_000):
        assert best_move(layout, budget=budget, previous=previous) == ("JD", 1, 12)


@pytest.mark.parametrize("i", range(20))
def test_the_hint_is_legal_and_no_shuttle_on_dealt_boards(i):
    layout, previous = deal(seed_of(i)), None
    for _ in range(15):
        move = best_move(layout, budget=200, previous=previous)
        if move is None:
            assert all(is_shuttle(layout, m, previous) for m in legal_moves(layout))
            return
        assert move in legal_moves(layout)
        assert not is_shuttle(layout, move, previous)
        grows = [m for m in legal_moves(layout) if sum(runs(apply_move(layout, m))) > sum(runs(layout))]
        if any(not is_shuttle(layout, m, previous) for m in grows):
            assert move in grows
        previous, layout = played(layout, move), apply_move(layout, move)


# --- bots ---------------------------------------------------------------------------------------------


def test_the_solitaire_bots_are_registered():
    assert BOTS["solitaire"] == {"greedy": GreedyBot, "solver": SolverBot}


def test_the_greedy_bot_plays_200_deals_to_the_end_and_wins_about_a_third():
    """Every command goes through the decider, which refuses an illegal one; the bot picks from ``legal``. The
    one-move-ahead scoring wins 75 of these 200 (the bot before it: 17); the floor leaves room for a retune."""
    ends: dict[str, int] = {}
    for i in range(200):
        sim = simulate("solitaire", 1, seed_of(i), f"greedy-{i}", ["greedy"])
        state = sim.game.state
        assert state.phase in ("won", "lost") and not state.stuck
        end = state.lost_reason or state.phase
        ends[end] = ends.get(end, 0) + 1
    assert set(ends) <= {"won", "resigned"}  # rules version 2: nothing is lost for want of moves, the bot resigns
    assert ends.get("won", 0) >= 60, ends


def test_the_greedy_bot_plays_a_deal_the_same_way_every_time():
    one, two = (simulate("solitaire", 1, seed_of(7), "greedy-again", ["greedy"]) for _ in range(2))
    assert [e.hash for e in one.envelopes] == [e.hash for e in two.envelopes]


RUN_BLOCKED = board(
    "2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..",
    "2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..",
    "2H 4S 6C 8D TH QS .. 5D 7H 9S JC KD 3C",
    "2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..",
)
"""One live gap, taking the king of spades (beside its queen) or the four of diamonds (before its five): each gains a
bond, but only the four leaves a gap right after a run (the 2C's, which then takes the 3C)."""


def test_the_greedy_bot_opens_a_live_gap_right_after_a_run():
    assert legal_moves(RUN_BLOCKED) == [("KS", 2, 7), ("4D", 2, 7)]
    assert greedy_step(RUN_BLOCKED, 2) == ("4D", 2, 7)
    assert worth(apply_move(RUN_BLOCKED, ("4D", 2, 7))) > worth(apply_move(RUN_BLOCKED, ("KS", 2, 7)))


DEAD_OR_LIVE = board(
    "2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS 7H",
    "2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..",
    "2H 4S 6C 8D TH QS 3C 5D .. 9S JC KD ..",
    "2S 4C .. 8H TS QC 3D 5H 7S 9C JD KH 6D",
)
"""Four moves, each gaining a bond: the six of diamonds and the seven of hearts would leave a slot right of a king,
dead; the eight of spades and the five of clubs leave live gaps."""


def test_the_greedy_bot_never_opens_a_dead_gap_where_a_live_one_is_open_to_it():
    assert set(legal_moves(DEAD_OR_LIVE)) == {("6D", 2, 9), ("8S", 2, 9), ("5C", 3, 3), ("7H", 3, 3)}
    assert greedy_step(DEAD_OR_LIVE, 2) in {("8S", 2, 9), ("5C", 3, 3)}


ONE_MOVE_TO_STUCK = board(
    "2C 4D 6H 8S TC QD 3H 5S 7C 9D KS JH ..",
    "2D 4H 6S 8C TD 3S 5C 7D 9H JS KC .. ..",
    "2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..",
    "2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH QH",
)
"""One move (the queen of hearts beside its jack), after which nothing fits anywhere."""


def test_both_solitaire_bots_resign_a_stuck_game():
    """Rules version 2: with no move and no redeal left only undo and resign are legal; neither bot lets it hang."""
    game = new_game("solitaire", 1, seed_of(0), "stuck", ["greedy"]).game
    s = replace(game.state, layout=ONE_MOVE_TO_STUCK, redeals_used=2)
    stuck = run(s, legal_commands(s, 0)[0], 0, game.last_at)[1]
    assert stuck.stuck and legal_commands(stuck, 0) == [Undo(), Resign()]
    for player in (GreedyBot(), SolverBot()):
        assert player.choose(stuck, 0, legal_commands(stuck, 0), random.Random(0)) == Resign()


@pytest.mark.parametrize("i", range(4))
def test_the_solver_bot_plays_a_deal_to_the_end(i):
    sim = simulate("solitaire", 1, seed_of(i), f"solver-{i}", ["solver"])
    assert sim.game.state.phase in ("won", "lost")


def test_the_hint_avoids_a_layout_the_game_has_already_been_through():
    layout = apply_move(BEFORE_SHUTTLE, ("TD", 1, 9))
    assert best_move(layout, budget=10, seen={BEFORE_SHUTTLE}) == ("JD", 1, 12)
    assert best_move(layout, budget=10, seen={apply_move(layout, ("JD", 1, 12))}) == ("TD", 1, 12)


@pytest.mark.parametrize("i", range(3))
def test_a_solver_bot_made_afresh_for_every_move_still_ends_the_game(i):
    """A restarted worker (or another one) asks a new bot for each move: with no memory of its line, it must
    not shuttle between boards of equal worth for ever (``seated`` must grow, and no step leads back)."""
    game = new_game("solitaire", 1, seed_of(i), f"afresh-{i}", ["solver"]).game  # created, seated, dealt
    for at in range(3, 3_000):
        s = game.state
        if s.phase != "playing":
            break
        game.play(SolverBot().choose(s, 0, legal_commands(s, 0), random.Random(0)), 0, at)
    assert game.state.phase in ("won", "lost")
