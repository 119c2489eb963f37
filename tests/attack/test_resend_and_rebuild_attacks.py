"""Attacks on two features: a resend to an archived game gets its first answer (service/api/resend.py,
``Games._repeat``), and a rebuild refuses up front when an archived file is damaged
(service/projections/rebuild.py ``_archived_games_readable``).

The resend tests send each probe twice — once the game is finished but still in the store (the command records answer)
and once it is archived (the archived log answers) — and require the same answer both times, and nothing appended.
The rebuild tests damage one archived file in each way an operator may meet and require a rebuild to refuse with
``RebuildRefused`` (or ``ArchiveError``) before it drops any read model — never to stop half way, nor to succeed
having silently replayed less than the game.

Found by this review, each failing before its fix: a rebuild's check passed an older export of the game, a header
with no events, or a log with events dropped (the rebuild then stopped half way or replayed less than the game);
such files were served as a shorter game; another ``expected_version`` was a first answer once archived."""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import sys

import msgspec
import pytest

from service.store.archive import ArchiveError
from service.projections import read_scores
from service.projections.rebuild import RebuildRefused, rebuild
from tests.api.conftest import ADMIN_HEADERS, bearer, make_settings, served
from tests.api.helpers import fill, log_of, new_game, pick, play_with_ids, view, wait_for
from tests.api.test_archive import due_now, finished_bot_game

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(params=["embedded", "redis"])
async def archiving(request, tmp_path):
    """A service whose archiver the test drives: held back while the game is played, then run by hand."""
    async with served(make_settings(request.param, tmp_path, archive_after_ms=1, runner_interval_ms=50)) as client:
        client.app.ctx.runner.archiver.after_ms = 3_600_000
        yield client


# --- helpers ---------------------------------------------------------------------------------------


async def _meta(api, game_id: str) -> dict:
    return (await api.app.ctx.store.meta(game_id)) or {}


async def finished_and_scored(api, game_id: str) -> int:
    async def finished():
        return (await _meta(api, game_id)).get("status") == "finished"

    await wait_for(finished, seconds=60)
    version = int((await _meta(api, game_id))["version"])

    async def scored():
        return (await read_scores(api.app.ctx.store, game_id))[1] == version

    await wait_for(scored, seconds=30)
    return version


async def archive(api, game_id: str) -> None:
    """Archive a finished, scored game now, and forget every read of it (as a worker that never held it)."""
    await finished_and_scored(api, game_id)
    # the runner's own archiver stays held back, or its pass could archive the game at the same moment and write its
    # file again after the test damaged it
    outcome = await due_now(api.app.ctx.runner.archiver).archive_game(game_id)
    assert outcome in ("archived", "already"), outcome
    assert (await _meta(api, game_id)).get("archived") == "1"
    forget_reads(api)


def forget_reads(api) -> None:
    api.app.ctx.games.cache.clear()
    archive_ = api.app.ctx.store.archive
    if archive_ is not None:
        archive_._cache.clear()


def answer_of(r) -> tuple[int, object]:
    """A response as a resend must repeat it: its status and its body (an error's request id aside)."""
    body = r.json()
    if isinstance(body, dict) and "error" in body:
        body["error"]["detail"].pop("request_id", None)
    return r.status_code, body


def _seqs(answer: dict) -> tuple:
    return answer["version"], answer["head"], [(e["seq"], e["hash"]) for e in answer["events"]]


async def send_all(api, game_id: str, probes: list[tuple[str, dict, dict]]) -> list[tuple[int, object]]:
    return [answer_of(await api.post(f"/games/{game_id}/commands", json=body, headers=headers)) for _, body, headers in probes]


async def guest_elsewhere(api) -> str:
    """A guest token of another game (still waiting): a valid token with no seat here."""
    other = await new_game(api, 2)
    return (await fill(api, other, 1))[0]


# --- resends: the same answer before and after archiving --------------------------------------------


