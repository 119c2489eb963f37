"""Every registered game kind as the HTTP edge sees it: its client commands, its view, its seats, its bots.

The rules packages know nothing of HTTP; this module reads what the edge needs off each of them once, so that
the schemas, the OpenAPI document and the handlers are written for any number of kinds, not for one.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Union

import msgspec

from service.bots import BOTS
from service.events.common import Close, Create, TakeSeat, Timeout
from service.rules.engine import GAMES, rules_for, seat_range

from .errors import ApiError
from .openapi import named

SERVER_COMMANDS = (Create, TakeSeat, Timeout, Close)
"""Commands only the service sends: decoded from a client too, so that the rules refuse them (422 ``server_only``),
but never documented as a client's."""

SERVICE_FIELDS = ("seats", "seed_chosen")
"""Config fields the service fills in, never a client's ``options``: ``seats`` is its own field of the body, and
``seed_chosen`` says whether the body gave a ``seed``."""


@dataclass(frozen=True)
class Kind:
    name: str
    rules: ModuleType
    commands: tuple[type, ...]  # what a client may send, each a tagged struct
    view: type
    seats: tuple[int, int]  # the fewest and most seats the config admits
    bots: tuple[str, ...]
    chosen_seed: bool  # whether the config records a seed the creator chose (``seed_chosen``)

    @property
    def command_union(self) -> Any:
        return Union[self.commands]  # noqa: UP007 - a runtime union of a tuple of types

    def options_schema(self) -> dict[str, Any]:
        """The JSON schema of ``options``: the config's fields less those the service fills in."""
        _, components = msgspec.json.schema_components([self.rules.CONFIG])
        config = components[self.rules.CONFIG.__name__]
        assert "$ref" not in repr(config), f"{self.name}'s config refers to other schemas: inline them here"
        properties = {k: v for k, v in config["properties"].items() if k not in SERVICE_FIELDS}
        return {"type": "object", "properties": properties, "additionalProperties": False}

    def options_ref(self) -> dict[str, Any]:
        """``options_schema``, published once as the component ``<Kind>Options`` (``FreeParkingOptions``…): what
        every body taking this kind's options refers to."""
        return named("".join(part.title() for part in self.name.split("-")) + "Options", self.options_schema())


def _client_commands(rules: ModuleType) -> tuple[type, ...]:
    """The kind's command union less the service's own commands."""
    return tuple(t for t in typing.get_args(rules.CODEC.commands) if t not in SERVER_COMMANDS)


def _view_type(rules: ModuleType) -> type:
    """The struct ``rules.view`` answers with (its return annotation): what OpenAPI documents as that kind's view."""
    return typing.get_type_hints(rules.view)["return"]


def _kind(name: str, rules: ModuleType) -> Kind:
    fields = {f.name for f in msgspec.structs.fields(rules.CONFIG)}
    return Kind(
        name=name,
        rules=rules,
        commands=_client_commands(rules),
        view=_view_type(rules),
        seats=seat_range(name),
        bots=tuple(sorted(BOTS.get(name, {}))),
        chosen_seed="seed_chosen" in fields,
    )


KINDS: dict[str, Kind] = {name: _kind(name, rules) for name, rules in sorted(GAMES.items())}


def _check_tags() -> None:
    """One command tag names one command across every kind: the documented body is one union of them all. A command
    several kinds share (``resign``) is one struct, the same in each."""
    seen: dict[str, tuple[str, type]] = {}
    for kind in KINDS.values():
        for command in kind.commands:
            tag = command.__struct_config__.tag
            other = seen.setdefault(tag, (kind.name, command))
            assert other[1] is command, f"command {tag!r} is both {other[0]}'s and {kind.name}'s: rename one"


_check_tags()

ALL_COMMANDS = tuple(dict.fromkeys(c for kind in KINDS.values() for c in kind.commands))
BOT_NAMES = tuple(sorted({b for kind in KINDS.values() for b in kind.bots}))
_SHARED = {c for c in ALL_COMMANDS if sum(c in kind.commands for kind in KINDS.values()) > 1}
KIND_OF_TAG = {c.__struct_config__.tag: kind.name for kind in KINDS.values() for c in kind.commands if c not in _SHARED}
"""The one kind a command's tag belongs to (a shared command, sent to any game, is that game's own)."""
_decoders = {name: msgspec.json.Decoder(kind.command_union) for name, kind in KINDS.items()}


class _Tagged(msgspec.Struct):
    type: str


_tagged = msgspec.json.Decoder(_Tagged)


def other_kind(body: bytes, kind: str) -> tuple[str, msgspec.Struct] | None:
    """The kind and command ``body`` is, when its ``type`` names a command of a kind other than ``kind``: a command
    sent to a game of another kind is then told so (422) rather than called malformed. A body that is not that
    kind's command either raises its ``DecodeError``: the message names what is wrong with it."""
    try:
        tag = _tagged.decode(body).type
    except (msgspec.DecodeError, RecursionError):
        return None
    other = KIND_OF_TAG.get(tag)
    if other is None or other == kind:
        return None
    return other, _decoders[other].decode(body)


SERVER_TAGS = frozenset(c.__struct_config__.tag for c in SERVER_COMMANDS)


def server_command(body: bytes) -> str | None:
    """The tag of a server command (``timeout``, ``close``…) ``body`` names, if it names one: for a kind that has no
    use for that command, still 422 ``server_only``, as the kinds that have it answer."""
    try:
        tag = _tagged.decode(body).type
    except (msgspec.DecodeError, RecursionError):
        return None
    return tag if tag in SERVER_TAGS else None


def default_seats(kind: Kind) -> int:
    """Seats when the body names none: four (API.md's example), or the nearest the kind admits."""
    low, high = kind.seats
    return min(max(4, low), high)


def config_for(kind: str, seats: int, options: dict[str, Any], *, seed_chosen: bool = False) -> Any:
    """The game's config from a request's kind, seats and options: a 400 that says what is wrong, else the config.

    ``seed_chosen`` marks a game dealt from a seed its creator gave, in a kind that records it (solitaire)."""
    try:
        rules = rules_for(kind)
    except ValueError as e:
        raise ApiError(400, "invalid_request", str(e)[:1].upper() + str(e)[1:], kind=kind) from None  # a sentence
    if "seats" in options:  # else the options would seat more players than the game's answer and index say
        raise ApiError(400, "invalid_request", "Give the number of seats as `seats`, not among the options")
    if "seed_chosen" in options:
        raise ApiError(400, "invalid_request", "`seed_chosen` is the service's to set: give a `seed` to choose the deal")
    low, high = KINDS[kind].seats
    if not low <= seats <= high:
        admits = f"exactly {low} seat" if low == high else f"{low} to {high} seats"
        raise ApiError(400, "invalid_request", f"A {kind} game has {admits}, not {seats} (`$.seats`)", kind=kind)
    marks = {"seed_chosen": True} if seed_chosen and KINDS[kind].chosen_seed else {}
    try:
        return msgspec.convert({"seats": seats, **options, **marks}, rules.CONFIG)
    except msgspec.ValidationError as e:
        raise ApiError(400, "invalid_request", f"Invalid options for {kind}: {e}") from None
