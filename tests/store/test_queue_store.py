"""The play-now queue's writes (service/store/queue.py) on every store: one entry a player, a claim that takes a
table's players all or none — so two matchers claiming the same player seat them once — and, on the embedded store,
a queue that a restart reloads as it was."""

from __future__ import annotations

import asyncio

import msgspec

from service.store.embedded import EmbeddedStore
from tests.store.test_store_contract import TEMPLATE, batches, request


async def test_a_player_waits_once_and_leaves(store):
    assert await store.queue_join("p1", b"entry-1")
    assert not await store.queue_join("p1", b"entry-2")  # one queue at a time: the first entry stays
    assert await store.queue_of("p1") == (b"entry-1", None)
    assert await store.queue_leave("p1") and not await store.queue_leave("p1")
    assert await store.queue_of("p1") == (None, None) and await store.queue_waiting() == {}


async def test_a_claim_takes_every_player_or_none_and_two_claims_seat_a_player_once(store):
    for p in ("a", "b", "c"):
        assert await store.queue_join(p, f"e-{p}".encode())
    stale = [("a", b"e-a", b"s1"), ("b", b"another entry", b"s1")]
    assert not await store.queue_claim(stale)  # b queued with another entry: nothing taken, a still waits
    assert await store.queue_of("a") == (b"e-a", None)
    one = [("a", b"e-a", b"table-1"), ("b", b"e-b", b"table-1")]
    two = [("b", b"e-b", b"table-2"), ("c", b"e-c", b"table-2")]
    won = await asyncio.gather(store.queue_claim(one), store.queue_claim(two))
    assert sorted(won) == [False, True]
    winner = "table-1" if won[0] else "table-2"
    assert (await store.queue_of("b")) == (None, winner.encode())
    assert set(await store.queue_waiting()) == ({"c"} if won[0] else {"a"})
    assert not await store.queue_settle("b", b"not what is there", b"seated")
    assert await store.queue_settle("b", winner.encode(), b"seated") and await store.queue_of("b") == (None, b"seated")
    assert await store.queue_join("b", b"again") and await store.queue_of("b") == (b"again", None)  # a new queueing


async def test_a_join_takes_only_on_the_status_its_caller_judged(store):
    """``POST /queue`` judges the player's status (refused while a table is being made), then joins: a claim that
    came in between (another request of theirs queued, and a matcher claimed it) refuses the join."""
    assert await store.queue_join("p1", b"e-1", b"")
    assert await store.queue_claim([("p1", b"e-1", b"claimed")])
    assert not await store.queue_join("p1", b"e-2", b"")  # judged on no status: the claim came since
    assert await store.queue_of("p1") == (None, b"claimed")
    assert await store.queue_settle("p1", b"claimed", b"seated")
    assert await store.queue_join("p1", b"e-3", b"seated") and await store.queue_of("p1") == (b"e-3", None)


async def test_a_claim_settled_as_lost_seats_nobody_after_and_one_that_seated_stands(store):
    """A matcher's worker that stalls between its claim and a seat, and wakes after ``GET /queue`` settled the claim
    as lost: the fence in the game's slot refuses its seat's append, so the player (queued again meanwhile) is never
    seated twice. A claim whose seat was taken before the fence is not fenced: the player sits there."""
    b = batches(TEMPLATE)
    game = "g_queue_fence"
    seats = store.keys.queue_seats(game)
    await store.append(request(game, b[0]))
    taken = await store.append(msgspec.structs.replace(request(game, b[1]), claims=seats, claim="q_ann"))
    assert taken.outcome == "ok"
    assert not await store.queue_fence(game, "q_ann")  # her seat was taken under it: it stands
    assert await store.queue_fence(game, "q_bob") and await store.queue_fence(game, "q_bob")  # lost, and stays lost
    late = await store.append(msgspec.structs.replace(request(game, b[2]), claims=seats, claim="q_bob"))
    assert late.outcome == "claimed" and (await store.meta(game))["version"] == str(b[1].last)  # nothing written
    again = await store.append(msgspec.structs.replace(request(game, b[2]), claims=seats, claim="q_ann"))
    assert again.outcome == "ok"


async def test_the_embedded_queue_survives_a_restart(tmp_path):
    store = await EmbeddedStore(tmp_path / "data").open()
    await store.queue_join("a", b"e-a")
    await store.queue_join("b", b"e-b", b"")  # a join of a status judged: journalled with it
    await store.queue_claim([("a", b"e-a", b"claimed")])
    await store.queue_settle("a", b"claimed", b"seated")
    assert not await store.queue_claim([("b", b"stale", b"x")])  # refused: not journalled, so the replay takes
    assert await store.queue_fence("g_lost", "q_1")
    await store.close()
    again = await EmbeddedStore(tmp_path / "data").open()
    try:
        assert await again.queue_of("a") == (None, b"seated") and await again.queue_waiting() == {"b": b"e-b"}
        assert await again.r.hgetall(again.keys.queue_seats("g_lost")) == {b"q_1": b"lost"}
    finally:
        await again.close()


async def test_a_reader_between_the_embedded_claims_steps_sees_the_player_waiting_or_claimed_never_neither(tmp_path):
    """The embedded store's claim takes steps a read (which takes no lock) may fall between: at every step the player
    is still waiting or already claimed (GET /queue once answered "none" to a player being seated)."""
    store = await EmbeddedStore(tmp_path / "data").open()
    try:
        await store.queue_join("p1", b"entry-1")
        seen = []
        for name in ("hset", "hdel"):
            step = getattr(store.r, name)

            async def looking(*args, _step=step):
                seen.append(await store.queue_of("p1"))
                return await _step(*args)

            setattr(store.r, name, looking)
        assert await store.queue_claim([("p1", b"entry-1", b"claimed-1")])
        seen.append(await store.queue_of("p1"))
        assert len(seen) >= 3 and all(seen_entry is not None or status is not None for seen_entry, status in seen), seen
    finally:
        await store.close()