async def test_resends_answer_alike_before_and_after_archiving(archiving):
    """Every caller's resend of a command the log holds — its sender's (the first answer), the other player's (theirs
    is no resend: game_over), the admin's and an outsider's (403), one with another command under the id (409), one
    with an id nobody used (game_over), a bot-less game's ids tried by the other seat — answers the same before the
    game is archived and after; and nothing is ever appended."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(11))
    await finished_and_scored(api, game_id)
    outsider = await guest_elsewhere(api)
    chosen = sorted({0, 1, len(sent) // 3, len(sent) // 2, len(sent) - 2, len(sent) - 1})
    probes: list[tuple[str, dict, dict]] = []
    for i in chosen:
        token, command, _ = sent[i]
        other = next(t for t in tokens if t != token)
        another = next((c for t, c, _ in sent if t == token and c["type"] != command["type"]), None)
        probes += [
            ("own resend", command, bearer(token)),
            ("other player, same id and body", command, bearer(other)),
            ("admin", command, ADMIN_HEADERS),
            ("guest of another game", command, bearer(outsider)),
            ("id nobody used", dict(command, command_id=f"never-{i}"), bearer(token)),
        ]
        if another is not None:
            probes.append(("another command under the id", dict(another, command_id=command["command_id"]), bearer(token)))
    before_log = await log_of(api, game_id)
    live = await send_all(api, game_id, probes)
    for (label, _, _), (status, _) in zip(probes, live, strict=True):
        if label == "own resend":
            assert status == 200, (label, live)
    await archive(api, game_id)
    archived = await send_all(api, game_id, probes)
    differ = [(label, a, b) for (label, _, _), a, b in zip(probes, live, archived, strict=True) if a != b]
    assert differ == [], differ[:3]
    assert await log_of(api, game_id) == before_log


async def test_a_resend_changing_expected_version_answers_alike_before_and_after_archiving(archiving):
    """Another ``expected_version`` is another command, before archiving (the record's digest covers it) and after (an
    accepted command named the version its batch came after). Leaving it out is the one difference the archived log
    cannot see (docs/operating.md): 409 before archiving, the first answer after."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(5))
    token, command, _ = sent[len(sent) // 2]
    probes = [
        ("expected_version moved on", dict(command, expected_version=command["expected_version"] + 1), bearer(token)),
        ("expected_version moved back", dict(command, expected_version=command["expected_version"] - 1), bearer(token)),
        ("expected_version left out", {k: v for k, v in command.items() if k != "expected_version"}, bearer(token)),
    ]
    await finished_and_scored(api, game_id)
    live = await send_all(api, game_id, probes)
    await archive(api, game_id)
    archived = await send_all(api, game_id, probes)
    codes = lambda answers: [(s, b.get("error", {}).get("code") if s != 200 else "first answer") for s, b in answers]  # noqa: E731
    assert codes(live) == [(409, "command_id_reused")] * 3
    assert codes(archived) == [(409, "command_id_reused")] * 2 + [(200, "first answer")]


async def test_a_bots_command_id_resent_by_the_human_at_the_table_is_not_theirs(archiving):
    """The runner sends a bot's moves with a predictable id (``bot:<game>:<version>``), recorded under the server's
    key. The log names only the bot's seat: a person at the table who sends that id with the bot's body must not get
    the bot's batch as their own first answer (nor a 500) — not before archiving and not after."""
    api = archiving
    game_id = await new_game(api, 2)
    token = (await fill(api, game_id, 1))[0]
    assert (await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})).status_code == 201
    await play_against_bot(api, game_id, token, random.Random(2))
    _, _, events = await log_of(api, game_id)
    bot_batches = [e for e in events if e["command"] is not None and str(e.get("command_id") or "").startswith("bot:")]
    assert bot_batches
    probes = [("bot id", dict(e["command"], command_id=e["command_id"]), bearer(token)) for e in bot_batches[-3:]]
    probes += [("server's id", {"type": "end_turn", "command_id": f"timeout:{game_id}:{e['seq'] - 1}"}, bearer(token))
               for e in bot_batches[-1:]]
    await finished_and_scored(api, game_id)
    before_log = await log_of(api, game_id)
    live = await send_all(api, game_id, probes)
    assert {(s, b["error"]["code"]) for s, b in live} == {(422, "game_over")}, live
    await archive(api, game_id)
    assert await send_all(api, game_id, probes) == live
    assert await log_of(api, game_id) == before_log


