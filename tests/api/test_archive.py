"""Finished games move to the archive (docs/operating.md, "Archive"): their events leave the store, and every read
of them answers as before — view, events, audit, move log, replay, export (whole and a seat's), receipts, scores,
the lobby — on every store; a rebuild of the read models reads the archive too."""

from __future__ import annotations

import asyncio
import contextvars
import copy
import gzip
import random
import threading

import pytest

from replays.verify import verify
from service.events.export import load
from service.store.keys import PARTITIONS, partition
from service.store.logtrim import trim_logs
from service.projections.rebuild import rebuild
from tests.api.conftest import ADMIN_HEADERS, bearer, make_settings, served
from tests.api.helpers import assert_error, fill, new_game, play_with_ids, seeded_game, trade_places_seed, view, wait_for

READS = ("", "/events?limit=5000", "/audit", "/log", "/replay?at=3", "/export", "/export?as=0", "/scores")


@pytest.fixture
async def archiving(store_kind, tmp_path):
    """A service that archives a game the moment it is finished (``archive_after_ms`` 1), its runner quick."""
    async with served(make_settings(store_kind, tmp_path, archive_after_ms=1, runner_interval_ms=50)) as client:
        yield client


async def finished_bot_game(api) -> str:
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=ADMIN_HEADERS)
    game_id = r.json()["game_id"]
    for _ in range(2):
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    return game_id


async def held_back_finished_game(api) -> str:
    """A bot game played to its end and scored, the runner's archiver held back meanwhile: the test archives it."""
    api.app.ctx.runner.archiver.after_ms = 3_600_000
    game_id = await finished_bot_game(api)
    await wait_for(lambda: _status(api, game_id, "finished"), seconds=60)
    await wait_for(lambda: _scored(api, game_id), seconds=30)
    return game_id


ASKED_BY_THE_TEST = contextvars.ContextVar("asked_by_the_test", default=False)
"""True in a test's task and the tasks it starts (an archive's lease renewal): a patched ``take_lease`` tells its
calls from the runner's pass (the same owner, held back, looking at the same game) apart, and leaves those alone."""


def due_now(runners):
    """The worker's archiver (its lease), archiving a game as soon as it is finished, in the test's hands: the
    runner's own stays held back — set due on it, the runner's pass could archive the game at the same moment as the
    test (then told ``behind``, its game forgotten under it), as one CI run saw."""
    mine = copy.copy(runners)
    mine.after_ms, mine.in_hand = 1, set()  # the runner's pass may be looking at the game (``not_yet``) right now
    return mine


async def answers(api, game_id: str, token: str | None = None) -> dict[str, tuple[int, bytes]]:
    headers = bearer(token) if token else {}
    return {path: ((r := await api.get(f"/games/{game_id}{path}", headers=headers)).status_code, r.content) for path in READS}


async def test_a_finished_game_is_archived_and_reads_as_before(archiving):
    api, store = archiving, archiving.app.ctx.store
    game_id = await held_back_finished_game(api)  # read live first
    live = await answers(api, game_id)
    assert {status for status, _ in live.values()} == {200}, live
    assert await store.r.exists(store.keys.stream(game_id))

    api.app.ctx.runner.archiver.after_ms = 1
    await api.app.ctx.runner.act(game_id)
    assert (await store.meta(game_id))["archived"] == "1"
    assert not await store.r.exists(store.keys.stream(game_id), store.keys.commands(game_id),
                                    store.keys.game_projection("audit", game_id))
    api.app.ctx.games.cache.clear()  # as a worker that never saw the game live
    assert await answers(api, game_id) == live
    metrics = (await api.get("/metrics")).text
    assert "free_parking_archived_games 1.0" in metrics and "free_parking_archive_backlog 0.0" in metrics, metrics[-800:]
    listed = (await api.get("/games", params={"status": "finished"})).json()["games"]
    assert [g["game_id"] for g in listed] == [game_id]  # the lobby still lists it

    header, envelopes = load(gzip.decompress(_archived_file(api, game_id)))
    assert verify(header, envelopes).ok and header.receipt is not None and header.head == envelopes[-1].hash
    assert (header, envelopes) == load(live["/export"][1])


async def test_an_archived_game_leaves_its_players_record_of_what_they_were_told(archiving):
    """Each player keeps the last version of each game told them (``ptold``), so a relay told twice writes once: an
    archived game's field goes with its events, or the record would grow by one field per game a player ever played."""
    api, store = archiving, archiving.app.ctx.store
    api.app.ctx.runner.archiver.after_ms = 3_600_000
    body = (await api.post("/players", json={"name": "Ann"})).json()
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(body["token"]))).status_code == 201
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    told = store.keys.player_told(body["player_id"])
    await wait_for(lambda: _told(store, told, game_id), seconds=30)
    r = await api.post(f"/games/{game_id}/commands", json={"type": "resign"}, headers=bearer(body["token"]))
    assert r.status_code == 200, r.text
    await wait_for(lambda: _scored(api, game_id), seconds=30)
    api.app.ctx.runner.archiver.after_ms = 1

    async def archived_now() -> bool:  # archived once every player was told the game's end (the relay may lag)
        await api.app.ctx.runner.act(game_id)
        return await _archived(api, game_id)

    await wait_for(archived_now, seconds=30)
    assert not await store.r.hexists(told, game_id)


