"""What every drill needs: games through the HTTP API, players that keep a ledger of every answer, and the checks
run on the logs afterwards.

A **ledger** records, per command id, every answer a client got. An answer ``200`` is an *acknowledgement*: its
events (seq → hash) must be in the game's log, byte for byte, whatever happened afterwards. A ``409``/``422`` is a
refusal: that command id must appear nowhere in the log. A ``503`` or a broken connection leaves the outcome
unknown: the client sends the very same command again (same ``command_id``, same body), as API.md tells it to,
until it hears an answer; the log then holds it at most once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from replays.verify import verify
from service.events.envelope import NULL, Envelope
from service.events.export import dumps, load
from service.store.keys import partition
from service.store.redis_store import RedisStore
from service.rules.engine import Game, export_header, rules_for
from tests.api.helpers import pick, playable

ADMIN = "drill-admin"
NAMESPACE = "drill"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
UNKNOWN = (httpx.TransportError,)  # the request may or may not have been carried out


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def service_settings(**overrides: Any) -> dict[str, Any]:
    """The drills' service: our admin token and namespace, a brisk runner and projector, bots without delay, no
    rate limits (a drill creates its games as fast as it can, from one address) and no idle close."""
    return {"admin_token": ADMIN, "namespace": NAMESPACE, "runner_interval_ms": 100, "projector_poll_ms": 100,
            "bot_delay_ms": 0, "human_pace_ms": 0, "human_chance_ms": 0, "rate_limits": False, "idle_close_ms": 0, **overrides}  # fmt: skip


async def wait_until(check: Callable[[], Awaitable[bool]], seconds: float, what: str, every: float = 0.05) -> float:
    """Poll ``check`` until it holds; fails naming ``what`` after ``seconds``. Answers the seconds it took."""
    started = time.monotonic()
    while True:
        try:
            if await check():
                return time.monotonic() - started
        except UNKNOWN:
            pass
        except httpx.HTTPStatusError as e:  # the store not back yet; anything else is a failure
            if e.response.status_code != 503:
                raise
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s: {what}")
        await asyncio.sleep(every)


@contextlib.asynccontextmanager
async def background(stop: asyncio.Event):
    """``tasks(coroutines)`` starts them; at the end (a failure, too) ``stop`` is set and any left are cancelled."""
    started: list[asyncio.Task] = []

    def tasks(coroutines) -> list[asyncio.Task]:
        new = [asyncio.create_task(c) for c in coroutines]
        started.extend(new)
        return new

    try:
        yield tasks
    finally:
        stop.set()
        for task in started:
            if not task.done():
                task.cancel()
        await asyncio.gather(*started, return_exceptions=True)


# --- games ---------------------------------------------------------------------------------------------------


async def bot_games(api: httpx.AsyncClient, count: int, seats: int = 3, bot: str = "greedy") -> list[str]:
    """``count`` games whose every seat is a server bot: the service plays them by itself."""
    out = []
    for _ in range(count):
        r = await api.post("/games", json={"kind": "free-parking", "seats": seats})
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        for _ in range(seats):
            r = await api.post(f"/games/{game_id}/seats", json={"bot": bot})
            assert r.status_code == 201, r.text
        out.append(game_id)
    return out


async def guest_games(api: httpx.AsyncClient, count: int, seats: int = 2) -> list[tuple[str, list[str]]]:
    """``count`` games of guests: ``(game_id, tokens)``."""
    out = []
    for _ in range(count):
        r = await api.post("/games", json={"kind": "free-parking", "seats": seats})
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        tokens = []
        for i in range(seats):
            r = await api.post(f"/games/{game_id}/seats", json={"name": f"Guest {i}"})
            assert r.status_code == 201, r.text
            tokens.append(r.json()["token"])
        out.append((game_id, tokens))
    return out


async def under_load(
    api: httpx.AsyncClient, start: Callable, ledger: Ledger, stop: asyncio.Event, *, bots: int, humans: int, tag: str,
) -> tuple[list[str], list[tuple[str, list[str]]], list[asyncio.Task]]:  # fmt: skip
    """A drill's load: ``bots`` games of three server bots, watched as a spectator does, and ``humans`` games of two
    guests played over HTTP with ``ledger``, started with ``start`` (``background``'s): the games and the tasks."""
    bot_ids = await bot_games(api, bots, seats=3)
    guests = await guest_games(api, humans, seats=2)
    tasks = start([play(api, g, t, ledger, random.Random(i), stop, tag=f"{tag}-{i}", patience=40)
                   for i, (g, t) in enumerate(guests)] + [watch(api, bot_ids, ledger, stop)])  # fmt: skip
    return bot_ids, guests, tasks


async def versions(api: httpx.AsyncClient, games: list[str]) -> dict[str, tuple[int, str]]:
    """Each game's ``(version, status)`` as the service sees it now."""
    out = {}
    for game_id in games:
        r = await api.get(f"/games/{game_id}")
        r.raise_for_status()
        out[game_id] = (r.json()["version"], r.json()["status"])
    return out


# --- the ledger ----------------------------------------------------------------------------------------------


@dataclass
class Ledger:
    """Every answer every client got, by command id; the acknowledged events, by game."""

    acked: dict[str, dict[int, str]] = field(default_factory=lambda: defaultdict(dict))  # game → seq → hash
    ack_times: list[tuple[float, int]] = field(default_factory=list)  # (monotonic time, events) of each ack
    answers: dict[str, list[tuple[int, Any]]] = field(default_factory=lambda: defaultdict(list))  # id → answers
    game_of: dict[str, str] = field(default_factory=dict)  # command id → game
    unknown: set[str] = field(default_factory=set)  # command ids never answered (given up on)
    statuses: Counter = field(default_factory=Counter)  # "200", "409 version_conflict", "503", "transport"…
    in_flight: dict[str, float] = field(default_factory=dict)  # command id → when its POST was sent
    cut: set[str] = field(default_factory=set)  # command ids a broken connection left without an answer once
    sent: dict[str, tuple[str, str, dict]] = field(default_factory=dict)  # command id → (game, token, body), to resend

    def record(self, game_id: str, command_id: str, r: httpx.Response) -> None:
        self.game_of[command_id] = game_id
        body = r.json()
        if r.status_code == 200:
            self.statuses["200"] += 1
            events = [(e["seq"], e["hash"]) for e in body["events"]]
            for seq, digest in events:
                known = self.acked[game_id].setdefault(seq, digest)
                assert known == digest, f"{game_id}: two acknowledged events at seq {seq}"
            self.ack_times.append((time.monotonic(), len(events)))
            self.answers[command_id].append((200, events))
        else:
            code = body["error"]["code"]
            self.statuses[f"{r.status_code} {code}"] += 1
            self.answers[command_id].append((r.status_code, code))

    def ack_events(self, game_id: str, envelopes: list[dict]) -> None:
        """Events the service showed a reader (``GET /events``): acknowledged as much as a command's answer."""
        for e in envelopes:
            known = self.acked[game_id].setdefault(e["seq"], e["hash"])
            assert known == e["hash"], f"{game_id}: the service showed two events at seq {e['seq']}"
        self.ack_times.append((time.monotonic(), len(envelopes)))

    @property
    def events_acked(self) -> int:
        return sum(len(seqs) for seqs in self.acked.values())

    def lost(self, game_id: str, envelopes: list[Envelope]) -> list[int]:
        """Acknowledged seqs the log does not hold (or holds with another hash)."""
        stored = {e.seq: e.hash for e in envelopes}
        return sorted(seq for seq, digest in self.acked.get(game_id, {}).items() if stored.get(seq) != digest)

    def acked_within(self, seconds: float, before: float) -> int:
        """Events acknowledged to a client in the ``seconds`` before the moment ``before``."""
        return sum(n for at, n in self.ack_times if before - seconds <= at <= before)

    async def send(
        self, api: httpx.AsyncClient, game_id: str, token: str, body: dict, *, patience: float = 30.0
    ) -> httpx.Response | None:
        """POST a command; while the outcome is unknown (503, a broken connection), send it again — the same
        command id and body — for up to ``patience`` seconds. The final answer, or ``None``."""
        command_id = body["command_id"]
        self.sent[command_id] = (game_id, token, body)
        deadline = time.monotonic() + patience
        while True:
            self.in_flight[command_id] = time.monotonic()
            try:
                r = await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
            except UNKNOWN:
                self.statuses["transport"] += 1
                self.cut.add(command_id)
            else:
                if r.status_code != 503:
                    self.in_flight.pop(command_id, None)
                    self.record(game_id, command_id, r)
                    return r
                self.statuses[f"503 {r.json()['error']['code']}"] += 1
            self.in_flight.pop(command_id, None)
            if time.monotonic() > deadline:
                self.game_of[command_id] = game_id
                self.unknown.add(command_id)
                return None
            await asyncio.sleep(0.05)


async def resend_unknown(api: httpx.AsyncClient, ledger: Ledger, patience: float = 30.0) -> list[httpx.Response | None]:
    """Send every command left unknown (never answered but 503 or a broken connection) again, the very same, as a
    client that kept it does: the answers."""
    answers = []
    for command_id in sorted(ledger.unknown):
        ledger.unknown.discard(command_id)
        game_id, token, body = ledger.sent[command_id]
        answers.append(await ledger.send(api, game_id, token, body, patience=patience))
    return answers


async def _views(api: httpx.AsyncClient, game_id: str, tokens: list[str]) -> list[dict] | None:
    try:
        answers = await asyncio.gather(*(api.get(f"/games/{game_id}", headers=bearer(t)) for t in tokens))
    except UNKNOWN:
        return None
    if any(r.status_code != 200 for r in answers):
        assert all(r.status_code == 503 for r in answers if r.status_code != 200), [r.text for r in answers]
        return None
    return [r.json() for r in answers]


def actor(views: list[dict]) -> int | None:
    """Which of ``views`` should act: the seat an answer is awaited from, else the seat whose turn it is, else any
    seat that may (an interrupt)."""
    able = [i for i, v in enumerate(views) if playable(v["legal"])]
    for i in able:
        if views[i]["pending"] and views[i]["pending"]["seat"] == views[i]["seat"]:
            return i
    for i in able:
        if views[i]["turn"] == views[i]["seat"] and not views[i]["pending"]:
            return i
    return able[0] if able else None


async def play(
    api: httpx.AsyncClient,
    game_id: str,
    tokens: list[str],
    ledger: Ledger,
    rnd: random.Random,
    stop: asyncio.Event,
    *,
    tag: str,
    patience: float = 30.0,
    poster: httpx.AsyncClient | None = None,
    count: int | None = None,
) -> int:
    """Play ``game_id`` from its seats' ``legal`` commands, each with ``expected_version`` and a command id of its
    own, until the game ends, ``stop`` is set or ``count`` commands were sent; answers the commands sent. Commands go
    through ``poster`` (a client of their own, with connections of their own) if given."""
    sent = 0
    while not stop.is_set() and (count is None or sent < count):
        views = await _views(api, game_id, tokens)
        if views is None:
            await asyncio.sleep(0.05)
            continue
        if views[0]["status"] == "finished":
            return sent
        i = actor(views)
        if i is None:
            await asyncio.sleep(0.02)
            continue
        v = views[i]
        body = dict(pick(v["legal"], rnd), expected_version=v["version"], command_id=f"{tag}-{sent}")
        sent += 1
        r = await ledger.send(poster or api, game_id, tokens[i], body, patience=patience)
        if r is not None:
            assert r.status_code in (200, 409), f"{body} → {r.status_code} {r.text}"
    return sent


async def watch(api: httpx.AsyncClient, games: list[str], ledger: Ledger, stop: asyncio.Event, every: float = 0.05) -> None:
    """Read every game's new events as a spectator, again and again: what the service shows is acknowledged."""
    seen = dict.fromkeys(games, 0)
    while not stop.is_set():
        for game_id in games:
            try:
                r = await api.get(f"/games/{game_id}/events", params={"after": seen[game_id], "limit": 5000})
            except UNKNOWN:
                continue
            if r.status_code == 200 and r.json()["events"]:
                ledger.ack_events(game_id, r.json()["events"])
                seen[game_id] = r.json()["events"][-1]["seq"]
        await asyncio.sleep(every)


# --- the logs, read back -------------------------------------------------------------------------------------


@dataclass
class Log:
    game_id: str
    envelopes: list[Envelope]
    pointers: list[tuple[int, int]]  # the partition log's (from, to) of each append of this game, in order

    @property
    def batches(self) -> list[list[Envelope]]:
        return [self.envelopes[first - 1 : last] for first, last in self.pointers]


async def read_log(store: RedisStore, game_id: str) -> Log:
    """The game's log as Redis holds it (read once the service is stopped: nothing moves), checked whole:

    * it verifies (``replays.verify``, on the export the admin would get) — the hash chain, every secret against its
      digest, and every command re-decided from the seed yields exactly the recorded events: a batch cut short, or
      one event too many, would not;
    * the game's metadata (version, head) agrees with the stream;
    * the partition log's pointers cover seq 1…version in order, one per append, without gap or overlap, and each
      appended batch is one command's: its command stored with its first event and with no other.
    """
    meta = await store.meta(game_id)
    assert meta is not None, game_id
    envelopes = await store.read(game_id)
    game = Game.new(meta["kind"], game_id, msgspec.json.decode(meta["config"], type=rules_for(meta["kind"]).CONFIG),
                    bytes.fromhex(meta["seed"]))  # fmt: skip
    game.fold(envelopes)
    header, exported = load(dumps(export_header(game, with_seed=True), envelopes))
    verdict = verify(header, exported)
    assert verdict.ok, (game_id, verdict)
    assert verdict.redecided and verdict.events == len(envelopes) and exported == envelopes
    assert int(meta["version"]) == len(envelopes) and meta["head"] == envelopes[-1].hash, (game_id, meta, len(envelopes))
    pointers = []
    for _, fields in await store.r.xrange(store.keys.log(partition(game_id)), "-", "+"):
        if fields[b"game"].decode() == game_id:
            pointers.append((int(fields[b"from"]), int(fields[b"to"])))
    expected_from = 1
    for first, last in pointers:
        assert first == expected_from and last >= first, (game_id, pointers)
        expected_from = last + 1
    assert expected_from - 1 == len(envelopes), (game_id, pointers[-3:], len(envelopes))
    log = Log(game_id, envelopes, pointers)
    for batch in log.batches:
        assert batch[0].command != NULL, (game_id, batch[0].seq)
        assert all(e.command == NULL and e.command_id is None for e in batch[1:]), (game_id, batch[0].seq)
    return log


async def read_logs(url: str, games: list[str], *, cluster: bool = False) -> dict[str, Log]:
    """``read_log`` of each game, on the Redis at ``url`` (a node of a Redis Cluster, with ``cluster``)."""
    store = RedisStore.from_url(url, namespace=NAMESPACE, cluster=cluster)
    try:
        return {g: await read_log(store, g) for g in games}
    finally:
        await store.close()


def check_ledger(ledger: Ledger, logs: dict[str, Log], *, exact: bool = True, lossy: bool = False) -> dict[str, int]:
    """Every acknowledged event is in its log; each command id of ours is in a log at most once — exactly once,
    where the command was answered 200, with the answered events; never, where it was refused. Answers counts.

    ``lossy``: the server was allowed to lose acknowledged events (to be measured, not refused): then commands
    answered 200 may be missing, and are counted."""
    for game_id, log in logs.items():
        assert lossy or not ledger.lost(game_id, log.envelopes), (game_id, ledger.lost(game_id, log.envelopes))
    where: dict[str, list[tuple[str, list[tuple[int, str]]]]] = defaultdict(list)
    for game_id, log in logs.items():
        for batch in log.batches:
            if batch[0].command_id is not None:
                where[batch[0].command_id].append((game_id, [(e.seq, e.hash) for e in batch]))
    counts = Counter()
    for command_id, answers in ledger.answers.items():
        found = where.get(command_id, [])
        assert len(found) <= 1, f"command {command_id} appended {len(found)} times"
        accepted = [events for status, events in answers if status == 200]
        if accepted and lossy and not found:
            counts["accepted, lost"] += 1
        elif accepted:
            assert len(found) == 1, f"command {command_id} was answered 200 but is not in the log"
            game_id, events = found[0]
            assert game_id == ledger.game_of[command_id]
            assert all(a == events for a in accepted), f"command {command_id}: answers differ from the log"
            counts["accepted"] += 1
            counts["repeated"] += len(accepted) - 1
        elif command_id not in ledger.unknown:
            assert not found, f"command {command_id} was refused {answers} but appended"
            counts["refused"] += 1
        else:
            counts["unknown, appended" if found else "unknown, not appended"] += 1
    if exact:  # nothing of ours is in a log that no client sent
        ours = {c for c in where if not c.startswith(("timeout:", "bot:"))}
        assert ours <= set(ledger.answers) | ledger.unknown, ours - set(ledger.answers) - ledger.unknown
    return dict(counts)
