"""A tournament over rounds' state (service/store/rounds.py) on every store: each field written once — the first
write stands — and entering only while entry is open, so nobody enters a tournament that has started."""

from __future__ import annotations

import asyncio

from service.store.embedded import EmbeddedStore


async def test_an_entrant_enters_once_and_not_after_entry_closed(store):
    assert await store.tournament_enter("t_cup", "p1", b"first") == "entered"
    assert await store.tournament_enter("t_cup", "p1", b"second") == "already"
    await store.tournament_close("t_cup")
    assert await store.tournament_enter("t_cup", "p2", b"late") == "closed"
    assert await store.tournament_state("t_cup") == {"e:p1": b"first", "closed": b"1"}


async def test_entry_is_full_at_the_most_entrants_and_racing_entries_never_pass_it(store):
    """Open entry is anyone's: without a most, one person's registered players made a tournament that every read of
    it, anyone's to repeat, walked table by table."""
    entered = await asyncio.gather(*(store.tournament_enter("t_cup", f"p{i}", b"e", most=3) for i in range(8)))
    assert sorted(entered) == ["entered"] * 3 + ["full"] * 5
    assert await store.tournament_enter("t_cup", "p9", b"e", most=3) == "full"
    first = next(f"p{i}" for i, outcome in enumerate(entered) if outcome == "entered")
    assert await store.tournament_enter("t_cup", first, b"e", most=3) == "already"
    assert len(await store.tournament_state("t_cup")) == 3


async def test_each_field_is_written_once_and_racing_writers_read_the_one_that_stands(store):
    written = await asyncio.gather(*(store.tournament_note("t_cup", "draw:1", b"draw %d" % i) for i in range(5)))
    assert len(set(written)) == 1 and (await store.tournament_state("t_cup"))["draw:1"] == written[0]


async def test_the_embedded_tournament_state_survives_a_restart(tmp_path):
    store = await EmbeddedStore(tmp_path / "data").open()
    await store.tournament_enter("t_cup", "p1", b"e1")
    assert await store.tournament_enter("t_cup", "p1", b"again") == "already"  # not journalled: the replay takes
    await store.tournament_close("t_cup")
    await store.tournament_note("t_cup", "started", b"seed")
    await store.close()
    again = await EmbeddedStore(tmp_path / "data").open()
    try:
        assert await again.tournament_state("t_cup") == {"e:p1": b"e1", "closed": b"1", "started": b"seed"}
        assert await again.tournament_enter("t_cup", "p2", b"e2") == "closed"
    finally:
        await again.close()