async def _told(store, told: str, game_id: str) -> bool:
    return await store.r.hexists(told, game_id)


async def test_the_runner_archives_a_finished_game_by_itself_and_a_rebuild_reads_it(archiving):
    api, store = archiving, archiving.app.ctx.store
    game_id = await finished_bot_game(api)
    await wait_for(lambda: _archived(api, game_id), seconds=60)
    scores = (await api.get(f"/games/{game_id}/scores")).json()
    assert scores["version"] == int((await store.meta(game_id))["version"]) and scores["scores"]
    await trim_logs(store, keep_ms=0)  # as the projectors do once the retention passed: the groups' cursors stay
    for p in range(PARTITIONS):
        assert await store.r.xlen(store.keys.log(p)) <= 1
        await store.r.delete(store.keys.log(p))  # as later appends and trims leave it: no entry names the game
    await rebuild(store)
    assert (await api.get(f"/games/{game_id}/scores")).json() == scores
    assert (await api.get(f"/games/{game_id}/audit")).status_code == 200


async def test_a_game_whose_read_models_lag_stays_in_the_store(archiving):
    """The removal checks that the read models applied the game's last event: else nothing is removed, and the
    game is looked at again later."""
    api, store = archiving, archiving.app.ctx.store
    game_id = await held_back_finished_game(api)
    version = int((await store.meta(game_id))["version"])
    await store.r.hset(store.keys.game_projection("scores", game_id), "applied", version - 1)
    assert await store.forget_events(game_id, version) is False
    assert await store.r.exists(store.keys.stream(game_id))
    await store.r.hset(store.keys.game_projection("scores", game_id), "applied", version)
    assert await store.forget_events(game_id, version - 1) is False  # not the version it is at
    assert await store.forget_events(game_id, version) is True


async def test_a_game_forgotten_takes_its_command_ids_and_due_action_with_it(archiving):
    """Both stores alike, though the embedded one answers command ids and due entries from its own memory."""
    api, store = archiving, archiving.app.ctx.store
    game_id = await held_back_finished_game(api)
    version = int((await store.meta(game_id))["version"])
    await store.r.hset(store.keys.game_projection("scores", game_id), "applied", version)
    recorded = await store.r.hkeys(store.keys.commands(game_id))
    assert recorded and None not in [await store.command_record(game_id, k.decode()) for k in recorded]
    await store.clear_due(game_id, version, later=version + 10**12)  # a due action, to see it go too
    assert await store.forget_events(game_id, version) is True
    assert [await store.command_record(game_id, k.decode()) for k in recorded] == [None] * len(recorded)
    assert await store.r.zscore(store.keys.due(partition(game_id)), game_id) is None


async def test_a_resend_to_an_archived_game_gets_its_first_answer(archiving):
    """API.md: the same command id with the same body returns the first answer and appends nothing — also once the
    game is archived and its command records went with its events (the answer is found in the archived log)."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(7))
    await wait_for(lambda: _archived(api, game_id), seconds=60)
    api.app.ctx.games.cache.clear()  # as a worker that never held the game
    for token, command, first in (sent[0], sent[len(sent) // 2], sent[-1]):  # the last one ended the game
        r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))
        assert r.status_code == 200, r.text
        assert _batch(r.json()) == _batch(first)
    token, command, _ = sent[-1]
    other = next(t for t in tokens if t != token)  # the same id and body from another player: theirs is no resend
    unpinned = {k: v for k, v in command.items() if k != "expected_version"}
    assert_error(await api.post(f"/games/{game_id}/commands", json=unpinned, headers=bearer(other)), 422, "game_over")
    token, command, _ = sent[0]
    another = next(c for t, c, _ in sent if t == token and c["type"] != command["type"])
    reused = dict(another, command_id=command["command_id"])
    assert_error(await api.post(f"/games/{game_id}/commands", json=reused, headers=bearer(token)), 409, "command_id_reused")
    assert int((await api.app.ctx.store.meta(game_id))["version"]) == sent[-1][2]["version"]  # nothing appended


async def test_a_resend_to_an_archived_game_after_a_trade_of_places_is_the_senders_own(archiving):
    """The log names the seat a command came from; the player who sent it is the one at that seat then. After a trade
    of places the sender sits elsewhere and another player at the seat: the resend is still the sender's."""
    api = archiving
    game_id, tokens = await seeded_game(api, 2, trade_places_seed())
    hand = (await view(api, game_id, tokens[1]))["you"]["hand"]
    discard = {"type": "discard", "card": hand[0]["id"], "command_id": "before-the-trade"}
    first = await api.post(f"/games/{game_id}/commands", json=discard, headers=bearer(tokens[1]))
    assert first.status_code == 200, first.text
    for body, token in (({"type": "draw_second_chance"}, tokens[1]), ({"type": "accept"}, tokens[0]), ({"type": "accept"}, tokens[1])):
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
        assert r.status_code == 200, r.text
    assert any(e["type"] == "places_traded" for e in r.json()["events"])
    assert (await view(api, game_id, tokens[1]))["seat"] == 0  # the sender moved; the other player sits at seat 1
    await play_with_ids(api, game_id, tokens, random.Random(3))
    await wait_for(lambda: _archived(api, game_id), seconds=60)
    api.app.ctx.games.cache.clear()
    again = await api.post(f"/games/{game_id}/commands", json=discard, headers=bearer(tokens[1]))
    assert again.status_code == 200, again.text
    assert _batch(again.json()) == _batch(first.json())
    assert_error(await api.post(f"/games/{game_id}/commands", json=discard, headers=bearer(tokens[0])), 422, "game_over")


