"""``docs/api.md``, the contract in prose, against the service itself, so that the two never disagree:

- every ``METHOD /path`` its route tables name is an operation of the live ``/openapi.json``, and every operation of
  ``/openapi.json`` is named there;
- every error code its table lists is one the service answers with, under that status, and every code the service's
  API layer answers with (``service/api``: ``ApiError``, ``error_response``, ``bad_body``) is listed; the table's
  examples of the rules' own 422 codes are codes a rule raises (``RuleViolation`` in ``service/rules``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "api.md").read_text()
METHODS = ("get", "post", "put", "patch", "delete")


def doc_routes() -> set[tuple[str, str]]:
    """The routes of the doc's tables: rows whose first cell is ``METHOD /path`` in code."""
    return {(m.lower(), p) for m, p in re.findall(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/[^`\s]*)` \|", DOC, flags=re.M)}


def doc_codes() -> dict[str, int]:
    """Each code of the doc's errors table (the rows that start with a status), with its status."""
    out: dict[str, int] = {}
    for status, codes in re.findall(r"^\| ([1-5]\d\d) \| .*? \| ([^|]*) \|$", DOC, flags=re.M):
        for code in re.findall(r"`([a-z][a-z0-9_]*)`", codes):
            assert code not in out, f"{code} is listed twice"
            out[code] = int(status)
    return out


def service_codes() -> dict[str, int | None]:
    """Each code the API layer answers with, and its status (``None`` where the status comes from the exception:
    Sanic's ``bad_request``)."""
    out: dict[str, int | None] = {}
    for path in sorted((ROOT / "service" / "api").glob("*.py")):
        text = path.read_text()
        for status, code in re.findall(r"\b(?:ApiError|error_response)\(\s*(\w+),\s*\"([a-z_]+)\"", text):
            out[code] = int(status) if status.isdecimal() else None
        for code in re.findall(r"\bbad_body\([^)]*?\"([a-z_]+)\"\)", text):  # bad_body's own codes: 400
            out[code] = 400
        for code in re.findall(r"def bad_body\([^)]*code: str = \"([a-z_]+)\"", text):
            out[code] = 400
    return out


def rule_codes() -> set[str]:
    return {code for path in (ROOT / "service" / "rules").rglob("*.py")
            for code in re.findall(r"\bRuleViolation\(\s*\"([a-z_]+)\"", path.read_text())}


def test_the_scans_find_what_they_look_for():
    """Guards the regular expressions: an empty scan would make the comparisons below vacuous."""
    assert {("get", "/games/{game_id}"), ("post", "/games/{game_id}/commands")} <= doc_routes()
    assert {"version_conflict": 409, "forbidden": 403, "store_busy": 503}.items() <= doc_codes().items()
    assert {"rate_limited": 429, "invalid_command": 400, "not_durable": 503}.items() <= service_codes().items()
    assert {"not_your_turn", "meter_too_low", "card_not_in_hand"} <= rule_codes()


@pytest.mark.parametrize("store_kind", ["embedded"])  # the document is built from the code, not the store
async def test_every_route_of_the_doc_is_in_openapi_and_every_operation_is_in_the_doc(api):
    r = await api.get("/openapi.json")
    assert r.status_code == 200
    operations = {(method, path) for path, ops in r.json()["paths"].items() for method in ops if method in METHODS}
    assert doc_routes() - operations == set(), "docs/api.md names routes /openapi.json does not have"
    assert operations - doc_routes() == set(), "/openapi.json has operations docs/api.md does not name"


def test_every_error_code_of_the_doc_is_the_services_and_every_service_code_is_in_the_doc():
    doc, service, rules = doc_codes(), service_codes(), rule_codes()
    assert sorted(set(service) - set(doc)) == [], "codes the service answers with that docs/api.md does not list"
    assert sorted(set(doc) - set(service) - rules) == [], "codes docs/api.md lists that nothing answers with"
    wrong = {c: (doc[c], service[c]) for c in set(doc) & set(service) if service[c] is not None and doc[c] != service[c]}
    assert wrong == {}, "codes listed under another status than the one the service answers with (doc, service)"
    assert all(doc[c] == 422 for c in set(doc) - set(service)), "a rule's code is a 422"


def test_the_422_examples_in_the_doc_are_rule_codes():
    row = next(line for line in DOC.splitlines() if line.startswith("| 422 |"))
    examples = set(re.findall(r"`([a-z_]+)`", row.split(" | ")[1]))
    assert examples and examples <= rule_codes(), examples - rule_codes()
