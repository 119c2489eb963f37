"""Turns a game's events and commands into canonical bytes and back.

An event struct carries its hidden part in ``secret``; the codec splits it into the public bytes
(the event with ``secret`` unset) and the secret bytes, and joins them again on the way back.
A command is stored without its transport fields (``command_id``, ``expected_version``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .base import Command, Event
from .envelope import canonical


def tag_of(obj: msgspec.Struct) -> str:
    return type(obj).__struct_config__.tag  # type: ignore[return-value]


class Codec:
    """The codec of one game kind, built from its event and command unions."""

    def __init__(self, events: Any, commands: Any) -> None:
        self.events = events
        self.commands = commands
        self._event_decoder = msgspec.json.Decoder(events)
        self._command_decoder = msgspec.json.Decoder(commands)
        self._secret_types: dict[str, type] = {}
        for cls in events.__args__:
            field = next((f for f in msgspec.structs.fields(cls) if f.name == "secret"), None)
            if field is not None:
                self._secret_types[cls.__struct_config__.tag] = field.type.__args__[0]
        self.event_types = {cls.__struct_config__.tag: cls for cls in events.__args__}
        self.command_types = {cls.__struct_config__.tag: cls for cls in commands.__args__}

    def split(self, event: Event) -> tuple[str, bytes, bytes | None]:
        """``(type, public bytes, secret bytes or None)``."""
        secret = getattr(event, "secret", None)
        if secret is None:
            return tag_of(event), canonical(event), None
        return tag_of(event), canonical(msgspec.structs.replace(event, secret=None)), canonical(secret)

    def join(self, public: bytes | msgspec.Raw, secret: bytes | msgspec.Raw | None = None) -> Event:
        """The event from its stored parts; without the secret, the event's ``secret`` stays ``None``."""
        event = self._event_decoder.decode(public)
        if secret is not None and bytes(secret) != b"null":
            secret_type = self._secret_types[tag_of(event)]
            event = msgspec.structs.replace(event, secret=msgspec.json.decode(secret, type=secret_type))
        return event

    def has_secret_part(self, event_type: str) -> bool:
        return event_type in self._secret_types

    def decode_command(self, data: bytes) -> Command:
        return self._command_decoder.decode(data)

    def command_body(self, command: Command) -> bytes:
        """The command as the log stores it: canonical, without its transport fields."""
        return canonical(msgspec.structs.replace(command, command_id=None, expected_version=None, sig=None))
