"""The load generator: a separate process, a bounded asyncio HTTP/1.1 client on keep-alive connections.

``python -m bench.loadgen --url http://127.0.0.1:P --mode game`` plays ``--games`` card games at once, one
connection per game: every seat is a guest whose client chooses each command from the ``legal`` list of its own
view, sent with ``expected_version``. A seat refreshes its view (``GET /games/{id}``) only when the view it holds
is not the game's latest — so a command usually costs one request, and a turn change two. A game that ends is
replaced by a new one (its creation and seating are counted as other requests, not as commands).

``--mode bare`` sends the same mix to the bare Sanic endpoint (``bench.bare``): per command, a view ``GET`` with
the probability the game run measured (``--get-ratio``), then a command ``POST`` of a game's size; both answers
decoded as in game mode. Only requests that start after ``--warmup`` seconds and finish before its end count.

``--keyed``: every seat joins with a key of its own and signs each command (docs/signed-commands.md), as a page does:
what signed commands cost the service, measured against the same load unkeyed.

It prints one JSON object: commands, other requests, seconds, commands/s, the command latencies' percentiles.
The client is deliberately lean (no httpx: its per-request cost is several times this one's) so that, on a small
machine, as much CPU as possible is left to the server under test.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from typing import Any

import msgspec

_json_decode = msgspec.json.decode
_json_encode = msgspec.json.encode


class HttpError(Exception):
    pass


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request at a time; answers need a Content-Length."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.closed = False

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        _, proto = await asyncio.get_running_loop().create_connection(cls, host, port)
        return proto

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(HttpError(f"connection lost: {exc}"))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._try_parse()

    def _try_parse(self) -> None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buf[:end]).lower()
        i = head.find(b"content-length:")
        if i < 0:
            if self.waiter and not self.waiter.done():
                self.waiter.set_exception(HttpError("an answer without content-length"))
            return
        j = head.find(b"\r\n", i)
        length = int(head[i + 15 : j if j >= 0 else None])
        if len(self.buf) < end + 4 + length:
            return
        status = int(head[9:12])
        body = bytes(self.buf[end + 4 : end + 4 + length])
        del self.buf[: end + 4 + length]
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((status, body))

    async def request(self, method: str, path: str, body: bytes = b"", token: str | None = None) -> tuple[int, bytes]:
        if self.closed or self.transport is None:
            raise HttpError("connection closed")
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        length = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if body or method != "GET" else ""
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n{auth}{length}\r\n"
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(head.encode() + body)
        return await self.waiter

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


# Scoring kinds more often, so games move on (the weights of the HTTP play test).
WEIGHTS = {"free_parking": 8, "run_errand": 8, "feed_meter": 4, "officer_jones": 4, "talk_out": 4, "end_turn": 3,
           "time_expires": 1, "draw_second_chance": 1, "swap_three": 0.5, "discard": 0.5}


def pick(legal: list[dict], rnd: random.Random) -> dict:
    kinds = sorted({c["type"] for c in legal})
    kind = rnd.choices(kinds, [WEIGHTS.get(k, 1) for k in kinds])[0]
    return rnd.choice([c for c in legal if c["type"] == kind])


class Tally:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end
        self.commands = 0  # command POSTs answered (200 or 409) inside the window
        self.accepted = 0
        self.conflicts = 0
        self.views = 0  # view GETs inside the window
        self.other = 0  # creations and seatings inside the window
        self.errors: dict[str, int] = {}
        self.latencies: list[float] = []
        self.games_finished = 0
        self.all = 0  # every request sent, setup and warmup included (for the servers' CPU time per request)

    def counts(self, t0: float, t1: float) -> bool:
        return t0 >= self.start and t1 <= self.end

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


class Signer:
    """A seat's own Ed25519 key: signs a command at the version it is sent at, with a command id of its own."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self.key = Ed25519PrivateKey.generate()
        self.public_key = self.key.public_key().public_bytes_raw().hex()
        self.n = 0

    def signed(self, game_id: str, command: dict, version: int) -> dict:
        from service.events.command_sig import signed_command
        from service.events.envelope import canonical

        self.n += 1
        command_id = f"k{self.n}"
        sig = self.key.sign(signed_command(game_id, version, command_id, canonical(command))).hex()
        return {**command, "expected_version": version, "command_id": command_id, "sig": sig}


