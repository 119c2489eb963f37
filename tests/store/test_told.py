"""Telling players (service/store/told.py), on every store: what an append tells its players is kept with its events,
relayed into each player's stream exactly once whoever relays it and however often, by the projector when the
appending worker died first, and — on the embedded store — kept across a restart with the stream ids it had."""

from __future__ import annotations

import asyncio

import msgspec

from service.projections.projector import Projector, project_game
from service.store.embedded import EmbeddedStore
from service.store.told import encode_told
from tests.store.test_store_contract import batches, request

GAME = "g-told"


def turn(version: int, seat: int = 0) -> dict:
    return {"type": "turn", "game_id": GAME, "seat": seat, "version": version, "deadline_at": None}


async def append(store, n: int, told: list[tuple[str, dict]] | None = None, game_id: str = GAME) -> int:
    """Append the ``n``-th batch of a real game (``n`` from 0), telling ``told``; answers the version it reached."""
    game = batches(game_id)
    expected = sum(len(b.envelopes) for b in game[:n])
    req = msgspec.structs.replace(request(game_id, game[n], expected=expected), told=encode_told(told or []))
    done = await store.append(req)
    assert done.outcome == "ok", done
    return done.last


async def events_of(store, player_id: str) -> list[dict]:
    return [msgspec.json.decode(e) for _, _, e in await store.player_events(player_id, "0-0", 1000)]


async def test_an_append_keeps_what_it_tells_and_the_relay_writes_it_into_each_players_stream_once(store):
    v1 = await append(store, 0, [("p1", {"type": "seated", "game_id": GAME, "seat": 0, "kind": "free-parking"}),
                                 ("p1", turn(1)), ("p2", {"type": "seated", "game_id": GAME, "seat": 1, "kind": "x"})])
    assert await events_of(store, "p1") == []  # kept in the game's outbox, not yet told
    told = await store.tell_players(GAME)
    assert sorted(told.players) == ["p1", "p2"]
    assert [e["type"] for e in await events_of(store, "p1")] == ["seated", "turn"]
    assert [e["type"] for e in await events_of(store, "p2")] == ["seated"]
    again = await store.tell_players(GAME)
    assert again.players == [] and not again.changed  # the outbox is empty: nothing repeats
    assert len(await events_of(store, "p1")) == 2 and v1 >= 1


async def test_relays_racing_write_every_event_once_in_the_games_order(store):
    await append(store, 0, [("p1", turn(1))])
    await append(store, 1, [("p1", turn(2)), ("p2", turn(2, seat=1))])
    await append(store, 2)  # an append that tells nobody anything
    await append(store, 3, [("p2", turn(4, seat=1))])
    await asyncio.gather(*(store.tell_players(GAME) for _ in range(4)))
    assert [e["version"] for e in await events_of(store, "p1")] == [1, 2]
    assert [e["version"] for e in await events_of(store, "p2")] == [2, 4]


async def test_a_relay_that_died_before_it_emptied_the_outbox_repeats_nothing(store):
    """The relay writes each player's events, then empties the outbox: a relay that died in between leaves the entry
    there, and the next relay finds its players told already."""
    await append(store, 0, [("p1", turn(1))])
    first = await store.r.xrange(store.keys.outbox(GAME))
    await store.tell_players(GAME)
    await store.r.delete(store.keys.outbox(GAME))
    await store.r.xadd(store.keys.outbox(GAME), first[0][1], id=first[0][0])  # as if the XDEL never ran
    await store.tell_players(GAME)
    assert [e["version"] for e in await events_of(store, "p1")] == [1]
    assert await store.r.xlen(store.keys.outbox(GAME)) == 0


async def test_the_projector_tells_what_a_worker_that_died_after_its_append_did_not(store):
    await append(store, 0, [("p1", turn(1))])  # the worker dies here: no tell
    dead = Projector(store, "dead", min_idle_ms=0)
    await dead.ensure_groups()
    await dead._read_groups({p: ">" for p in dead.partitions})  # it had even read the log's pointer, never acked it
    assert await events_of(store, "p1") == []
    live = Projector(store, "live", min_idle_ms=0)
    await live.catch_up()  # takes the dead consumer's pending pointer over, and tells before acknowledging it
    assert [e["version"] for e in await events_of(store, "p1")] == [1]


async def test_a_game_is_not_archived_while_its_outbox_holds_something_untold(store):
    game = batches(GAME)
    for n in range(len(game) - 1):
        await append(store, n)
    last = await append(store, len(game) - 1, [("p1", {"type": "game_over", "game_id": GAME})])
    assert await project_game(store, GAME) == last  # the read models applied it, the players are not told yet
    assert not await store.forget_events(GAME, last)
    await store.tell_players(GAME)
    assert await store.forget_events(GAME, last)
    assert await store.r.exists(store.keys.outbox(GAME)) == 0


async def test_an_archived_games_record_of_what_its_players_were_told_goes_with_it(store):
    """``ptold`` would keep one field per game a player ever played: the archiver drops the game's (its outbox is gone,
    nothing of it is told again), and the player's other games keep theirs."""
    await append(store, 0, [("p1", turn(1))])
    await append(store, 0, [("p1", turn(1))], game_id="g-told-other")
    await store.tell_players(GAME)
    await store.tell_players("g-told-other")
    await store.forget_told(GAME, ["p1", "p_never_told"])
    assert await store.r.hgetall(store.keys.player_told("p1")) == {b"g-told-other": b"1"}
    await store.forget_told(GAME, ["p1"])  # again: nothing left to drop, nothing refused


async def test_the_embedded_store_keeps_players_streams_and_their_ids_across_a_restart(tmp_path):
    store = await EmbeddedStore(tmp_path).open()
    await append(store, 0, [("p1", turn(1))])
    await store.tell_players(GAME)
    await store.tell_player("p1", {"type": "queue", "status": "waiting"})
    await append(store, 1, [("p1", turn(2))])  # told nobody yet: the worker dies here
    before = await store.player_events("p1", "0-0", 100)
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    try:
        assert await again.player_events("p1", "0-0", 100) == before  # the same events under the same ids
        await Projector(again, "after-restart").catch_up()
        after = await again.player_events("p1", before[-1][0], 100)  # a client resumes from the last id it had
        assert [msgspec.json.decode(e)["version"] for _, _, e in after] == [2]
    finally:
        await again.close()