def _batch(answer: dict) -> tuple:
    """What a resend must repeat of an answer: the version, the head and the batch's envelopes (a finished game's
    answer shows their secrets, so they are compared by seq and hash)."""
    return answer["version"], answer["head"], [(e["seq"], e["hash"]) for e in answer["events"]]


async def _status(api, game_id, status):
    return (await api.get(f"/games/{game_id}")).json()["status"] == status


async def _scored(api, game_id):
    meta = await api.app.ctx.store.meta(game_id)
    return (await api.get(f"/games/{game_id}/scores")).json()["version"] == int(meta["version"])


async def _archived(api, game_id):
    return (await api.app.ctx.store.meta(game_id)).get("archived") == "1"


def _archived_file(api, game_id) -> bytes:
    archive = api.app.ctx.store.archive
    with open(archive._path(game_id), "rb") as f:
        return f.read()


async def test_one_archiver_a_partition_the_other_leaves_its_games_alone(archiving):
    """Two workers' archivers: the one holding a partition's lease archives its games; the other is told
    ``leased`` and removes nothing, until the lease runs out."""
    from service.api.archiver import Archiver

    api, store = archiving, archiving.app.ctx.store
    ours = api.app.ctx.runner.archiver
    game_id = await held_back_finished_game(api)
    assert await ours.archive_game(game_id) == "not_yet"  # takes the lease: it is ours from now on
    theirs = Archiver(api.app.ctx.games, store.archive, 1, None, "another-worker", lease_ms=ours.lease_ms)
    assert await theirs.archive_game(game_id) == "leased"
    assert await store.r.exists(store.keys.stream(game_id)) and store.archive.read(game_id) is None
    assert await due_now(ours).archive_game(game_id) == "archived"


async def test_a_write_that_outlasts_the_lease_keeps_the_partition_from_another_worker(archiving, monkeypatch):
    """The lease is renewed while a game is archived: a write slower than the lease (a large game, an object store)
    keeps the partition, so another worker is told ``leased`` instead of archiving the same game again — its file
    written twice, the second time over an archived game's one copy."""
    from service.api import archiver as archiving_module
    from service.api.archiver import Archiver

    api, store = archiving, archiving.app.ctx.store
    lease_ms = 2_000
    ours = Archiver(api.app.ctx.games, store.archive, 1, None, api.app.ctx.runner.archiver.owner, lease_ms=lease_ms)
    theirs = Archiver(api.app.ctx.games, store.archive, 1, None, "another-worker", lease_ms=lease_ms)
    game_id = await held_back_finished_game(api)
    taken = []

    async def counted(store_, name, p, owner, ttl_ms):
        if ASKED_BY_THE_TEST.get():
            taken.append(owner)
        return await real_take(store_, name, p, owner, ttl_ms)

    real_take = archiving_module.take_lease
    monkeypatch.setattr(archiving_module, "take_lease", counted)
    writing, release, real_write = threading.Event(), threading.Event(), store.archive.write

    def slow_first_write(gid: str, data: bytes) -> None:
        if not writing.is_set():
            writing.set()
            release.wait(60)
        real_write(gid, data)

    monkeypatch.setattr(store.archive, "write", slow_first_write)
    ASKED_BY_THE_TEST.set(True)
    archived = asyncio.ensure_future(ours.archive_game(game_id))
    async def past_one_lease() -> bool:  # taken, then renewed four times: 4 × lease_ms / 3 since it was taken
        return writing.is_set() and taken.count(ours.owner) >= 5

    await wait_for(past_one_lease, seconds=30)
    try:
        assert await theirs.archive_game(game_id) == "leased"
    finally:
        release.set()
    assert await archived == "archived"