class GameClient:
    """One game's seats, played over one connection; ``keyed``: each seat signs its commands with a key of its own."""

    def __init__(self, conn: Connection, tally: Tally, rnd: random.Random, seats: int, keyed: bool = False) -> None:
        self.c, self.t, self.rnd, self.seats, self.keyed = conn, tally, rnd, seats, keyed
        self.signers: dict[str, Signer] = {}  # by token: a key is its player's, wherever a trade of places seats them

    async def call(self, method: str, path: str, body: Any = None, token: str | None = None, kind: str = "other") -> tuple[int, Any]:
        raw = b"" if body is None else _json_encode(body)
        t0 = time.perf_counter()
        status, answer = await self.c.request(method, path, raw, token)
        t1 = time.perf_counter()
        self.t.all += 1
        if self.t.counts(t0, t1):
            if kind == "command":
                self.t.commands += 1
                self.t.latencies.append(t1 - t0)
                if status == 200:
                    self.t.accepted += 1
                elif status == 409:
                    self.t.conflicts += 1
            elif kind == "view":
                self.t.views += 1
            else:
                self.t.other += 1
            if status >= 500 or (status >= 400 and status != 409):
                self.t.error(f"{method} {path.split('/')[-1] if kind == 'command' else kind} {status}")
        return status, _json_decode(answer) if answer else None

    async def new_game(self) -> tuple[str, list[str]]:
        status, g = await self.call("POST", "/games", {"kind": "free-parking", "seats": self.seats})
        if status != 201:
            raise HttpError(f"create: {status} {g}")
        tokens = []
        for i in range(self.seats):
            signer = Signer() if self.keyed else None
            join = {"name": f"Bot {i}", **({"public_key": signer.public_key} if signer else {})}
            status, a = await self.call("POST", f"/games/{g['game_id']}/seats", join)
            if status != 201:
                raise HttpError(f"seat: {status} {a}")
            tokens.append(a["token"])
            if signer is not None:
                self.signers[a["token"]] = signer
        return g["game_id"], tokens

    async def play(self, stop_at: float) -> None:
        while time.perf_counter() < stop_at:
            game_id, tokens = await self.new_game()
            await self.play_one(game_id, tokens, stop_at)

    async def view(self, game_id: str, token: str) -> dict:
        status, v = await self.call("GET", f"/games/{game_id}", token=token, kind="view")
        if status != 200:
            raise HttpError(f"view: {status} {v}")
        return v

    async def play_one(self, game_id: str, tokens: list[str], stop_at: float) -> None:
        path = f"/games/{game_id}/commands"
        by_seat = dict(enumerate(tokens))  # a token is a player's: after a trade of places, seats move
        held: dict[int, dict] = {}  # the latest view each seat holds
        latest = await self.view(game_id, tokens[0])
        held[latest["seat"]] = latest
        while time.perf_counter() < stop_at:
            if latest["status"] == "finished":
                self.t.games_finished += 1
                return
            actor = latest["pending"]["seat"] if latest["pending"] else latest["turn"]
            v = held.get(actor)
            if v is None or v["version"] != latest["version"]:
                v = held[actor] = await self.view(game_id, by_seat[actor])
                latest = v
            if not v["legal"]:
                raise HttpError(f"seat {actor} has nothing legal at version {v['version']}")
            signer = self.signers.get(by_seat[actor])
            chosen = pick(v["legal"], self.rnd)
            command = signer.signed(game_id, chosen, v["version"]) if signer else dict(chosen, expected_version=v["version"])
            status, answer = await self.call("POST", path, command, by_seat[actor], kind="command")
            if status == 200:
                if any(e["type"] == "places_traded" for e in answer["events"]):
                    held.clear()
                    views = [await self.view(game_id, t) for t in tokens]
                    by_seat = {w["seat"]: t for w, t in zip(views, tokens, strict=True)}
                    held = {w["seat"]: w for w in views}
                    latest = max(views, key=lambda w: w["version"])
                else:
                    latest = held[actor] = answer["view"]
            else:
                latest = held[actor] = await self.view(game_id, by_seat[actor])


