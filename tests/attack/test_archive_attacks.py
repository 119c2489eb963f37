"""Attacks on the archive (service/store/archive.py, service/api/archiver.py): what a worker answers for an archived
game whose file is not what it should be, what a rebuild does when it cannot read an archived game, and where the
archive's I/O runs. Each was a hole an outside review found (a missing file served as an empty game, another game's
file served as this one, a rebuild without the archive dropping read models silently, archive I/O on the event
loop); each test failed then and holds now."""

from __future__ import annotations

import asyncio
import gzip
import os
import shutil
import uuid

import msgspec
import pytest

from replays.verify import verify
from service.events.envelope import canonical
from service.events.export import dumps, load
from service.store.archive import Archive
from service.projections import read_scores
from service.projections.rebuild import RebuildRefused, rebuild
from tests.api.conftest import make_settings, served
from tests.api.helpers import wait_for
from tests.api.test_archive import finished_bot_game

READS = ("", "/events?limit=5000", "/audit", "/log", "/replay?at=3", "/export", "/export?as=0")


@pytest.fixture(params=["embedded", "redis"])
async def archiving(request, tmp_path):
    """A service that archives a game the moment it is finished, its runner quick."""
    async with served(make_settings(request.param, tmp_path, archive_after_ms=1, runner_interval_ms=50)) as client:
        yield client


async def archived_game(api) -> str:
    game_id = await finished_bot_game(api)

    async def done() -> bool:
        return ((await api.app.ctx.store.meta(game_id)) or {}).get("archived") == "1"

    await wait_for(done, seconds=60)
    return game_id


def forget_reads(api) -> None:
    """As a worker that never read the game: nothing of it cached."""
    api.app.ctx.games.cache.clear()
    api.app.ctx.store.archive._cache.clear()


async def answers(api, game_id: str) -> dict[str, tuple[int, str]]:
    return {p: ((r := await api.get(f"/games/{game_id}{p}")).status_code, r.text[:120]) for p in READS}


async def test_an_archived_game_whose_file_is_missing_is_unavailable_not_an_empty_game(archiving):
    api = archiving
    game_id = await archived_game(api)
    os.remove(api.app.ctx.store.archive._path(game_id))
    forget_reads(api)
    got = await answers(api, game_id)
    assert {status for status, _ in got.values()} == {503}, got


async def test_another_games_file_under_an_archived_games_name_is_damaged_not_served(archiving):
    api = archiving
    ours, other = await archived_game(api), await archived_game(api)
    archive = api.app.ctx.store.archive
    shutil.copy(archive._path(other), archive._path(ours))
    forget_reads(api)
    got = await answers(api, ours)
    assert {status for status, _ in got.values()} == {503}, got
    assert all("archive_damaged" in text for _, text in got.values()), got


async def edited_by_hand(api, type_: str, part: str, edit) -> str:
    """An archived game whose first ``type_`` event had its ``part`` ("public" or "secret") changed by ``edit`` (a
    function of the decoded dict), every hash and digest kept, gzip'd again, and no worker holding a read of it."""
    game_id = await archived_game(api)
    path = api.app.ctx.store.archive._path(game_id)
    with open(path, "rb") as f:
        header, envelopes = load(gzip.decompress(f.read()))
    i = next(i for i, env in enumerate(envelopes) if env.type == type_)
    value = msgspec.json.decode(getattr(envelopes[i], part))
    edit(value)
    envelopes[i] = msgspec.structs.replace(envelopes[i], **{part: msgspec.Raw(canonical(value))})
    with open(path, "wb") as f:
        f.write(gzip.compress(dumps(header, envelopes)))
    forget_reads(api)
    return game_id


def assert_damaged(got: dict[str, tuple[int, str]]) -> None:
    assert {status for status, _ in got.values()} == {503}, got
    assert all("archive_damaged" in text for _, text in got.values()), got


async def test_an_archived_file_edited_by_hand_with_every_hash_kept_is_damaged_not_served(archiving):
    """The winner's seat changed in ``game_won``, every envelope's hash left as it was, gzip'd again (an outside review):
    the links still chain, so a read that only compared them served the other winner under a genuine receipt head."""

    def other_winner(public: dict) -> None:
        public["seat"] = 1 - public["seat"]

    assert_damaged(await answers(archiving, await edited_by_hand(archiving, "game_won", "public", other_winner)))


async def test_an_archived_file_whose_secret_was_edited_with_its_digest_kept_is_damaged_not_served(archiving):
    """An envelope's hash covers its ``secret_digest``, never its ``secret`` (docs/events.md): the deck dealt in
    ``round_dealt`` edited by hand (its last two cards, never drawn, swapped), the digest and every hash kept, gzip'd
    again. Every link chains and every envelope hashes to its own hash, so the read served the file: ``/export``
    answered 200 with a secret that does not match its digest (``replays verify`` REJECTS what the service served),
    where docs/durability.md promises 503 ``archive_damaged``, never a wrong game."""

    def swapped(secret: dict) -> None:
        secret["deck"][-1], secret["deck"][-2] = secret["deck"][-2], secret["deck"][-1]

    game_id = await edited_by_hand(archiving, "round_dealt", "secret", swapped)
    got = await answers(archiving, game_id)
    served = await archiving.get(f"/games/{game_id}/export")
    if served.status_code == 200:  # what a player would be handed: the log the file now holds, not the game
        assert not verify(*load(served.content)).ok, "the edit is not in what was served"
    assert_damaged(got)


async def test_a_rebuild_that_cannot_read_an_archived_game_fails_instead_of_dropping_it(archiving, tmp_path):
    api, store = archiving, archiving.app.ctx.store
    game_id = await archived_game(api)
    version = int((await store.meta(game_id))["version"])
    await wait_for(lambda: _scored(store, game_id, version), seconds=30)
    store.archive = Archive(tmp_path / "not-the-archive")  # as `python -m service rebuild` without --archive
    with pytest.raises(RebuildRefused, match="not in the archive"):
        await rebuild(store)
    assert await _scored(store, game_id, version)  # refused before anything was dropped


async def _scored(store, game_id: str, version: int) -> bool:
    return (await read_scores(store, game_id))[1] == version


async def test_the_archive_is_never_read_or_written_on_the_event_loop(tmp_path):
    settings = make_settings("embedded", tmp_path, archive_dir=f"memory://attack-{uuid.uuid4().hex[:8]}/archive",
                             archive_after_ms=1, runner_interval_ms=50)
    async with served(settings) as api:
        fs = api.app.ctx.store.archive.fs
        on_loop: list[str] = []
        pipe_file, cat_file = fs.pipe_file, fs.cat_file

        def watch(name, call):
            def wrapped(*args, **kwargs):
                if asyncio._get_running_loop() is not None:
                    on_loop.append(name)
                return call(*args, **kwargs)
            return wrapped

        fs.pipe_file, fs.cat_file = watch("write", pipe_file), watch("read", cat_file)
        try:
            game_id = await archived_game(api)
            forget_reads(api)
            assert (await api.get(f"/games/{game_id}")).status_code == 200
        finally:
            fs.pipe_file, fs.cat_file = pipe_file, cat_file
        assert on_loop == [], f"archive I/O on the event loop: {sorted(set(on_loop))}"