async def test_two_archives_of_one_game_in_one_worker_write_it_once(archiving, monkeypatch):
    """The lease is re-entrant for its owner, so two archives of one game in one worker (the runner's pass and an
    admin's call, two tests' calls) both held it: the second is told ``leased`` while the first is under way, and the
    game's file is written once."""
    from service.api.archiver import Archiver

    api, store = archiving, archiving.app.ctx.store
    ours = Archiver(api.app.ctx.games, store.archive, 1, None, api.app.ctx.runner.archiver.owner)
    game_id = await held_back_finished_game(api)
    writing, release, real_write, writes = threading.Event(), threading.Event(), store.archive.write, []

    def slow_write(gid: str, data: bytes) -> None:
        writes.append(gid)
        writing.set()
        release.wait(60)
        real_write(gid, data)

    monkeypatch.setattr(store.archive, "write", slow_write)
    first = asyncio.ensure_future(ours.archive_game(game_id))

    async def under_way() -> bool:
        return writing.is_set()

    await wait_for(under_way, seconds=30)
    try:
        assert await ours.archive_game(game_id) == "leased"
    finally:
        release.set()
    assert await first == "archived" and writes == [game_id] and not ours.in_hand
    assert await ours.archive_game(game_id) == "already"


async def test_an_archive_that_lost_its_lease_midway_removes_nothing(archiving, monkeypatch):
    """A renewal refused (another worker took the partition: the store was away past the lease) stops the archive
    before it removes the game's events: the other worker archives it, once its own copy checks out."""
    from service.api import archiver as archiving_module
    from service.api.archiver import Archiver

    api, store = archiving, archiving.app.ctx.store
    ours = Archiver(api.app.ctx.games, store.archive, 1, None, api.app.ctx.runner.archiver.owner, lease_ms=300)
    game_id = await held_back_finished_game(api)
    granted, refused = asyncio.Event(), threading.Event()
    real_take, real_write = archiving_module.take_lease, store.archive.write

    async def renewal_refused(store_, name, p, owner, ttl_ms):
        if not ASKED_BY_THE_TEST.get():  # the runner's pass took the refusal meant for the renewal once (a CI run)
            return await real_take(store_, name, p, owner, ttl_ms)
        if granted.is_set():  # the first take is granted; the renewal after it is not
            refused.set()
            return False
        granted.set()
        return await real_take(store_, name, p, owner, ttl_ms)

    def write_once_refused(gid: str, data: bytes) -> None:  # a slow write: the renewal comes due meanwhile
        refused.wait(60)
        real_write(gid, data)

    monkeypatch.setattr(archiving_module, "take_lease", renewal_refused)
    monkeypatch.setattr(store.archive, "write", write_once_refused)
    ASKED_BY_THE_TEST.set(True)
    assert await ours.archive_game(game_id) == "leased"
    assert await store.r.exists(store.keys.stream(game_id))
    assert (await store.meta(game_id)).get("archived") is None


async def test_an_archived_game_is_never_archived_again(archiving):
    """A worker that comes to an archived game again (the ``archive`` command's list made before a runner archived
    it, a lease run out) leaves it alone: its file is not written over — on a backend that writes in place, a kill
    then would leave a damaged file and no events — and the partition's count of archived games is not counted twice."""
    from service.api.archiver import Archiver

    api, store = archiving, archiving.app.ctx.store
    ours = api.app.ctx.runner.archiver
    game_id = await held_back_finished_game(api)
    assert await due_now(ours).archive_game(game_id) == "archived"
    before = _archived_file(api, game_id)
    written = []
    store.archive.write = lambda *a: written.append(a)  # a write would be a rewrite of the archived file
    api.app.ctx.games.cache.clear()  # another worker, that reads the game from the archive
    again = Archiver(api.app.ctx.games, store.archive, 1, None, ours.owner, lease_ms=ours.lease_ms)
    assert await again.archive_game(game_id) == "already"
    assert written == [] and _archived_file(api, game_id) == before
    assert not await store.forget_events(game_id, int((await store.meta(game_id))["version"]))  # nor the script
    metrics = (await api.get("/metrics")).text
    assert "free_parking_archived_games 1.0" in metrics, metrics[-800:]
    due = store.keys.due(partition(game_id))
    await store.r.zadd(due, {game_id: 1})  # a runner told it is due (a stale entry): it drops it, not looks again later
    await api.app.ctx.runner.act(game_id)
    assert await store.r.zscore(due, game_id) is None and written == []
