"""A Redis failover under Sentinel: the primary ``SIGKILL``ed, the Sentinel promotes its replica, the service follows it
by itself (its pool and the change feed's blocking read ask the Sentinel again) — and what that costs in acknowledged
events with each durability setting.

Set up by ``tests/replicas.py``: a primary, one replica, one Sentinel (quorum 1, down after 1 s), the service reaching
them through ``REDIS_SENTINEL``. Acknowledged means answered 200, or shown to a spectator (``/events``, the event
stream): under ``replicated`` a read shows only what the replicas have, so both count.

* under load with ``replicated``: the primary killed mid-load, nothing acknowledged lost, play and the spectators'
  stream go on once the old primary is back as a replica (with one replica, the promoted primary has none until then,
  and answers 503 ``not_replicated`` meanwhile: run two replicas to write on through a failover);
* held back, deterministically: the replica stopped and its link cut, then commands, then the primary killed. With
  ``durable`` every command answered 200 meanwhile is lost — exactly those events; with ``replicated`` they are
  answered 503 instead (reads too), and once resent after the failover, acknowledged and kept.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time

import httpx
import pytest

from tests.drills.support import (
    UNKNOWN, Ledger, background, check_ledger, guest_games, play, read_logs, resend_unknown, under_load, versions,
    wait_until,
)  # fmt: skip
from tests.replicas import Replicated

WAIT_MS = 300  # each write's bound on its replica's answer: the held-back cases wait it out at every try
KILL_AFTER = 150  # events acknowledged before the kill under load
RESUME = 20  # events each bot game must move on by after the failover


@pytest.fixture
def group(tmp_path):
    replicated = Replicated(tmp_path / "redis").start()
    yield replicated
    replicated.stop()


async def follow(api: httpx.AsyncClient, game_id: str, ledger: Ledger, stop: asyncio.Event, seen: dict[str, int]) -> None:
    """A spectator's event stream (SSE) of ``game_id``: each event shown is acknowledged (and its seq kept in ``seen``);
    a stream that ends is opened again after the last event seen, as an ``EventSource`` does."""
    after = 0
    while not stop.is_set():
        try:
            async with api.stream("GET", f"/games/{game_id}/events/stream", params={"after": after}) as r:
                if r.status_code == 204:
                    return
                if r.status_code == 200:
                    async for line in r.aiter_lines():
                        if line.startswith("data: ") and '"seq"' in line:
                            envelope = json.loads(line[6:])
                            ledger.ack_events(game_id, [envelope])
                            after = seen[game_id] = envelope["seq"]
        except UNKNOWN:
            pass
        await asyncio.sleep(0.1)


def feed_gauges(scrape: str) -> tuple[float, float]:
    """The change feed's pauses so far and its workers blocking now, from a /metrics scrape."""
    pauses = re.search(r"^free_parking_change_feed_pauses_total (\S+)$", scrape, re.MULTILINE)
    blocking = re.search(r'^free_parking_change_feed\{state="blocking"\} (\S+)$', scrape, re.MULTILINE)
    return float(pauses.group(1)) if pauses else 0.0, float(blocking.group(1)) if blocking else 0.0


