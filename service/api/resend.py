"""A resend to an archived game: its first answer, found in the archived log.

A command id is scoped to the caller's player (API.md): the store keeps a record of each one
(``player:<id>:<command id>`` → the body's digest and the batch's seqs) while the game's events are in the store, and
archiving a finished game drops it with them. The log still holds what the record held: each batch's first envelope
names its command (the body without ``command_id`` and ``expected_version``), the command id the client sent and the
seat that sent it. The seat is not the player — a trade of places moves players between seats — so the seat's player
is read from the table as it was when the command came, folding the log up to it.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from service.store.contract import CommandRecord
from service.events.envelope import NULL, Envelope, actor_seat
from service.store.store import Store
from service.rules.engine import Game


class Asked(NamedTuple):
    """A command as asked, for telling a resend from a new command: its record's key and body digest, the command,
    and what scopes its id (``actor_key``: the caller's player, API.md)."""

    key: str
    digest: str
    command: msgspec.Struct
    actor_key: str
    command_id: str | None


async def archived_record(store: Store, game_id: str, asked: Asked) -> CommandRecord | None:
    """The record of ``asked``'s command id in an archived game's log, as the store kept it before: ``digest`` is the
    one asked when the log holds the same command (``same_command``), another when it holds another body."""
    meta = await store.meta(game_id)
    player_id = asked.actor_key.removeprefix("player:")
    if not meta or meta.get("archived") != "1" or player_id == asked.actor_key or asked.command_id is None:
        return None
    game = Game.recorded(meta["kind"], game_id, meta["config"], meta["seed"])
    sent = recorded(game, await store.read(game_id), player_id, asked.command_id)
    if sent is None:
        return None
    return CommandRecord(asked.digest if same_command(game, asked.command, sent) else "", sent.first, sent.last)


class Sent(NamedTuple):
    """What the log recorded of the command ``player_id`` sent with ``command_id``: its body and its batch's seqs."""

    body: bytes
    first: int
    last: int


def recorded(game: Game, envelopes: list[Envelope], player_id: str, command_id: str) -> Sent | None:
    """The batch ``player_id`` sent with ``command_id`` in a log folded from ``game`` (a new game of its kind, folded
    here as far as the command), or ``None``: no command of theirs carried that id."""
    if not _ever_seated(envelopes, player_id):
        return None  # never at the table: nothing of theirs to find, and no log folded for it
    starts = [i for i, env in enumerate(envelopes) if env.command != NULL]
    folded = 0
    for n, i in enumerate(starts):
        first = envelopes[i]
        seat = actor_seat(first.actor)
        if first.command_id != command_id or seat is None:
            continue
        game.fold(envelopes[folded:i])
        folded = i
        seats = game.state.seats
        player = seats[seat].player if 0 <= seat < len(seats) else None
        if player is None or player.player_id != player_id:
            continue  # another player's id: ids are the caller's own
        last = envelopes[starts[n + 1] - 1].seq if n + 1 < len(starts) else envelopes[-1].seq
        return Sent(bytes(first.command), first.seq, last)
    return None


def _ever_seated(envelopes: list[Envelope], player_id: str) -> bool:
    """Whether a ``seat_taken`` of the log seated ``player_id`` (a trade of places moves players, never seats one)."""
    taken = (msgspec.json.decode(env.public) for env in envelopes if env.type == "seat_taken")
    return any(isinstance(t, dict) and (t.get("player") or {}).get("player_id") == player_id for t in taken)


def same_command(game: Game, command: msgspec.Struct, sent: Sent) -> bool:
    """Whether ``command`` is the one the log recorded: the same body, its transport fields aside. The log keeps no
    ``expected_version``, but an accepted command that named one named the version its batch came after (else it
    was refused): a resend naming another is another command. One that leaves it out cannot be told from a first
    command that left it out too, so it is the same (docs/operating.md)."""
    expected = getattr(command, "expected_version", None)
    if expected is not None and expected != sent.first - 1:
        return False
    return game.codec.command_body(command) == sent.body
