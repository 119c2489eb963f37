"""The published contract: ``/openapi.json`` is an OpenAPI 3.1 document whose references resolve, every route of
API.md is in it with its request and response schemas, real answers match those schemas, and ``/docs`` serves
a page that loads it. (No OpenAPI validator is installed: the structure is checked here, and the schemas with
a small JSON Schema checker for the keywords msgspec emits.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import seeded_game, view

# API.md's routes: method, path, request body?, success status, success content type
ROUTES = [
    ("post", "/players", True, "201", "application/json"),
    ("post", "/games", True, "201", "application/json"),
    ("get", "/games", False, "200", "application/json"),
    ("post", "/games/{game_id}/seats", True, "201", "application/json"),
    ("get", "/games/{game_id}", False, "200", "application/json"),
    ("post", "/games/{game_id}/commands", True, "200", "application/json"),
    ("get", "/games/{game_id}/events", False, "200", "application/json"),
    ("get", "/games/{game_id}/audit", False, "200", "text/plain"),
    ("get", "/games/{game_id}/export", False, "200", "application/x-ndjson"),
    ("get", "/games/{game_id}/replay", False, "200", "application/json"),
    ("get", "/healthz", False, "200", "application/json"),
]
COMMANDS = {"feed_meter", "run_errand", "free_parking", "time_expires", "swap_three", "discard", "draw_second_chance",
            "end_turn", "officer_jones", "talk_out", "accept", "choose", "resign"}
SOLITAIRE_COMMANDS = {"move", "redeal", "undo", "resign"}
MONOPOLY_COMMANDS = {"roll", "pay_fine", "use_jail_card", "buy", "decline", "choose_tax", "bid", "pass_bid", "build",
                     "claim_buildings", "sell_building", "mortgage", "lift_mortgage", "offer_trade", "accept_trade",
                     "reject_trade", "withdraw_trade", "declare_bankruptcy", "resign"}  # resign: one command, every kind
VIEW_FIELDS = {"game_id", "kind", "status", "version", "head", "seat", "turn", "phase", "players", "you", "pending", "legal", "winner"}
SOLITAIRE_VIEW_FIELDS = {"game_id", "kind", "status", "version", "head", "seat", "layout", "runs", "redeals_left", "hint", "legal"}
MONOPOLY_VIEW_FIELDS = {"game_id", "kind", "status", "version", "head", "seat", "seats", "board", "houses", "hotels", "turn_seat",
                        "round", "max_rounds", "step", "dice", "doubles", "offer", "auction", "shortage", "debts", "trades",
                        "pending", "legal", "winner", "dice_by", "dice_jailed"}  # dice_by, dice_jailed: docs/rules-monopoly.md
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture
async def document(api) -> dict:
    r = await api.get("/openapi.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    return r.json()


def resolve(doc: dict, ref: str) -> Any:
    assert ref.startswith("#/"), f"an external reference: {ref}"
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} does not resolve (no {part!r})"
        node = node[part]
    return node


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if isinstance(node.get("$ref"), str) else []) + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def schema_of(doc: dict, schema: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = resolve(doc, schema["$ref"])
    return schema


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def conforms(doc: dict, schema: dict, value: Any, where: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema`` (``type``, ``enum``, ``properties``, ``required``, ``items``, ``anyOf``,
    ``minimum``/``maximum``, ``additionalProperties: false``, ``prefixItems``, ``$ref``, boolean schemas); an empty
    list when it conforms."""
    schema = schema_of(doc, schema)
    if isinstance(schema, bool):
        return [] if schema else [f"{where}: nothing is allowed here"]
    if "anyOf" in schema:
        if any(not conforms(doc, s, value, where) for s in schema["anyOf"]):
            return []
        return [f"{where}: matches none of anyOf"]
    kind = schema.get("type")
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{where}: {value!r} is not an integer"]
    elif kind == "number":
        if not isinstance(value, int | float) or isinstance(value, bool):
            return [f"{where}: {value!r} is not a number"]
    elif kind is not None and not isinstance(value, _TYPES[kind]):
        return [f"{where}: {type(value).__name__} is not {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} not in {schema['enum']}"]
    if "minimum" in schema and value < schema["minimum"] or "maximum" in schema and value > schema["maximum"]:
        return [f"{where}: {value!r} out of range"]
    problems: list[str] = []
    if isinstance(value, dict):
        props = schema.get("properties", {})
        problems += [f"{where}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            problems += [f"{where}: unexpected {k!r}" for k in value if k not in props]
        for k, v in value.items():
            if k in props:
                problems += conforms(doc, props[k], v, f"{where}.{k}")
    if isinstance(value, list):
        positional = schema.get("prefixItems", [])
        for i, v in enumerate(value):
            item = positional[i] if i < len(positional) else schema.get("items", True)
            problems += conforms(doc, item, v, f"{where}[{i}]")
    return problems


def response_schema(doc: dict, method: str, path: str, status: str) -> dict:
    return doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]


