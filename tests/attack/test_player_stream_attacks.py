"""Attacks on the relay of players' events (service/store/told.py): a relay refused for one player, a store out of
memory, a damaged outbox entry, an embedded relay read before it is journalled. Every event of an acknowledged append
must still reach each of its players exactly once, under the id it was first read with."""

from __future__ import annotations

import asyncio
import itertools

from service.projections.projector import Projector
from service.store.embedded import EmbeddedStore
from service.store.redis_store import RedisStore
from service.store.store import StoreUnavailable
from tests.store.test_told import GAME, append, events_of, turn
from tests.stores import namespace


def versions(events: list[dict]) -> list[int]:
    return [e["version"] for e in events]


async def relay_refused(store) -> Exception | None:
    try:
        await store.tell_players(GAME)
    except Exception as e:  # noqa: BLE001 - the refusal is what the test looks at
        return e
    return None


async def test_a_relay_refused_for_one_player_keeps_the_entry_until_that_player_is_told(store):
    """A player's write fails (here their told hash is damaged: the wrong type): the outbox keeps the entry, so the
    next relay (the projector's) tells them once the store takes writes again — and tells the others nothing twice."""
    await append(store, 0, [("p2", turn(1, seat=1)), ("p1", turn(1))])
    await store.r.set(store.keys.player_told("p1"), b"damaged")
    assert await relay_refused(store) is not None
    assert await store.r.xlen(store.keys.outbox(GAME)) == 1  # p1 is not told: the entry stays
    await store.r.delete(store.keys.player_told("p1"))
    await Projector(store, "after", min_idle_ms=0).catch_up()
    assert versions(await events_of(store, "p1")) == [1]
    assert versions(await events_of(store, "p2")) == [1]
    assert await store.r.xlen(store.keys.outbox(GAME)) == 0


async def test_a_relay_refused_by_a_full_memory_loses_no_event(own_redis):
    """A Redis at its ``maxmemory`` (noeviction) refuses the players' writes but not the outbox's delete: the entry
    must stay until the players are told, or the event is gone for good."""
    server = own_redis()
    store = RedisStore.from_url(server.url, namespace=namespace())
    try:
        await append(store, 0, [("p1", turn(1))])
        used = int((await store.r.info("memory"))["used_memory"])
        await store.r.config_set("maxmemory-policy", "noeviction")
        await store.r.config_set("maxmemory", str(used - 1000))
        assert await relay_refused(store) is not None
        await store.r.config_set("maxmemory", "0")
        await store.tell_players(GAME)
        assert versions(await events_of(store, "p1")) == [1]
    finally:
        await store.close()


async def test_a_damaged_outbox_entry_does_not_hold_up_the_games_other_events(store):
    """An entry that is not what an append writes (not JSON; an event without its type) can never be told: it is
    dropped (and logged), and the game's other entries still reach the players, the projector acknowledges the game
    and the outbox empties (a finished game is archived only then)."""
    v1 = await append(store, 0, [("p1", turn(1))])
    await store.r.xadd(store.keys.outbox(GAME), {"v": v1, "e": b"not json"})
    await store.r.xadd(store.keys.outbox(GAME), {"v": v1, "e": b'[["p1", {"version": 9}]]'})
    v2 = await append(store, 1, [("p1", turn(v1 + 1))])
    assert await relay_refused(store) is None
    await Projector(store, "after", min_idle_ms=0).catch_up()  # raises ProjectionFailed if a game stays failed
    assert versions(await events_of(store, "p1")) == [1, v1 + 1] and v2 > v1
    assert await store.r.xlen(store.keys.outbox(GAME)) == 0


async def test_an_entry_added_by_hand_to_an_outbox_breaks_no_append_and_loses_no_later_event(store):
    """An operator re-sends an event by hand, ``XADD`` with an id of the clock (``*``), as one adds to any stream: the
    next append that tells something must still take whole (not fail part-way after writing its events, a 500 to its
    client), and the entry — naming no version the game reached — must not mark its player told of every later one."""
    v1 = await append(store, 0, [("p1", turn(1))])
    await store.tell_players(GAME)
    await store.r.xadd(store.keys.outbox(GAME), {"e": b'[["p1", {"type": "turn", "version": 1}]]'})
    v2 = await append(store, 1, [("p1", turn(v1 + 1))])
    await store.tell_players(GAME)
    v3 = await append(store, 2, [("p1", turn(v2 + 1))])
    await Projector(store, "after", min_idle_ms=0).catch_up()
    assert versions(await events_of(store, "p1")) == [1, v1 + 1, v2 + 1] and v3 > v2
    assert await store.r.xlen(store.keys.outbox(GAME)) == 0


def clock(monkeypatch) -> None:
    """The relays' clock, one millisecond a call: two relays never share a millisecond (an id would hide a change)."""
    from service.store import told

    ticks = itertools.count(1_800_000_000_000)
    monkeypatch.setattr(told, "time", type("Clock", (), {"time": staticmethod(lambda: next(ticks) / 1000)}))