async def play_against_bot(api, game_id: str, token: str, rnd: random.Random) -> None:
    """The person at seat 0 plays from ``legal`` with command ids whenever the game awaits them; the bot's moves come
    from the runner."""
    for step in range(3000):
        v = await view(api, game_id, token)
        if v["status"] == "finished":
            return
        mine = v["pending"]["seat"] == v["seat"] if v["pending"] else v["turn"] == v["seat"]
        if not (mine and v["legal"]):
            version = v["version"]

            async def moved(version=version):
                w = await view(api, game_id, token)
                return w["version"] != version or w["status"] == "finished"

            await wait_for(moved, seconds=30)
            continue
        command = dict(pick(v["legal"], rnd), command_id=f"h{step}", expected_version=v["version"])
        r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))
        assert r.status_code in (200, 409), r.text
    raise AssertionError("the game did not finish")


async def test_command_ids_out_of_shape_are_refused_alike_before_and_after_archiving(archiving):
    """Command ids are 1–128 printable ASCII characters: an empty one, a 10 kB one, one in Unicode, one with a NUL or a
    space are 400 before archiving and after (and a 10 kB one is not hashed into a key or compared against the log)."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(3))
    token, command, _ = sent[-1]
    odd = ["", "x" * 10_000, "x" * 129, "ключ-🎲", "c\u0000", "c 1", "c\u00a0"]
    probes = [("odd id", dict(command, command_id=cid), bearer(token)) for cid in odd]
    probes.append(("longest allowed id, unused", dict(command, command_id="~" * 128), bearer(token)))
    await finished_and_scored(api, game_id)
    live = await send_all(api, game_id, probes)
    assert [s for s, _ in live] == [400] * len(odd) + [409], live  # a well-formed id: the stale version speaks
    await archive(api, game_id)
    assert await send_all(api, game_id, probes) == live


async def test_an_id_refused_once_then_used_for_another_command_answers_with_the_accepted_one(archiving):
    """A player's id first sent with a command the rules refused (nothing appended, nothing recorded) and then with
    another that went through: the log holds one batch under the id; both before and after archiving, the accepted
    command's resend is its first answer and the refused one's body is 409 command_id_reused."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    v = await view(api, game_id, tokens[1])  # seat 1 plays first
    refused = {"type": "discard", "card": "no-such-card", "command_id": "twice"}
    r = await api.post(f"/games/{game_id}/commands", json=refused, headers=bearer(tokens[1]))
    assert r.status_code in (400, 422), r.text
    accepted = dict(pick(v["legal"], random.Random(1)), command_id="twice")
    first = await api.post(f"/games/{game_id}/commands", json=accepted, headers=bearer(tokens[1]))
    assert first.status_code == 200, first.text
    await play_with_ids(api, game_id, tokens, random.Random(4))
    await finished_and_scored(api, game_id)
    probes = [("accepted", accepted, bearer(tokens[1])), ("refused", refused, bearer(tokens[1]))]
    live = await send_all(api, game_id, probes)
    assert live[0][0] == 200 and _seqs(live[0][1]) == _seqs(first.json()), live[0]
    assert live[1][0] in (400, 409), live[1]
    await archive(api, game_id)
    assert await send_all(api, game_id, probes) == live


async def test_a_game_archived_while_a_resend_is_in_flight_still_answers_the_first_answer(archiving):
    """The archiver runs between a resend's steps: after the store answered that it has no record (the records went
    with the events) and after it answered with a record (the events then read from the archive)."""
    api = archiving
    store = api.app.ctx.store
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(8))
    await finished_and_scored(api, game_id)
    token, command, first = sent[len(sent) // 2]
    expected = answer_of(await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token)))
    assert expected[0] == 200 and _seqs(expected[1]) == _seqs(first)  # (the game over, its secrets are shown now)
    real = store.command_record
    calls = []

    async def archived_meanwhile(gid, key):
        record = await real(gid, key)
        if not calls:
            calls.append(record)
            await archive(api, game_id)
        return record  # the record read before the game was archived: its events are in the archive now

    store.command_record = archived_meanwhile
    try:
        got = answer_of(await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token)))
    finally:
        store.command_record = real
    assert calls and calls[0] is not None
    assert got == expected
    assert answer_of(await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))) == expected


