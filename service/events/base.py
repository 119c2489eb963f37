"""The bases every event and command of every game derives from.

Events and commands are tagged msgspec unions (``tag_field="type"``): decoding a body is the
validation. Events carry their hidden part in an optional ``secret`` field, so one struct
describes one happening and the envelope splits it into ``public`` and ``secret`` bytes.
"""

from __future__ import annotations

from typing import Annotated, Literal

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


Account = Literal["person", "bot"]
"""What a registered player registered as (``POST /players``): a person, or a bot account — a program playing
through the API, shown as a bot, for which the server's bots do not wait a person's pace (docs/bots.md)."""


def recorded(account: Account) -> Literal["bot"] | None:
    """How a seat records its player's account: ``bot``, or nothing at all for a person. ``None``, not ``"person"``:
    msgspec omits a default only when the value *is* the default object, and an equal string from elsewhere would
    write ``"account": "person"`` into a person's seat, which must encode as it did before bot accounts."""
    return "bot" if account == "bot" else None


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
    account: Literal["bot"] | None = None
    """``bot`` for a bot account's seat (``recorded``), nothing else: a person's seat, and every log from before bot
    accounts, reads as before. A guest is a person; a server bot has ``bot`` instead."""

    @property
    def registered(self) -> bool:
        return self.player_id is not None and self.bot is None and not self.guest

    @property
    def person(self) -> bool:
        """A person sits here: neither a server bot nor a bot account (the server's bots hold back for people only)."""
        return self.bot is None and self.account is None

    @property
    def shown_account(self) -> Account:
        """What every table and the ratings show the seat as: ``bot`` for a server bot or a bot account."""
        return "person" if self.person else "bot"