async def test_an_embedded_relay_refused_part_way_changes_no_id_across_a_restart(tmp_path, monkeypatch):
    """On the embedded store a relay refused for its second player must leave the first untold too (nothing in
    memory the journal lacks): else the restart tells the first player again, under another id than the one a
    client read."""
    clock(monkeypatch)
    store = await EmbeddedStore(tmp_path).open()
    await append(store, 0, [("p1", turn(1)), ("p2", turn(1, seat=1))])
    await store.r.set(store.keys.player_told("p2"), b"damaged")
    assert await relay_refused(store) is not None
    await store.r.delete(store.keys.player_told("p2"))
    await store.tell_players(GAME)
    read = await store.player_events("p1", "0-0", 10)
    await store.close()
    again = await EmbeddedStore(tmp_path).open()
    try:
        assert await again.player_events("p1", "0-0", 10) == read
    finally:
        await again.close()


async def seen_before_the_journal(store, write) -> tuple[list, Exception | None]:
    """Run ``write`` while a stream reads the player ``p1`` in a loop, the journal failing (a kill right there): what
    the stream had read when the journal write came, and what ``write`` raised."""
    seen: list = []
    at_journal: list = []

    def killed(payload: bytes) -> None:
        at_journal.extend(seen)
        raise OSError("killed before the journal write")

    async def reader() -> None:
        for _ in range(50):
            try:
                seen.extend(await store.player_events("p1", "0-0", 10))
            except StoreUnavailable:  # the journal failed: reads are refused from then on
                return
            await asyncio.sleep(0)

    async def writing() -> Exception | None:
        try:
            await write()
        except Exception as e:  # noqa: BLE001 - the refusal is looked at
            return e
        return None

    store._journal.write = killed
    raised, _ = await asyncio.gather(writing(), reader())
    return at_journal, raised


async def test_an_embedded_relay_is_not_read_before_it_is_journalled(tmp_path):
    """A stream reading while the embedded store relays must not see an event the journal does not hold yet: a kill
    before the journal write would have the restart tell it again under a new id — a second copy to a client
    resuming from the first. (The journal failing stands for the kill: the write is then refused.)"""
    store = await EmbeddedStore(tmp_path).open()
    try:
        await append(store, 0, [("p1", turn(1))])
        seen, raised = await seen_before_the_journal(store, lambda: store.tell_players(GAME))
    finally:
        await store.close()
    assert isinstance(raised, StoreUnavailable) and seen == []


async def test_an_embedded_notify_is_not_read_before_it_is_journalled(tmp_path):
    """The same for an event told outside any append (the queue's)."""
    store = await EmbeddedStore(tmp_path).open()
    try:
        left = {"type": "queue", "status": "left"}
        seen, raised = await seen_before_the_journal(store, lambda: store.tell_player("p1", left))
    finally:
        await store.close()
    assert isinstance(raised, StoreUnavailable) and seen == []


async def test_a_rebuild_relays_what_a_dead_worker_left_in_an_outbox(store):
    """A worker died between its append and its relay, and then the operator rebuilt the read models: the rebuild
    drops the projectors' group and creates it again past every entry it read — the pointer that would have had the
    projector relay the outbox with it. The rebuild relays every game's outbox itself, or that event is never told
    (and a finished game is never archived: its outbox is not empty)."""
    from service.projections import rebuild

    await append(store, 0, [("p1", turn(1))])  # the worker dies here: no relay
    await rebuild(store)
    await Projector(store, "after", min_idle_ms=0).catch_up()
    assert versions(await events_of(store, "p1")) == [1]
    assert await store.r.xlen(store.keys.outbox(GAME)) == 0


def second_client(store, request):
    """Another worker's store on the same data: a client of its own on a real Redis or Cluster; the embedded store is
    one process (its one store object)."""
    if store.name == "embedded":
        return store
    from tests.stores import need_redis

    url = request.getfixturevalue("redis_cluster").url if store.cluster else need_redis()
    return RedisStore.from_url(url, namespace=store.keys.ns, cluster=store.cluster)


async def test_relays_racing_appends_on_two_clients_tell_every_event_once_in_order(store, request):
    """Two workers' clients of one store: one appends the game's batches, each telling p1 and every other one p2,
    and relays after each; the other relays at the same time, over and over; a projector finishes. Each player's
    stream holds each version once, in the game's order."""
    other = second_client(store, request)
    done = asyncio.Event()
    batches = 12
    relays: list[asyncio.Future] = []

    async def appending() -> None:
        version = 0
        for n in range(batches):
            told = [("p1", turn(version + 1))] + ([("p2", turn(version + 1, seat=1))] if n % 2 else [])
            version = await append(store, n, told)
            relays.append(asyncio.ensure_future(store.tell_players(GAME)))  # the appending worker's, not awaited
            await asyncio.sleep(0)
        await asyncio.gather(*relays)
        done.set()

    async def relaying() -> None:
        while not done.is_set():
            await other.tell_players(GAME)
            await asyncio.sleep(0)

    try:
        await asyncio.gather(appending(), relaying(), relaying())
        await Projector(store, "after", min_idle_ms=0).catch_up()
        p1, p2 = versions(await events_of(store, "p1")), versions(await events_of(store, "p2"))
        assert len(p1) == batches and p1 == sorted(set(p1))
        assert len(p2) == batches // 2 and p2 == sorted(set(p2))
    finally:
        if other is not store:
            await other.close()