class BareClient:
    """The same request mix against ``bench.bare``: per command, a view GET with probability ``get_ratio``."""

    def __init__(self, conn: Connection, tally: Tally, rnd: random.Random, get_ratio: float, command: dict, token: str) -> None:
        self.c, self.t, self.rnd, self.get_ratio, self.command, self.token = conn, tally, rnd, get_ratio, command, token

    async def play(self, stop_at: float) -> None:
        game = GameClient(self.c, self.t, self.rnd, 0)
        version = 1
        while time.perf_counter() < stop_at:
            if self.rnd.random() < self.get_ratio:
                v = (await game.call("GET", "/games/g_bare", token=self.token, kind="view"))[1]
                version = v["version"]
            body = dict(self.command, expected_version=version)
            status, answer = await game.call("POST", "/games/g_bare/commands", body, self.token, kind="command")
            version = answer["version"]


def _mark(marker: str) -> None:
    sys.stdout.write(marker + "\n")
    sys.stdout.flush()


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


async def run(args: argparse.Namespace) -> dict:
    host, _, port = args.url.removeprefix("http://").partition(":")
    conns = [await Connection.open(host, int(port)) for _ in range(args.games)]
    rnd = random.Random(args.seed)
    # the window is set once every game is set up (game mode creates its games first, untimed)
    tally = Tally(float("inf"), float("inf"))
    if args.mode == "game":
        clients = [GameClient(c, tally, random.Random(rnd.random()), args.seats, args.keyed) for c in conns]
        first = await asyncio.gather(*(cl.new_game() for cl in clients))
    else:
        command = {"type": "discard", "card": "M40-2"}
        clients = [BareClient(c, tally, random.Random(rnd.random()), args.get_ratio, command, "fpt_" + "x" * 43) for c in conns]
        first = [None] * len(clients)
    now = time.perf_counter()
    tally.start, tally.end = now + args.warmup, now + args.warmup + args.duration
    stop_at = tally.end + 0.05
    # markers on stdout at the window's start and end: the caller samples the servers' CPU time then
    loop = asyncio.get_running_loop()
    for at, marker in ((tally.start, "window-start"), (tally.end, "window-end")):
        loop.call_later(at - now, _mark, marker)

    async def drive(cl: Any, game: tuple[str, list[str]] | None) -> None:
        try:
            if game is not None:
                await cl.play_one(game[0], game[1], stop_at)
            await cl.play(stop_at)
        except (HttpError, KeyError, TypeError, OSError) as e:
            tally.error(f"client stopped: {type(e).__name__}: {str(e)[:120]}")

    cpu0 = time.process_time()
    await asyncio.gather(*(drive(cl, g) for cl, g in zip(clients, first, strict=True)))
    cpu = time.process_time() - cpu0
    for c in conns:
        c.close()
    lat = sorted(tally.latencies)
    seconds = args.duration
    return {
        "mode": args.mode,
        "games": args.games,
        "seconds": seconds,
        "commands": tally.commands,
        "accepted": tally.accepted,
        "conflicts": tally.conflicts,
        "views": tally.views,
        "other": tally.other,
        "games_finished": tally.games_finished,
        "commands_per_s": tally.commands / seconds,
        "requests_per_s": (tally.commands + tally.views + tally.other) / seconds,
        "get_ratio": tally.views / tally.commands if tally.commands else 0.0,
        "p50_ms": percentile(lat, 0.50) * 1000,
        "p99_ms": percentile(lat, 0.99) * 1000,
        "max_ms": (lat[-1] * 1000) if lat else float("nan"),
        "client_cpu_s": cpu,
        "all_requests": tally.all,
        "errors": tally.errors,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--mode", choices=("game", "bare"), default="game")
    p.add_argument("--games", type=int, default=64, help="concurrent games (one connection each)")
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument("--get-ratio", type=float, default=0.5, help="bare mode: view GETs per command")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keyed", action="store_true", help="game mode: every seat signs its commands with a key of its own")
    args = p.parse_args(argv)
    try:
        import uvloop

        result = uvloop.run(run(args))
    except ImportError:
        result = asyncio.run(run(args))
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
