"""The play-now queue's pure matching (service/rules/matching.py): given who waits, their ratings and the time, the
tables to make."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.bots import BOTS, STRENGTH
from service.rules.matching import Waiting, closest_bot, gap, match

FILL = 20_000


def w(pid: str, rating: float, since: int = 0, seats: int = 4, group: str = "free-parking/4/{}") -> Waiting:
    return Waiting(player_id=pid, group=group, seats=seats, rating=rating, since=since)


def test_four_close_players_make_a_table_at_once_and_far_ones_wait():
    waiting = [w("a", 0), w("b", 1), w("c", 2), w("d", 1.5), w("far", 20)]
    tables = match(waiting, now=0, fill_ms=FILL)
    assert [(t.players, t.bots) for t in tables] == [(("a", "b", "c", "d"), 0)]


def test_two_rating_bands_sit_apart_when_the_pool_allows_it():
    low = [w(f"l{i}", i * 0.5, since=i) for i in range(4)]
    high = [w(f"h{i}", 20 + i * 0.5, since=i) for i in range(4)]
    tables = match(low + high, now=10, fill_ms=FILL)
    assert sorted(t.players for t in tables) == [("h0", "h1", "h2", "h3"), ("l0", "l1", "l2", "l3")]


def test_the_gap_widens_with_the_wait_until_far_players_meet():
    waiting = [w("a", 0), w("b", 10), w("c", 10), w("d", 10)]
    assert match(waiting, now=1_000, fill_ms=FILL) == []  # allowed gap 4: b, c, d are too far from a
    assert gap(8_000) >= 10
    tables = match(waiting, now=8_000, fill_ms=FILL)
    assert [t.players for t in tables] == [("a", "b", "c", "d")]


def test_after_the_fill_wait_bots_take_the_free_seats():
    waiting = [w("a", 0), w("b", 1, since=5)]
    assert match(waiting, now=FILL - 1, fill_ms=FILL) == []
    tables = match(waiting, now=FILL, fill_ms=FILL)
    assert [(t.players, t.bots) for t in tables] == [(("a", "b"), 2)]


def test_groups_never_mix():
    waiting = [w("a", 0), w("b", 0), w("c", 0, group="monopoly/4/{}"), w("d", 0, group="free-parking/3/{}", seats=3)]
    assert match(waiting, now=0, fill_ms=FILL) == []
    tables = match(waiting, now=FILL, fill_ms=FILL)
    assert sorted((t.group, t.players, t.bots) for t in tables) == [
        ("free-parking/3/{}", ("d",), 2), ("free-parking/4/{}", ("a", "b"), 2), ("monopoly/4/{}", ("c",), 3)]


def test_a_player_skipped_for_now_may_join_a_later_table():
    # c and d are too far from a (gap about 3): a waits; b's table (a, c, d all within b's gap) takes a along
    waiting = [w("a", 0, since=0), w("b", 3, since=1), w("c", 4, since=2), w("d", 5, since=3)]
    tables = match(waiting, now=3, fill_ms=FILL)
    assert [t.players for t in tables] == [("a", "b", "c", "d")]


def test_the_closest_bot_kind():
    assert closest_bot({"random": -2.0, "greedy": 8.0, "expert": 20.0}, 9.0) == "greedy"
    assert closest_bot({"random": 0.0, "greedy": 0.0}, 0.0) == "greedy"  # no order given: the name


def test_a_newcomer_meets_the_weakest_of_bots_as_close_and_every_bot_kind_is_ranked():
    unrated = {b: 0.0 for b in BOTS["free-parking"]}
    assert closest_bot(unrated, 0.0, STRENGTH["free-parking"]) == "random"  # not "expert", first by name
    assert closest_bot({"random": -9.0, "greedy": 0.0, "expert": 0.0}, 0.0, STRENGTH["free-parking"]) == "greedy"
    assert {kind: set(order) for kind, order in STRENGTH.items()} == {kind: set(bots) for kind, bots in BOTS.items()}


entries = st.lists(st.tuples(st.floats(-10, 40), st.integers(0, 30_000), st.sampled_from([2, 3, 4])), max_size=40)


@settings(max_examples=200, deadline=None)
@given(entries, st.integers(0, 60_000))
def test_every_player_is_seated_at_most_once_tables_are_full_and_the_overdue_are_seated(rows, now):
    waiting = [w(f"p{i}", r, since, seats=n, group=f"g{n}") for i, (r, since, n) in enumerate(rows)]
    tables = match(waiting, now, FILL)
    seated = [p for t in tables for p in t.players]
    assert len(seated) == len(set(seated))
    by_id = {x.player_id: x for x in waiting}
    for t in tables:
        assert len(t.players) + t.bots == by_id[t.players[0]].seats
        assert {by_id[p].group for p in t.players} == {t.group}
        if t.bots:  # bots only for a player who waited out the fill
            assert now - by_id[t.players[0]].since >= FILL
        else:  # a table of people only: all within the gap allowed around one of them, the longest wait's at most
            ratings = [by_id[p].rating for p in t.players]
            assert max(ratings) - min(ratings) <= 2 * gap(now - by_id[t.players[0]].since)
    overdue = {x.player_id for x in waiting if now - x.since >= FILL}
    assert overdue <= set(seated)
