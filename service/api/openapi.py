"""The OpenAPI document, built from the same msgspec structs the handlers decode and encode.

Each route declares its body, query and answers with ``@doc``; ``spec()`` turns the registry into
OpenAPI 3.1 with ``msgspec.json.schema_components``, so a schema is never written twice. sanic-ext
serves it at ``/docs`` (Swagger UI) and the service at ``/openapi.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .errors import ErrorResponse

_STATUS_TEXT = {
    200: "OK",
    201: "Created",
    204: "No Content",
    400: "The body is not JSON, or the body or query does not match its schema (`malformed_json`, `invalid_command`, `invalid_request`)",
    401: "Token missing or unknown (`unauthorized`)",
    403: "Token valid but not allowed this (`forbidden`)",
    404: "No such game, tournament or player (`not_found`)",
    409: "Stale `expected_version`, a reused `command_id`, a seat taken or a game full",
    413: "Body over the size limit (`body_too_large`)",
    422: "The rules forbid it now (a rule code: `not_your_turn`, `meter_too_low`, …), or the command is another kind's (`wrong_kind`)",
    429: "Too many new players or games from this client: wait `Retry-After` seconds (`rate_limited`, `detail.retry_after`)",
    503: ("The store cannot be reached; nothing was written (`store_unavailable`). An archived game's record cannot be "
          "read now (`archive_unavailable`), or is damaged until the operator restores it (`archive_damaged`). The "
          "store's replicas did not confirm a write in time (`not_replicated`, `--durability replicated`): not "
          "acknowledged; resend it with the same `command_id` after `Retry-After` seconds"),
}


@dataclass
class Operation:
    method: str
    path: str
    summary: str
    description: str = ""
    body: Any = None
    body_required: bool = True  # False where no body means ``{}`` (a registered player taking a seat sends none)
    answers: dict[int, Any] = field(default_factory=dict)
    errors: tuple[int, ...] = ()
    query: dict[str, tuple[str | dict[str, Any], str]] = field(default_factory=dict)  # name: (a type or a JSON schema, text)
    content_type: str = "application/json"
    also: tuple[str, ...] = ()  # other content types a text answer may come in (a query parameter chooses)
    headers: dict[str, tuple[str | dict[str, Any], str]] = field(default_factory=dict)  # request headers, as ``query``
    auth: str = "optional"


RETRY_AFTER = {"description": "whole seconds to wait before trying again (at least 1)", "schema": {"type": "integer", "minimum": 1}}

REGISTRY: list[Operation] = []
REF = "#/components/schemas/{name}"
COMPONENTS: list[Any] = []
"""Types a hand-written schema refers to (``REF``): published even when no route names them itself."""
EXTRA: dict[str, dict[str, Any]] = {}
"""Keywords added to a type's own schema, by component name: what msgspec cannot derive from the type alone."""
NAMED: dict[str, dict[str, Any]] = {}
"""Schemas written by hand, published under a name of their own (``named``)."""
PUBLISHED: dict[str, dict[str, Any]] = {}
"""Keywords published instead of a ``pattern`` the service decodes with, by that pattern: for a rule no JSON Schema
pattern can state exactly (``published_as``)."""


def published_as(decoded: str, **keywords: Any) -> str:
    """Publish ``keywords`` (a simpler ``pattern``, a ``description``) wherever a schema has the pattern ``decoded``;
    returns ``decoded``."""
    PUBLISHED[decoded] = keywords
    return decoded


def _tuple_as_array(node: dict[str, Any]) -> dict[str, Any]:
    """A tuple as msgspec writes it (``prefixItems``, then ``items: false``) as an array of its items' schema, as long
    as it is (``minItems``/``maxItems`` stay): the same arrays, in a form client generators read — one models no
    ``prefixItems`` and refuses ``items: false`` (a boolean schema), so the whole document."""
    prefix = node.get("prefixItems")
    if node.get("items") is not False or not isinstance(prefix, list) or node.get("maxItems") != len(prefix):
        return node
    distinct = [s for i, s in enumerate(prefix) if s not in prefix[:i]]
    rest = {k: v for k, v in node.items() if k not in ("prefixItems", "items")}
    return {**rest, "items": distinct[0] if len(distinct) == 1 else {"anyOf": distinct}}


def _publish(node: Any) -> Any:
    if isinstance(node, dict):
        node = _tuple_as_array(node)
        node = {k: _publish(v) for k, v in node.items()}
        pattern = node.get("pattern")
        return {**node, **PUBLISHED[pattern]} if isinstance(pattern, str) and pattern in PUBLISHED else node
    return [_publish(v) for v in node] if isinstance(node, list) else node


