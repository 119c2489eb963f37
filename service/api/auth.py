"""Tokens: who is calling. A token belongs to a player (registered or a guest of one game), never to a seat."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import weakref
from typing import Literal

import msgspec
from sanic import Request

from service.events.base import Account
from service.store.store import Store

from .errors import ApiError


class TokenRecord(msgspec.Struct, frozen=True, kw_only=True):
    kind: Literal["player", "guest"]
    player_id: str
    name: str
    game_id: str | None = None
    account: Account = "person"  # a registered player's (a token written before bot accounts: a person's)


class Caller(msgspec.Struct, frozen=True, kw_only=True):
    """Who is asking: the admin, a registered player, a guest of one game, or nobody (a spectator)."""

    admin: bool = False
    player_id: str | None = None
    name: str | None = None
    guest_of: str | None = None
    account: Account = "person"

    @property
    def anonymous(self) -> bool:
        return not self.admin and self.player_id is None

    @property
    def bot_account(self) -> bool:
        """A registered bot account: limited by the bots' own budget (docs/limits.md), seated as a bot."""
        return self.account == "bot" and self.player_id is not None and self.guest_of is None


_decode = msgspec.json.Decoder(TokenRecord)


def new_token() -> str:
    return "fpt_" + secrets.token_urlsafe(32)


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(store: Store, record: TokenRecord) -> str:
    token = new_token()
    await store.put_token(digest(token), msgspec.json.encode(record))
    return token


async def caller(request: Request, store: Store, admin_token: str | None) -> Caller:
    """The caller of ``request``; a token that is present but unknown is refused (401), never ignored."""
    header = request.headers.get("authorization")
    if header is None:
        return Caller()
    token = _bearer(header)
    if token is None:
        raise ApiError(401, "unauthorized", "Send the token as 'Authorization: Bearer <token>' (printable ASCII)")
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Caller(admin=True)
    if len(token) > 200:
        raise ApiError(401, "unauthorized", "This token is not known")
    callers = _callers.setdefault(store, {})  # per store: a token is known to the store that issued it
    known = callers.get(token)
    if known is not None:
        return known
    raw = await store.token(digest(token))
    if raw is None:
        raise ApiError(401, "unauthorized", "This token is not known")
    rec = _decode.decode(raw)
    who = Caller(player_id=rec.player_id, name=rec.name, guest_of=rec.game_id if rec.kind == "guest" else None,
                 account=rec.account)
    if len(callers) >= 50_000:
        callers.pop(next(iter(callers)))
    callers[token] = who  # a token's record never changes once written (see Store.token)
    return who


_callers: weakref.WeakKeyDictionary[Store, dict[str, Caller]] = weakref.WeakKeyDictionary()


def is_admin(request: Request, admin_token: str | None) -> bool:
    """Whether ``request`` carries the admin token: all a route that reads no other token needs to know."""
    token = _bearer(request.headers.get("authorization", ""))
    return bool(admin_token and token and hmac.compare_digest(token.encode(), admin_token.encode()))


def _bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or ``None`` if it is not one. Tokens are printable
    ASCII (ours are ``fpt_`` and base64url): a header byte that is not UTF-8 reaches here as a lone surrogate, which
    no token holds and which ``str.encode`` would choke on."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or not (token.isascii() and token.isprintable()):
        return None
    return token


def require(who: Caller) -> Caller:
    if who.anonymous:
        raise ApiError(401, "unauthorized", "This needs a token: a seat's, a player's, or the admin's")
    return who
