"""The client's one core, written once for ``Client`` (sync) and ``AsyncClient``: each operation is a generator that
yields the ``Call`` it needs made and is sent back the ``httpx.Response``; the two clients only carry calls out
(``client.py``: with retries, each in its own way of waiting). Building requests, reading answers, checking and
signing commands and keeping receipts all live here.
"""

from __future__ import annotations

import inspect
import secrets
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import msgspec

from . import commands
from .errors import ApiError
from .models import (
    CommandAnswer,
    EventsPage,
    GameCreated,
    GameRatings,
    GameSummary,
    PlayerCreated,
    PlayerInfo,
    Queued,
    QueueStatus,
    Ratings,
    SeatTaken,
    View,
    view_of,
)
from .receipts import Receipts
from .retry import RetryPolicy
from .signing import PlayerKey

T = TypeVar("T")


@dataclass
class Call:
    """One HTTP request an operation needs: ``token`` authorises it (``None``: none sent); ``idempotent`` lets a
    dropped connection be retried (reads, and commands, which carry their id)."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] | None = None
    token: str | None = None
    idempotent: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    def request_headers(self) -> dict[str, str]:
        auth = {"authorization": f"Bearer {self.token}"} if self.token else {}
        return {**auth, **self.headers}


Op = Generator[Call, httpx.Response, T]
"""An operation: yields calls, gets their answers, returns its result."""


def error_of(response: httpx.Response) -> ApiError:
    """The ``ApiError`` of an error answer, from its body's ``{"error": {...}}`` (or its text when it has none)."""
    try:
        body = response.json()["error"]
        code, message, detail = body["code"], body["message"], body.get("detail") or {}
    except (ValueError, KeyError, TypeError):
        code, message, detail = f"http_{response.status_code}", response.text[:500], {}
    return ApiError(response.status_code, code, message, detail, dict(response.headers))


def ok(response: httpx.Response) -> httpx.Response:
    if response.status_code >= 400:
        raise error_of(response)
    return response


def decoded(response: httpx.Response, into: type[T]) -> T:
    """The body of a successful answer as ``into`` (unknown fields ignored); an error answer raises ``ApiError``."""
    return msgspec.json.decode(ok(response).content, type=into)


def answer_of(data: dict[str, Any]) -> CommandAnswer:
    answer = msgspec.convert(data, CommandAnswer)
    answer.view = view_of(data["view"])
    return answer