async def test_an_archived_resend_by_an_outsider_folds_no_log(archiving, monkeypatch):
    """Anyone with any token (a guest of another game) may send a command to an archived game with the id of its last
    batch (a bot's id is predictable: ``bot:<game>:<version>``). Found by review: the lookup folded the archived log up
    to that batch on every such request, on the event loop (~2 ms for a 770-event game), before it found the caller
    was never at the table. A player no ``seat_taken`` of the log seated has nothing to find: no fold."""
    from service.rules.engine import Game

    api = archiving
    game_id = await finished_bot_game(api)
    await archive(api, game_id)
    _, _, events = await log_of(api, game_id)
    last = [e for e in events if e["command"] is not None][-1]
    outsider = await guest_elsewhere(api)
    await view(api, game_id)  # the game in the cache, as any read of it leaves it
    folded = []
    fold = Game.fold
    monkeypatch.setattr(Game, "fold", lambda self, envs: (folded.append(len(envs)), fold(self, envs))[1])
    body = dict(last["command"], command_id=last["command_id"])
    for _ in range(3):
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(outsider))
        assert r.status_code == 403, r.text
    assert folded == [], folded


@pytest.mark.parametrize("kind", ["missing", "cut_in_half", "another_game"])
async def test_a_resend_to_an_archived_game_whose_file_is_unreadable_is_503_and_appends_nothing(archiving, kind):
    """The resend lookup reads the archived log: a file missing, cut short or another game's is 503 (never a 500, a
    first answer made up, or a command decided on an empty game) for the sender's resend and for another command."""
    api = archiving
    game_id = await new_game(api, 2)
    tokens = await fill(api, game_id, 2)
    sent = await play_with_ids(api, game_id, tokens, random.Random(9))
    other = await finished_bot_game(api)
    await archive(api, game_id)
    await archive(api, other)
    if kind == "missing":
        os.remove(api.app.ctx.store.archive._path(game_id))
    else:
        await damage(api, kind, game_id, other)
    forget_reads(api)
    token, command, _ = sent[-1]
    for body in (command, dict(command, command_id="fresh-id"), {k: v for k, v in command.items() if k != "command_id"}):
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
        assert r.status_code == 503, (kind, body, r.status_code, r.text[:300])
    assert (await _meta(api, game_id))["version"] == str(sent[-1][2]["version"])


# --- rebuild: every kind of damage refused before anything is dropped -------------------------------


async def two_archived(api) -> tuple[str, str]:
    whole, hurt = await finished_bot_game(api), await finished_bot_game(api)
    for game_id in (whole, hurt):
        await archive(api, game_id)
    return whole, hurt


