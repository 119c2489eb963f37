"""Commands signed by the player's own key (docs/signed-commands.md): a keyed seat's command is appended only with its
player's signature over the bytes a verifier rebuilds from the log (``service.events.command_sig``).

The key is the one ``seat_taken`` recorded for the caller: their own, wherever a trade of places has since seated them.
It is read from the very state the command is decided on, at the version it is appended after, so the bytes checked
here are the bytes ``replays verify`` checks. A seat without a key plays as before, and may not send a signature it
has no key for: a ``sig`` nobody can check would read as evidence it is not.
"""

from __future__ import annotations

from typing import Any

from service.events.command_sig import signature_holds, signed_command
from service.events.receipt import sound_public_key
from service.rules.engine import Game
from service.store.store import Store

from .auth import Caller
from .errors import ApiError


def seat_key(game: Game, seat: int | None) -> str | None:
    """The public key of the player at ``seat`` (``None``: the server's own, or an unkeyed seat)."""
    if seat is None:
        return None
    player = game.state.seats[seat].player
    return player.public_key if player is not None else None


def check_signed(game: Game, seat: int | None, command: Any, command_id: str | None) -> None:
    """401 ``bad_signature`` unless ``command`` is as its seat's key requires: signed by it when the seat is keyed,
    unsigned when not. Called with ``game`` at the version the command is decided on (its ``expected_version``)."""
    key = seat_key(game, seat)
    if key is None:
        if command.sig is not None:
            raise ApiError(401, "bad_signature", f"Seat {seat} has no key, so its commands carry no `sig`: join with a "
                           "`public_key` to sign them", seat=seat)
        return
    missing = [name for name, value in (("sig", command.sig), ("expected_version", command.expected_version),
                                         ("command_id", command_id)) if value is None]
    if missing:
        raise ApiError(401, "bad_signature", f"Seat {seat} is keyed: every command of its player carries `sig`, "
                       f"`expected_version` and `command_id` (missing: {', '.join(missing)})", seat=seat, missing=missing)
    assert command_id is not None
    message = signed_command(game.game_id, game.version, command_id, game.codec.command_body(command))
    if not signature_holds(key, command.sig, message):
        # the bytes the service checked, so a client author sees at once where theirs differ (a default sent, an order)
        raise ApiError(401, "bad_signature", f"`sig` is not the signature of seat {seat}'s key over this command at "
                       f"version {game.version} (docs/signed-commands.md says which bytes are signed)",
                       seat=seat, version=game.version, key=key, signed=message.decode())


def sound_key(public_key: str | None) -> str | None:
    """``public_key`` as sent (its form checked at the edge), refused (400) if it is no Ed25519 public key of large
    order: under one of small order every signature "checks out", and anyone could move in the seat's name."""
    if public_key is not None and not sound_public_key(bytes.fromhex(public_key)):
        raise ApiError(400, "invalid_request", "`public_key` is no Ed25519 public key (a point of small order, or not "
                       "canonically encoded): under it anyone could sign in your name", public_key=public_key)
    return public_key


async def registered_key(store: Store, who: Caller) -> str | None:
    """The key a registered player gave when registering: the one their seats are keyed with unless a join names one."""
    info = await store.player(who.player_id) if who.player_id else None
    return (info or {}).get("public_key") or None