class Core:
    """The state a client keeps — its player's token, per-game seat tokens, key and receipts — and every operation.
    ``token``: a registered player's (``register`` sets it); ``key``: the player's own, which keys their seats and
    signs their commands (``None``: play unkeyed)."""

    def __init__(self, *, token: str | None = None, key: PlayerKey | None = None, receipts: Receipts | None = None,
                 retry: RetryPolicy | None = None) -> None:
        self.token, self.key = token, key
        self.player_id: str | None = None
        self.receipts = receipts if receipts is not None else Receipts()
        self.retry = retry or RetryPolicy()
        self.registered_key: str | None = None
        """The key the player registered with: every seat they take is keyed with it, unless a join names another."""
        self.seat_tokens: dict[str, str] = {}
        """A seat's token per game where it is not the player's own (a guest's seat)."""
        self._queue_seed: str | None = None
        self._queue_key: str | None = None

    def token_for(self, game_id: str) -> str | None:
        return self.seat_tokens.get(game_id, self.token)

    # --- players -------------------------------------------------------------------------------------------------

    def register(self, name: str, *, keyed: bool = True, account: str | None = None) -> Op[PlayerCreated]:
        """Register a player (``POST /players``) and act as them from now on; ``keyed``: with the client's key, so
        every seat they take is keyed with it; ``account``: ``"bot"`` registers a bot account (a program: shown as a
        bot, and the server's bots do not wait a person's pace for it; docs/bots.md), the default a person."""
        body: dict[str, Any] = {"name": name, **({"account": account} if account is not None else {})}
        if keyed and self.key is not None:
            body["public_key"] = self.key.public_key
        created = decoded((yield Call("POST", "/players", json=body)), PlayerCreated)
        self.token, self.player_id = created.token, created.player_id
        self.registered_key = body.get("public_key")
        return created

    def resume(self, player_id: str, token: str, public_key: str | None = None) -> Op[PlayerInfo]:
        """Act as a player ``register`` made before (its id and token, kept): the service is asked who the player is
        (404 ``not_found`` on a service that never knew them) and whether the token is still theirs (``GET /queue``:
        401 if not). ``public_key``: the key they registered with, which keys every seat they take."""
        info = decoded((yield Call("GET", f"/players/{player_id}", idempotent=True)), PlayerInfo)
        decoded((yield Call("GET", "/queue", token=token, idempotent=True)), QueueStatus)
        self.token, self.player_id, self.registered_key = token, player_id, public_key
        return info

    def player(self, player_id: str) -> Op[PlayerInfo]:
        return decoded((yield Call("GET", f"/players/{player_id}", idempotent=True)), PlayerInfo)

    # --- games ---------------------------------------------------------------------------------------------------

    def create_game(self, kind: str, seats: int | None = None, options: dict[str, Any] | None = None,
                    seed: str | None = None) -> Op[GameCreated]:
        """Create a game (``POST /games``); its ``seed_commitment`` is kept as the game's evidence."""
        body: dict[str, Any] = {"kind": kind, **({"seats": seats} if seats is not None else {})}
        body |= {k: v for k, v in (("options", options), ("seed", seed)) if v is not None}
        created = decoded((yield Call("POST", "/games", json=body, token=self.token)), GameCreated)
        self.receipts.evidence(created.game_id).commitment = created.seed_commitment
        return created

    def games(self, status: str | None = None, kind: str | None = None, limit: int | None = None) -> Op[list[GameSummary]]:
        params = {k: v for k, v in (("status", status), ("kind", kind), ("limit", limit)) if v is not None}
        r = yield Call("GET", "/games", params=params, idempotent=True)
        return msgspec.convert(decoded(r, dict)["games"], list[GameSummary])

    def join(self, game_id: str, *, name: str | None = None, client_seed: str | None = None,
             keyed: bool = True) -> Op[SeatTaken]:
        """Take a seat (``POST /games/{id}/seats``) with a client seed of the player's own (32 random bytes unless
        given: it goes into the game's seed) and, ``keyed``, the client's public key. Both are kept as evidence."""
        seed = client_seed or secrets.token_hex(32)
        body: dict[str, Any] = {"client_seed": seed, **({"name": name} if name else {})}
        if keyed and self.key is not None:
            body["public_key"] = self.key.public_key
        seat = decoded((yield Call("POST", f"/games/{game_id}/seats", json=body, token=self.token)), SeatTaken)
        if seat.token != self.token:
            self.seat_tokens[game_id] = seat.token
        kept = self.receipts.evidence(game_id)
        kept.seat, kept.client_seed = seat.seat, seed
        kept.public_key = body.get("public_key") or self.registered_key
        return seat

    def view(self, game_id: str) -> Op[View]:
        """The caller's view (``GET /games/{id}``), its receipt kept."""
        r = yield Call("GET", f"/games/{game_id}", token=self.token_for(game_id), idempotent=True)
        view = view_of(decoded(r, dict))
        self.receipts.keep(view.receipt)
        return view

    def events(self, game_id: str, after: int = 0, limit: int | None = None) -> Op[EventsPage]:
        params = {"after": after, **({"limit": limit} if limit is not None else {})}
        r = yield Call("GET", f"/games/{game_id}/events", params=params, token=self.token_for(game_id), idempotent=True)
        page = decoded(r, EventsPage)
        self.receipts.keep(page.receipt)
        return page

    def export(self, game_id: str, as_seat: int | None = None) -> Op[bytes]:
        """The game's log as NDJSON (``GET /games/{id}/export``): once it is finished, or the admin's; the header's
        receipt is kept."""
        params = {"as": as_seat} if as_seat is not None else None
        r = ok((yield Call("GET", f"/games/{game_id}/export", params=params, token=self.token_for(game_id),
                           idempotent=True)))
        header = r.content.split(b"\n", 1)[0]
        self.receipts.keep(msgspec.json.decode(header) if header.strip() else None)
        return r.content

    def keys(self) -> Op[dict[str, Any]]:
        """``GET /keys``: the keys that sign receipts (save it for ``replays verify --key``)."""
        return decoded((yield Call("GET", "/keys", idempotent=True)), dict)

    # --- commands ------------------------------------------------------------------------------------------------

    def act(self, game_id: str, command: dict[str, Any], *, view: View | None = None, check_legal: bool = True,
            command_id: str | None = None) -> Op[CommandAnswer]:
        """Send ``command`` as the caller's seat at the version of ``view`` (read now when not given).

        Unless ``check_legal`` is off, a command that the view does not list in ``legal`` (or, for a bid, a build, a
        claim or a trade, admit within ``legal_forms``) is refused with ``NotLegal`` and nothing is sent. The command
        goes with ``command_id`` (a new uuid4 unless given), ``expected_version`` and, when the seat is keyed with
        the client's key, ``sig``; a 429 or 503 is waited out and the very same body sent again. A 409 (the game
        moved on) is raised as ``ApiError``: read the view again and decide anew."""
        if view is None:
            view = yield from Core.view(self, game_id)  # the core's own: the clients wrap ``view``
        body = commands.body(view.kind, command)
        if check_legal:
            commands.check(view.kind, view.version, view.legal, view.legal_forms, body)
        command_id = command_id or command.get("command_id") or uuid.uuid4().hex
        sent = {**body, "command_id": command_id, "expected_version": view.version}
        if view.seat_key is not None and self.key is not None and view.seat_key == self.key.public_key:
            sent["sig"] = self.key.sign(game_id, view.version, command_id, body)
        r = yield Call("POST", f"/games/{game_id}/commands", json=sent, token=self.token_for(game_id), idempotent=True)
        answer = answer_of(decoded(r, dict))
        self.receipts.keep(answer.receipt)
        self.receipts.keep(answer.view.receipt)
        return answer

    # --- the queue and ratings -----------------------------------------------------------------------------------

    def join_queue(self, kind: str, seats: int | None = None, options: dict[str, Any] | None = None, *,
                   client_seed: str | None = None, keyed: bool = True) -> Op[Queued]:
        """Queue for a new game (``POST /queue``) with a client seed (kept for the game the player is seated at)."""
        seed = client_seed or secrets.token_hex(32)
        body: dict[str, Any] = {"kind": kind, "client_seed": seed}
        body |= {k: v for k, v in (("seats", seats), ("options", options)) if v is not None}
        if keyed and self.key is not None:
            body["public_key"] = self.key.public_key
        queued = decoded((yield Call("POST", "/queue", json=body, token=self.token)), Queued)
        self._queue_seed, self._queue_key = seed, body.get("public_key")
        return queued

    def queue_status(self) -> Op[QueueStatus]:
        """``GET /queue``; once ``seated``, the game's evidence gets the seat, the client seed and the key."""
        status = decoded((yield Call("GET", "/queue", token=self.token, idempotent=True)), QueueStatus)
        if status.state == "seated" and status.game_id is not None:
            self.seated_by_queue(status.game_id, status.seat)
        return status

    def seated_by_queue(self, game_id: str, seat: int | None) -> None:
        """The queue seated the player at ``game_id``: what they queued with is that game's evidence."""
        kept = self.receipts.evidence(game_id)
        if kept.seat is None and seat is not None:
            kept.seat, kept.client_seed = seat, self._queue_seed
            kept.public_key = self._queue_key or self.registered_key

    def leave_queue(self) -> Op[bool]:
        return bool(decoded((yield Call("DELETE", "/queue", token=self.token)), dict).get("left"))

    def ratings(self, kind: str | None = None, limit: int | None = None) -> Op[Ratings]:
        params = {k: v for k, v in (("kind", kind), ("limit", limit)) if v is not None}
        return decoded((yield Call("GET", "/ratings", params=params, idempotent=True)), Ratings)

    def game_ratings(self, game_id: str) -> Op[GameRatings]:
        return decoded((yield Call("GET", f"/games/{game_id}/ratings", idempotent=True)), GameRatings)


OPERATIONS = tuple(name for name, f in vars(Core).items() if inspect.isgeneratorfunction(f))
"""The operations (every generator of ``Core``) that ``Client`` and ``AsyncClient`` carry out, each with the core's
signature and docstring."""