async def scored_at_final(store, game_id: str) -> bool:
    return (await read_scores(store, game_id))[1] == int((await store.meta(game_id))["version"])


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _export_lines(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        return gzip.decompress(f.read()).split(b"\n")


async def _older_export(api, game_id: str, seq: int) -> bytes:
    """The game's export as it was at ``seq`` (a backup taken mid-game): a valid export of the same game."""
    from service.events.export import dumps, load

    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    header, envelopes = load(r.content)
    cut = envelopes[:seq]
    return gzip.compress(dumps(msgspec.structs.replace(header, version=cut[-1].seq, head=cut[-1].hash, receipt=None), cut))


DAMAGE = ["empty", "garbage_gzip", "garbage_plain", "another_game", "directory", "cut_in_half", "older_version",
          "header_only", "lines_dropped"]


async def damage(api, kind: str, game_id: str, other: str) -> None:
    path = api.app.ctx.store.archive._path(game_id)
    if kind == "empty":
        _write(path, b"")
    elif kind == "garbage_gzip":
        _write(path, gzip.compress(os.urandom(4096)))
    elif kind == "garbage_plain":
        _write(path, b"\x00not gzip at all\xff" * 100)
    elif kind == "another_game":
        shutil.copy(api.app.ctx.store.archive._path(other), path)
    elif kind == "directory":
        os.remove(path)
        os.mkdir(path)
    elif kind == "cut_in_half":
        with open(path, "rb") as f:
            data = f.read()
        _write(path, data[: len(data) // 2])
    elif kind == "older_version":  # a valid export of the same game, from a backup taken before it ended
        _write(path, await _older_export(api, game_id, 20))
    elif kind == "header_only":  # the right header line, every envelope lost (re-gzipped: the gzip is whole)
        _write(path, gzip.compress(_export_lines(path)[0] + b"\n"))
    elif kind == "lines_dropped":  # the right header, the first and last envelopes; some in between lost
        lines = [line for line in _export_lines(path) if line.strip()]
        _write(path, gzip.compress(b"\n".join([lines[0], lines[1], *lines[len(lines) // 2:]]) + b"\n"))
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", DAMAGE)
async def test_a_rebuild_meeting_any_damaged_archived_file_refuses_before_dropping_anything(archiving, kind):
    """Whatever the damage — an older export of the game, a header with no events, events dropped, another game's
    file, garbage — the rebuild refuses before it drops a read model: it never stops half way, nor replays less."""
    api, store = archiving, archiving.app.ctx.store
    whole, hurt = await two_archived(api)
    await damage(api, kind, hurt, whole)
    forget_reads(api)
    try:
        await rebuild(store)
        outcome = "went through"
    except (RebuildRefused, ArchiveError) as e:
        outcome = f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - anything else is a finding too
        outcome = f"{type(e).__name__} (neither RebuildRefused nor ArchiveError): {e}"
    scored = (await scored_at_final(store, whole), await scored_at_final(store, hurt))
    assert outcome.startswith(("RebuildRefused", "ArchiveError")) and scored == (True, True), (kind, outcome[:300], scored)


async def test_a_rebuild_whose_archive_cannot_be_read_at_all_raises_before_dropping_anything(archiving, monkeypatch):
    """Permission denied (chmod 000 does not deny root, so the read is made to fail as it would): ArchiveError before
    anything is dropped."""
    api, store = archiving, archiving.app.ctx.store
    whole, hurt = await two_archived(api)
    forget_reads(api)
    path = store.archive._path(hurt)
    real = type(store.archive).read

    def denied(self, game_id):
        if game_id == hurt:
            try:
                raise PermissionError(13, "Permission denied", path)
            except PermissionError as e:
                raise ArchiveError(f"the archive {self.root} cannot be read ({e})") from e
        return real(self, game_id)

    monkeypatch.setattr(type(store.archive), "read", denied)
    with pytest.raises(ArchiveError, match="Permission denied"):
        await rebuild(store)
    assert await scored_at_final(store, whole) and await scored_at_final(store, hurt)


async def test_reads_of_an_archived_game_whose_file_lost_envelopes_are_unavailable_not_a_shorter_game(archiving):
    """A file with the right header and fewer envelopes (re-gzipped, so the gzip is whole) must read as damaged
    (503), never as a game at an earlier version."""
    api = archiving
    whole, hurt = await two_archived(api)
    version = int((await _meta(api, hurt))["version"])
    with open(api.app.ctx.store.archive._path(hurt), "rb") as f:
        kept = f.read()
    got = {}
    for kind in ("header_only", "lines_dropped"):
        await damage(api, kind, hurt, whole)
        forget_reads(api)
        r = await api.get(f"/games/{hurt}")
        got[kind] = (r.status_code, r.json().get("status"), r.json().get("version"))
        _write(api.app.ctx.store.archive._path(hurt), kept)  # whole again, for the next kind of damage
    assert {k: v[0] for k, v in got.items()} == {"header_only": 503, "lines_dropped": 503}, (got, version)


# --- the rebuild CLI ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cut_in_half", "older_version"])
async def test_the_rebuild_command_refuses_a_damaged_archive_with_exit_status_2(tmp_path, kind):
    """``python -m service rebuild`` on the embedded store (the service stopped): a damaged archived file is refused —
    exit status 2, "rebuild refused", no traceback — and a later rebuild with the file restored goes through."""
    settings = make_settings("embedded", tmp_path, archive_after_ms=1, runner_interval_ms=50)
    async with served(settings) as api:
        api.app.ctx.runner.archiver.after_ms = 3_600_000
        whole, hurt = await two_archived(api)
        path = api.app.ctx.store.archive._path(hurt)
        with open(path, "rb") as f:
            kept = f.read()
        await damage(api, kind, hurt, whole)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("FREE_PARKING_")}
    env["PYTHONPATH"] = ROOT
    args = [sys.executable, "-m", "service", "rebuild", "--data", str(settings.data_dir)]
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # noqa: ASYNC221
    assert (done.returncode, "rebuild refused" in done.stdout, "Traceback" in done.stderr) == (2, True, False), (
        done.returncode, done.stdout[-600:], done.stderr[-1200:])
    _write(path, kept)
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # noqa: ASYNC221
    assert done.returncode == 0, (done.stdout[-600:], done.stderr[-1200:])
