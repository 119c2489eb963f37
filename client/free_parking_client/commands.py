"""A command as the service decodes it, and whether a view admits it.

``body`` drops what the service would not keep: the transport fields, and every field sent at its default (the
service's commands omit defaults, so the log — and the bytes a keyed player signs — never hold them). The defaults
are the service's own, listed here so that the client needs nothing of the service; ``tests/client`` checks the
table against the service's command types. ``check`` is the legality test of ``Client.act``.
"""

from __future__ import annotations

from typing import Any

from .errors import NotLegal

TRANSPORT = ("command_id", "expected_version", "sig")
"""Fields that travel with a command but are not part of it (docs/api.md, "The view")."""


class Kept(dict[str, Any]):
    """An object field whose default is an object: kept when sent (even empty, as ``{}``: msgspec keeps a decoded
    object that equals its default), its own fields' defaults dropped."""


HOLDINGS = Kept(cash=0, squares=[], jail_cards=[])
DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "free-parking": {"choose": {"card": None, "target": None, "position": None}},
    "monopoly": {"sell_building": {"levels": []}, "offer_trade": {"give": HOLDINGS, "get": HOLDINGS}},
    "solitaire": {},
}
"""Per kind and command type, each field that has a default, and that default (a ``Kept``: an object's fields)."""


def _at_default(value: Any, default: Any) -> bool:
    """``value`` is ``default`` as the service decodes it: ``[]`` for an empty list, ``0`` but never ``False``."""
    return type(value) is type(default) and value == default if default is not None else value is None


def _strip(fields: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in fields.items():
        default = defaults.get(name, ...)
        if isinstance(default, Kept) and isinstance(value, dict):
            out[name] = _strip(value, default)
        elif default is ... or not _at_default(value, default):
            out[name] = value
    return out


def body(kind: str, command: dict[str, Any]) -> dict[str, Any]:
    """``command`` without its transport fields and its fields at their defaults: what the log stores and a keyed
    player signs. Unknown kinds and types keep every field (the service decides)."""
    fields = {k: v for k, v in command.items() if k not in TRANSPORT}
    if not isinstance(fields.get("type"), str):
        raise ValueError(f"a command is an object with a string 'type': {command!r}")
    return _strip(fields, DEFAULTS.get(kind, {}).get(fields["type"], {}))


def check(kind: str, version: int, legal: list[dict[str, Any]], forms: dict[str, Any] | None,
          command: dict[str, Any]) -> None:
    """Raise ``NotLegal`` unless ``command`` (a ``body``) is one of ``legal`` exactly, or an open-ended command (a
    bid, a build order, a claim, a trade offer) that ``legal_forms`` admits."""
    if any(body(kind, listed) == command for listed in legal):
        return
    kind_of = command["type"]
    listed = any(c.get("type") == kind_of for c in legal)
    form = (forms or {}).get(kind_of)
    if not listed or form is None or kind_of not in _FORMS:
        raise NotLegal(command, version, "not among the view's legal commands")
    reason = _FORMS[kind_of](command, form)
    if reason:
        raise NotLegal(command, version, reason)


def _bid(command: dict[str, Any], form: dict[str, Any]) -> str:
    amount = command.get("amount")
    if not isinstance(amount, int) or not form["min"] <= amount <= form["max"]:
        return f"a bid is from {form['min']} to {form['max']}"
    return ""


def _sites(command: dict[str, Any], form: list[int]) -> str:
    if not _within(command.get("sites"), form):
        return f"its sites must be among {form}"
    return ""


def _build(command: dict[str, Any], form: list[int]) -> str:
    return _sites(command, form) or ("a build order lists one site or more" if not command["sites"] else "")


def _within(items: Any, allowed: list[Any]) -> bool:
    return isinstance(items, list) and all(i in allowed for i in items)


def _offer(command: dict[str, Any], form: dict[str, Any]) -> str:
    to = command.get("to")
    give, get = command.get("give", {}), command.get("get", {})
    if to not in form["to"]:
        return f"an offer goes to one of seats {form['to']}"
    if not isinstance(give, dict) or not isinstance(get, dict):
        return "an offer's give and get are objects"
    cash, theirs = give.get("cash", 0), str(to)  # JSON object keys: the view's seats are strings there
    their_squares, their_cards = form["their_squares"].get(theirs, []), form["their_jail_cards"].get(theirs, [])
    checks = [
        (isinstance(cash, int) and 0 <= cash <= form["cash"], f"you can give from 0 to {form['cash']} in cash"),
        (_within(give.get("squares", []), form["squares"]), f"you can give squares {form['squares']}"),
        (_within(give.get("jail_cards", []), form["jail_cards"]), f"you can give jail cards {form['jail_cards']}"),
        (_within(get.get("squares", []), their_squares), f"seat {to} can give squares {their_squares}"),
        (_within(get.get("jail_cards", []), their_cards), f"seat {to} can give jail cards {their_cards}"),
    ]
    return next((why for ok, why in checks if not ok), "")


_FORMS = {"bid": _bid, "build": _build, "claim_buildings": _sites, "offer_trade": _offer}
"""How each open-ended command is bounded by its ``legal_forms`` entry (docs/rules-monopoly.md, ``legal``)."""
