"""The bases every event and command of every game derives from.

Events and commands are tagged msgspec unions (``tag_field="type"``): decoding a body is the
validation. Events carry their hidden part in an optional ``secret`` field, so one struct
describes one happening and the envelope splits it into ``public`` and ``secret`` bytes.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

CommandId = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+(?!\n)$")]
PlayerKey = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?!\n)$")]
"""A player's own Ed25519 public key: its 32 raw bytes as 64 lowercase hex digits (docs/signed-commands.md)."""
CommandSig = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{128}(?!\n)$")]
"""A player's Ed25519 signature over a command's canonical bytes (``command_sig.signed_command``), lowercase hex."""


class Event(msgspec.Struct, tag_field="type", frozen=True, omit_defaults=True, kw_only=True):
    """Something that happened. ``secret``, where a subclass has one, holds what not everyone may see."""


class Secret(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """The hidden part of an event: hands, deck orders, cards taken unseen."""


class Command(
    msgspec.Struct, tag_field="type", frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """Something a seat (or the server) asks for.

    ``command_id``, ``expected_version`` and ``sig`` travel with the command but are not part of what the
    rules decide on; the log stores the command without them (see ``codec.command_body``), the first two in the
    envelope's ``command_id`` and its seq, the signature of a keyed seat's player in the envelope's ``sig``.
    """

    command_id: CommandId | None = None
    expected_version: Annotated[int, msgspec.Meta(ge=0, le=2**62)] | None = None
    sig: CommandSig | None = None


class Config(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True):
    """A game's options, fixed at creation."""


class BotParams(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True):
    """A server bot's parameters, as its seat records them (``service/bots``: ``params_of``): what re-deriving its
    moves needs besides its kind, name and version. Frozen, so that a ``Player`` stays hashable."""

    nodes: int | None = None
    horizon: int | None = None
    budget: int | None = None
    jail: str | None = None


class Player(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """Who sits in a seat: a registered player, a guest (a name for one game), or a server bot.

    The service gives every seated player a ``player_id``; statistics count registered players only.
    """

    name: str
    player_id: str | None = None
    bot: str | None = None
    guest: bool = False
    public_key: PlayerKey | None = None
    """The key the player acts with at this table (a keyed seat): every command of theirs must carry its signature,
    and a trade of places takes it along with the player (docs/signed-commands.md)."""
    bot_version: int | None = None
    """How a server bot is asked (``service/bots/sight.py``): from version 1 on a world of its seat's own, with its
    own randomness, so that ``replays verify`` re-derives its every move; a bot without one predates that."""
    bot_params: BotParams | None = None

    @property
    def registered(self) -> bool:
        return self.player_id is not None and self.bot is None and not self.guest