async def test_the_document_is_openapi_3_1_and_every_reference_resolves(document):
    doc = document
    assert re.fullmatch(r"3\.1\.\d+", doc["openapi"])
    assert isinstance(doc["info"]["title"], str) and doc["info"]["title"] and isinstance(doc["info"]["version"], str)
    assert isinstance(doc["paths"], dict) and doc["paths"]
    all_refs = refs(doc)
    assert all_refs
    for ref in all_refs:
        assert isinstance(resolve(doc, ref), dict)
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
    ids = []
    for path, item in doc["paths"].items():
        assert path.startswith("/") and "<" not in path, path
        params_in_path = set(re.findall(r"{(\w+)}", path))
        for method, op in item.items():
            assert method in METHODS, method
            ids.append(op["operationId"])
            assert op["responses"], f"{method} {path} has no responses"
            for status, response in op["responses"].items():
                assert re.fullmatch(r"[1-5]\d\d|default", status) and isinstance(response["description"], str)
                for media in response.get("content", {}).values():
                    assert isinstance(media["schema"], dict)
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == params_in_path, f"{method} {path}: path parameters {declared} ≠ {params_in_path}"
            for p in op.get("parameters", []):
                assert p["in"] in ("path", "query", "header", "cookie") and isinstance(p["schema"], dict)
                assert p["required"] is True or p["in"] != "path"
            for requirement in op.get("security", []):
                assert set(requirement) <= set(schemes)
    assert len(ids) == len(set(ids)), "operationIds are not unique"


