"""What both formats of tournament share (docs/tournaments.md): where one may be kept, and reading its record."""

from __future__ import annotations

from sanic import Request

from service.store.durability import loses_nothing

from .errors import ApiError, not_found


async def load_raw(request: Request, tournament_id: str) -> bytes:
    """The tournament's stored record (either format); 404 if there is none."""
    raw = await request.app.ctx.store.tournament(tournament_id)
    if raw is None:
        raise not_found("tournament", tournament_id)
    return raw


def volatile_refusal(request: Request) -> ApiError | None:
    """Why this service may not hold a tournament, if it may not: an acknowledged event could be lost.

    Durable means nothing acknowledged is lost even when the machine goes down (WAITAOF, ``appendfsync always``,
    an fsynced journal); the embedded store's journal that is only flushed survives a crash of the service, not of
    the machine, so it does not count. ``--allow-volatile`` accepts the risk.
    """
    durability = request.app.ctx.durability
    if loses_nothing(durability) or request.app.ctx.settings.allow_volatile:
        return None
    return ApiError(
        503,
        "not_durable",
        "Tournaments need a store that loses nothing acknowledged, and this one may "
        f"({durability.guarantee}): start the service with FREE_PARKING_DURABILITY=durable (--durability durable; "
        "on the embedded store with --fsync too), or with --allow-volatile (FREE_PARKING_ALLOW_VOLATILE=true) to accept the risk",
        durability=durability.method,
    )