def named(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Publish ``schema`` once as the component ``name`` and return a reference to it: a schema several bodies share
    (a kind's options) is written in each as the reference, not a copy — a client generator makes a model of every
    inline object, and two copies would be two models of one name."""
    NAMED[name] = {"title": name, **schema}
    return {"$ref": REF.format(name=name)}


def component(*types: Any) -> None:
    """Publish ``types`` under ``#/components/schemas`` (a schema built by hand refers to them by ``REF``)."""
    COMPONENTS.extend(t for t in types if t not in COMPONENTS)


def extend(struct: type, schema: dict[str, Any]) -> None:
    """Add ``schema``'s keywords to ``struct``'s published schema (e.g. an ``anyOf`` tying fields together)."""
    EXTRA[struct.__name__] = schema


def doc(method: str, path: str, summary: str, **kw: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Record a route's contract for the OpenAPI document; the handler itself is unchanged."""

    def wrap(handler: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(Operation(method, path, summary, description=(handler.__doc__ or "").strip(), **kw))
        return handler

    return wrap


def streamed(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a GET whose answer is a stream (an event stream, an export): it takes no HEAD (``app._head_where_get``).
    A HEAD would run the stream's handler, which writes its body as it goes: the event stream's never ends, so the
    connection was held open and a request pipelined after it never answered (issue 31)."""
    handler.streamed = True  # type: ignore[attr-defined]
    return handler


_BUILT: dict[tuple[str, str, int], bytes] = {}


def spec(title: str = "Free Parking", version: str = "1") -> dict[str, Any]:
    """The OpenAPI document of every operation registered; built once per registry (each route module registers its
    operations as it is imported), a fresh copy each call: every app made in a process (the tests make hundreds)."""
    key = (title, version, len(REGISTRY))
    if key not in _BUILT:
        _BUILT[key] = msgspec.json.encode(_build(title, version))
    return msgspec.json.decode(_BUILT[key])


def _build(title: str, version: str) -> dict[str, Any]:
    types: list[Any] = [ErrorResponse, *COMPONENTS]
    for op in REGISTRY:
        types += [t for t in (op.body, *op.answers.values()) if t is not None and t is not str and not isinstance(t, dict)]
    schemas, components = msgspec.json.schema_components(types, ref_template=REF)
    for name, extra in EXTRA.items():
        components[name] = {**components[name], **extra}
    components.update(NAMED)
    refs = dict(zip(types, schemas, strict=True))
    paths: dict[str, dict[str, Any]] = {}
    for op in REGISTRY:
        paths.setdefault(_openapi_path(op.path), {})[op.method] = _operation(op, refs)
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": version,
            "description": "Event-sourced games: the Free Parking card game, Free Parking solitaire and Monopoly. "
            "Every error has the shape `{\"error\": {\"code\", \"message\", \"detail\"}}`.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "a seat's, a player's or the admin's token"}},
        },
    }
    document = msgspec.json.decode(msgspec.json.encode(document))  # plain JSON values: a default of () becomes []
    return _renamed(_publish(document), _unique_names(components))


def _unique_names(components: dict[str, Any]) -> dict[str, str]:
    """A plain name for each component msgspec names by its module (two types of one name: ``service.rules.monopoly.
    view.PendingView`` and ``service.rules.free_parking.view.PendingView``): the parts of its module that tell it from
    the others, then its own name (``MonopolyPendingView``). A client generator names its models by ``title``, which
    is ``PendingView`` for both: two models of one name, and neither generated."""
    dotted = [name for name in components if "." in name]
    out = {}
    for name in dotted:
        *module, short = name.split(".")
        rivals = [other.split(".")[:-1] for other in dotted if other != name and other.rsplit(".", 1)[1] == short]
        telling = [part for i, part in enumerate(module) if any(i >= len(r) or r[i] != part for r in rivals)]
        out[name] = "".join(part.title().replace("_", "") for part in telling) + short
    clashes = [new for new in out.values() if new in components or list(out.values()).count(new) > 1]
    assert not clashes, f"components renamed onto taken names: {clashes}"
    return out


def _renamed(document: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    schemas = document["components"]["schemas"]
    for old, new in names.items():
        schemas[new] = {**schemas.pop(old), "title": new}
    refs = {REF.format(name=old): REF.format(name=new) for old, new in names.items()}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (refs.get(v, v) if k == "$ref" else walk(v)) for k, v in node.items()}
        return [walk(v) for v in node] if isinstance(node, list) else node

    return walk(document)


def _openapi_path(path: str) -> str:
    return path.replace("<game_id:str>", "{game_id}").replace("<player_id:str>", "{player_id}").replace("<tournament_id:str>", "{tournament_id}")


def _operation_id(op: Operation) -> str:
    """``post_games_game_id_commands``: the method and the path's words, what a client generator names the call's
    function and module after (its own spelling of ``post_/games/{game_id}/commands`` was ``post_gamesgame_id_commands``)."""
    return "_".join([op.method, *re.findall(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*", _openapi_path(op.path))])


def _operation(op: Operation, refs: dict[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary, "operationId": _operation_id(op)}
    if op.description:
        out["description"] = op.description
    params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in ("game_id", "player_id", "tournament_id")
        if f"<{name}:str>" in op.path
    ]
    params += [
        {"name": name, "in": "query", "required": False, "schema": kind if isinstance(kind, dict) else {"type": kind}, "description": text}
        for name, (kind, text) in op.query.items()
    ]
    params += [
        {"name": name, "in": "header", "required": False, "schema": kind if isinstance(kind, dict) else {"type": kind}, "description": text}
        for name, (kind, text) in op.headers.items()
    ]
    if params:
        out["parameters"] = params
    if op.body is not None:
        out["requestBody"] = {"required": op.body_required, "content": {"application/json": {"schema": refs[op.body]}}}
    responses: dict[str, Any] = {}
    for status, answer in op.answers.items():
        if answer is None:  # no body (204)
            responses[str(status)] = {"description": _STATUS_TEXT.get(status, "OK")}
            continue
        if isinstance(answer, dict):  # a schema written by hand (an event stream's events)
            content = {op.content_type: {"schema": answer}}
        elif answer is str:
            content = {ct: {"schema": {"type": "string"}} for ct in (op.content_type, *op.also)}
        else:
            content = {op.content_type: {"schema": refs[answer]}}
        responses[str(status)] = {"description": _STATUS_TEXT.get(status, "OK"), "content": content}
    for status in op.errors:
        responses[str(status)] = {"description": _STATUS_TEXT[status], "content": {"application/json": {"schema": refs[ErrorResponse]}}}
        if status == 429:
            responses[str(status)]["headers"] = {"Retry-After": RETRY_AFTER}
    out["responses"] = responses
    if op.auth != "none":
        out["security"] = [{"bearer": []}] if op.auth == "required" else [{}, {"bearer": []}]
    return out