async def test_every_route_of_the_contract_is_documented_with_its_schemas(document):
    doc = document
    for method, path, has_body, ok, content_type in ROUTES:
        op = doc["paths"].get(path, {}).get(method)
        assert op is not None, f"{method.upper()} {path} is not in /openapi.json"
        if has_body:
            body = schema_of(doc, op["requestBody"]["content"]["application/json"]["schema"])
            assert body.get("properties") or body.get("anyOf"), f"{method} {path}: an empty request schema"
        assert content_type in op["responses"][ok]["content"], f"{method} {path}: {ok} is not {content_type}"
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")) and "content" in response and path != "/healthz":
                error = schema_of(doc, response["content"]["application/json"]["schema"])
                inner = schema_of(doc, error["properties"]["error"])
                assert {"code", "message", "detail"} <= set(inner["properties"]) and error["required"] == ["error"]
    statuses = set(doc["paths"]["/games/{game_id}/commands"]["post"]["responses"])
    assert {"200", "400", "401", "403", "404", "409", "413", "422", "503"} <= statuses
    # the command union: every command of API.md, each by its tag, and none of the server's own
    union = doc["paths"]["/games/{game_id}/commands"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert set(union["discriminator"]["mapping"]) == COMMANDS | SOLITAIRE_COMMANDS | MONOPOLY_COMMANDS
    assert union["discriminator"]["propertyName"] == "type"
    for tag, ref in union["discriminator"]["mapping"].items():
        command = resolve(doc, ref)
        assert command["properties"]["type"].get("enum") == [tag] or command["properties"]["type"].get("const") == tag
        assert {"command_id", "expected_version"} <= set(command["properties"])
    for path, status, fields in [
        ("/players", "201", {"player_id", "name", "token"}),
        ("/games", "201", {"game_id", "kind", "seats", "seed_commitment", "version", "head"}),
        ("/games/{game_id}/seats", "201", {"seat", "token"}),
        ("/games/{game_id}/commands", "200", {"version", "head", "events", "view"}),
    ]:
        answer = schema_of(doc, response_schema(doc, "post", path, status))
        assert fields <= set(answer["properties"]), f"POST {path}: {fields - set(answer['properties'])} undocumented"
    view_schema = schema_of(doc, response_schema(doc, "get", "/games/{game_id}", "200"))
    views = {schema_of(doc, v)["properties"]["kind"]["enum"][0]: schema_of(doc, v) for v in view_schema["anyOf"]}
    assert VIEW_FIELDS <= set(views["free-parking"]["properties"])
    assert SOLITAIRE_VIEW_FIELDS <= set(views["solitaire"]["properties"])
    assert MONOPOLY_VIEW_FIELDS <= set(views["monopoly"]["properties"])
    command_view = schema_of(doc, response_schema(doc, "post", "/games/{game_id}/commands", "200"))["properties"]["view"]
    assert schema_of(doc, command_view) == view_schema, "the command's answer does not document its view"
    listed = schema_of(doc, schema_of(doc, response_schema(doc, "get", "/games", "200"))["properties"]["games"]["items"])
    assert {"game_id", "kind", "seats", "taken", "status"} <= set(listed["properties"])
    assert {"status", "kind", "limit"} <= {p["name"] for p in doc["paths"]["/games"]["get"]["parameters"]}
    assert {"after", "limit"} <= {p["name"] for p in doc["paths"]["/games/{game_id}/events"]["get"]["parameters"]}
    assert "at" in {p["name"] for p in doc["paths"]["/games/{game_id}/replay"]["get"]["parameters"]}
    health = schema_of(doc, response_schema(doc, "get", "/healthz", "200"))
    assert set(health["properties"]) == {"ok", "store"}


async def test_real_answers_match_their_documented_schemas(api, document):
    """A schema that drifted from the code would be a lie to every client: the service's own answers are
    checked against the document."""
    doc = document

    def check(method: str, path: str, status: str, r) -> dict:
        assert r.status_code == int(status), r.text
        problems = conforms(doc, response_schema(doc, method, path, status), r.json())
        assert not problems, f"{method.upper()} {path}: {problems[:5]}"
        return r.json()

    def check_error(method: str, path: str, r) -> None:
        status = str(r.status_code)
        assert status in doc["paths"][path][method]["responses"], f"{method.upper()} {path} answers an undocumented {status}"
        assert not conforms(doc, response_schema(doc, method, path, status), r.json())

    player = check("post", "/players", "201", await api.post("/players", json={"name": "Ann"}))
    check("post", "/games", "201", await api.post("/games", json={"kind": "free-parking", "seats": 2}))
    game_id, tokens = await seeded_game(api, 2, "5" * 64)
    check("get", "/games", "200", await api.get("/games"))
    v = check("get", "/games/{game_id}", "200", await api.get(f"/games/{game_id}", headers=bearer(tokens[1])))
    check("get", "/games/{game_id}", "200", await api.get(f"/games/{game_id}"))
    check("get", "/games/{game_id}", "200", await api.get(f"/games/{game_id}", headers=ADMIN_HEADERS))
    for command in v["legal"][:1]:  # a legal command validates against the request schema too
        union = doc["paths"]["/games/{game_id}/commands"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert not conforms(doc, union, command)
        check("post", "/games/{game_id}/commands", "200",
              await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(tokens[1])))
    check("get", "/games/{game_id}/events", "200", await api.get(f"/games/{game_id}/events", headers=bearer(tokens[0])))
    check("get", "/games/{game_id}/replay", "200", await api.get(f"/games/{game_id}/replay", headers=ADMIN_HEADERS))
    check("get", "/healthz", "200", await api.get("/healthz"))
    other = await api.post("/games", json={"kind": "free-parking", "seats": 2})
    check("post", "/games/{game_id}/seats", "201",
          await api.post(f"/games/{other.json()['game_id']}/seats", json={}, headers=bearer(player["token"])))
    check_error("post", "/games/{game_id}/commands", await api.post(f"/games/{game_id}/commands", json={"type": "nope"}, headers=bearer(tokens[1])))
    check_error("post", "/games/{game_id}/commands", await api.post(f"/games/{game_id}/commands", json={"type": "accept"}, headers=bearer(tokens[1])))
    check_error("get", "/games/{game_id}", await api.get("/games/g_nope"))
    check_error("get", "/games/{game_id}/export", await api.get(f"/games/{game_id}/export"))
    audit = await api.get(f"/games/{game_id}/audit")
    assert audit.status_code == 200 and audit.headers["content-type"].startswith("text/plain")
    assert (await view(api, game_id))["version"] == len(audit.text.splitlines())


async def test_docs_serves_a_page_that_loads_the_document(api, document):
    r = await api.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "swagger" in r.text.lower()
    url = re.search(r'url:\s*"([^"]+)"', r.text)
    assert url, "the page names no document to load"
    loaded = await api.get(url.group(1))
    assert loaded.status_code == 200 and loaded.json() == document


async def test_the_tournament_export_documents_its_formats_and_the_ranking_its_rounds_won(document):
    export = document["paths"]["/tournaments/{tournament_id}/export"]["get"]
    form = next(p for p in export["parameters"] if p["name"] == "format")
    assert form["in"] == "query" and form["schema"]["enum"] == ["ndjson", "csv", "ranking-csv", "sheet-csv", "sheet-html"]
    assert {"application/x-ndjson", "text/csv", "text/html"} <= set(export["responses"]["200"]["content"])
    assert next(p for p in export["parameters"] if p["name"] == "round")["schema"]["minimum"] == 1
    ranked = document["components"]["schemas"]["Ranked"]
    assert "rounds_won" in ranked["required"] and ranked["properties"]["rounds_won"]["type"] == "integer"


async def test_a_body_the_service_may_go_without_is_published_as_optional(api, document):
    """A registered player takes a seat with their token alone: no body is ``{}``. The document says so, else a
    client generated from it must send a body, and a contract checker flags the bodiless join as accepted bad data."""
    seats = document["paths"]["/games/{game_id}/seats"]["post"]["requestBody"]
    assert seats["required"] is False
    assert document["paths"]["/games"]["post"]["requestBody"]["required"] is True
    token = (await api.post("/players", json={"name": "Cat"})).json()["token"]
    game_id = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", headers=bearer(token))
    assert r.status_code == 201, r.text
    r = await api.post(f"/games/{game_id}/seats")  # no token, no body: neither a name nor a bot
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