async def test_a_failover_under_load_loses_nothing_acknowledged_with_replicated(group, services):
    service = services(None, sentinel=group, durability="replicated", replica_wait_ms=WAIT_MS, bot_delay_ms=20)
    ledger, stop = Ledger(), asyncio.Event()
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as api, background(stop) as start:
        bots, humans, tasks = await under_load(api, start, ledger, stop, bots=4, humans=2, tag="fo")
        streamed: dict[str, int] = {}
        stream = start([follow(api, g, ledger, stop, streamed) for g in bots])  # cancelled at the end: they wait on events
        began = time.monotonic()

        async def loaded() -> bool:
            failed = [t.exception() for t in tasks + stream if t.done() and t.exception() is not None]
            assert not failed, failed
            return ledger.events_acked >= KILL_AFTER and time.monotonic() - began >= 1.0

        await wait_until(loaded, 30, f"{KILL_AFTER} events acknowledged")
        playing = {g: v for g, (v, s) in (await versions(api, bots)).items() if s == "playing"}
        assert playing, "every bot game ended before the kill: give them more to do"
        at_kill = ledger.events_acked
        group.fail_over()  # SIGKILL mid-load; the Sentinel promotes the replica
        promoted = time.monotonic()
        group.reattach_old_primary()  # the new primary's replica: writes are acknowledged again

        async def resumed() -> bool:
            now = await versions(api, list(playing))
            return all(s == "finished" or v >= playing[g] + RESUME for g, (v, s) in now.items())

        took = await wait_until(resumed, 40, f"every bot game {RESUME} events further after the failover")
        now = {g: v for g, (v, _) in (await versions(api, list(playing))).items()}

        async def streams_went_on() -> bool:  # each stream shows what its game did after the failover
            return all(streamed.get(g, 0) >= v for g, v in now.items())

        await wait_until(streams_went_on, 20, "the spectators' streams going on after the failover")
        pauses, blocking = feed_gauges((await api.get("/metrics")).text)
        stop.set()
        await asyncio.gather(*tasks)
    service.stop()
    assert pauses >= 1 and blocking == 1  # the change feed lost the primary, then blocked on the promoted one
    logs = await read_logs(group.replica.url, bots + [g for g, _ in humans])
    counts = check_ledger(ledger, logs)  # every acknowledged event in the promoted replica's logs
    lost = sum(len(ledger.lost(g, log.envelopes)) for g, log in logs.items())
    print(f"\n[failover, replicated] killed with {at_kill} events acknowledged; lost {lost}; play resumed {took:.1f} s "
          f"after the reattach ({time.monotonic() - promoted:.1f} s after the promotion); commands {counts}; "
          f"answers {dict(ledger.statuses)}")  # fmt: skip
    assert lost == 0


@pytest.mark.parametrize("durability", ["durable", "replicated"])
async def test_a_replica_held_back_loses_what_the_primary_acknowledged_unless_replicated(durability, group, services):
    service = services(None, sentinel=group, durability=durability, replica_wait_ms=WAIT_MS, runner=False)
    ledger, stop = Ledger(), asyncio.Event()
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as api:
        games = await guest_games(api, 2, seats=2)
        for i, (g, tokens) in enumerate(games):
            await play(api, g, tokens, ledger, random.Random(i), stop, tag=f"before-{i}", count=4)
        await wait_until(synced(group.caught_up), 20, "the replica caught up")
        before = {g: set(ledger.acked[g]) for g, _ in games}
        group.hold_replica()  # stopped, its link cut: what the primary takes now is on no replica
        held_commands = 3 if durability == "durable" else 1  # replicated: the game's next view waits for the replica too
        for i, (g, tokens) in enumerate(games):
            await play(api, g, tokens, ledger, random.Random(10 + i), stop, tag=f"held-{i}", count=held_commands,
                       patience=0.6)  # fmt: skip
        shown = await api.get(f"/games/{games[0][0]}/events", params={"after": max(before[games[0][0]])})
        group.fail_over()
        if durability == "replicated":
            assert ledger.statuses["200"] == 8 and len(ledger.unknown) == 2, ledger.statuses
            assert ledger.statuses["503 not_replicated"] > 0, ledger.statuses
            assert shown.status_code == 503 and shown.json()["error"]["code"] == "not_replicated", shown.text
            assert int(shown.headers["retry-after"]) >= 1
            group.reattach_old_primary()
            answers = await resend_unknown(api, ledger)  # the same commands, again: now on the promoted primary
            assert answers and all(r is not None and r.status_code == 200 for r in answers), ledger.statuses
        else:
            assert ledger.statuses["200"] == 8 + 6 and not ledger.unknown, ledger.statuses
    service.stop()
    held_back_verdict(durability, ledger, await read_logs(group.replica.url, [g for g, _ in games]), before, "Sentinel")


def held_back_verdict(durability: str, ledger: Ledger, logs: dict, before: dict[str, set[int]], where: str) -> None:
    """What the promoted replica's logs lack: under ``replicated`` nothing acknowledged; else exactly the events
    acknowledged while the replica was held (those beyond ``before``), and some were."""
    lost = {g: set(ledger.lost(g, log.envelopes)) for g, log in logs.items()}
    held = {g: set(ledger.acked[g]) - before[g] for g in lost}
    print(f"\n[{where}, held replica, {durability}] acknowledged while held: {sum(map(len, held.values()))} events; "
          f"lost {sum(map(len, lost.values()))}; answers {dict(ledger.statuses)}")  # fmt: skip
    if durability == "replicated":
        check_ledger(ledger, logs)
        assert not any(lost.values())
    else:
        check_ledger(ledger, logs, lossy=True)
        assert lost == held and any(held.values())


def synced(check):
    """``check`` (a plain function) as ``wait_until`` asks it."""

    async def checked() -> bool:
        return check()

    return checked
