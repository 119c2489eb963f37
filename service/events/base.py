"""The bases every event and command of every game derives from.

Events and commands are tagged msgspec unions (``tag_field="type"``): decoding a body is the
validation. Events carry their hidden part in an optional ``secret`` field, so one struct
describes one happening and the envelope splits it into ``public`` and ``secret`` bytes.
"""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, tag_field="type", frozen=True, omit_defaults=True, kw_only=True):
    """Something that happened. ``secret``, where a subclass has one, holds what not everyone may see."""


class Secret(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """The hidden part of an event: hands, deck orders, cards taken unseen."""


class Command(
    msgspec.Struct, tag_field="type", frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """Something a seat (or the server) asks for.

    ``command_id`` and ``expected_version`` travel with the command but are not part of what the
    rules decide on; the log stores the command without them (see ``envelope.command_body``).
    """

    command_id: str | None = msgspec.field(default=None)
    expected_version: int | None = msgspec.field(default=None)


class Config(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True):
    """A game's options, fixed at creation."""


class Player(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """Who sits in a seat: a registered player, an anonymous name, or a server bot."""

    name: str
    player_id: str | None = None
    bot: str | None = None
