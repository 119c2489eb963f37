"""What an operator sees (docs/operating.md): a request id on every answer and in every error, Prometheus metrics a
parser reads, readiness that knows the projectors' lag, and one JSON access line per request."""

from __future__ import annotations

import io
import json
import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.api.conftest import bearer, fresh_app, make_settings
from tests.api.helpers import assert_error, seeded_game, view
from tests.http import serving
from tests.stores import drop_namespace_at


async def scrape(api) -> dict[str, list]:
    r = await api.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain"), r.text[:300]
    return {family.name: family.samples for family in text_string_to_metric_families(r.text)}


def value(samples: list, name: str, **labels) -> float:
    return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


async def test_every_answer_names_its_request_and_keeps_a_callers_own_id(api):
    r = await api.get("/healthz")
    assert len(r.headers["x-request-id"]) == 16
    assert (await api.get("/healthz", headers={"x-request-id": "lb-7f3a.2"})).headers["x-request-id"] == "lb-7f3a.2"
    odd = await api.get("/games/none", headers={"x-request-id": "a b;" * 30})  # not an id: one of ours instead
    error = assert_error(odd, 404, "not_found")  # checks detail's request_id against the header
    assert odd.headers["x-request-id"] != "a b;" * 30 and error["detail"] == {"id": "none"}


async def test_metrics_count_commands_by_outcome_and_read_the_store(api):
    before = await scrape(api)
    game_id, tokens = await seeded_game(api, 2, "0" * 64)
    views = [await view(api, game_id, t) for t in tokens]
    token, mine = next((t, v) for t, v in zip(tokens, views, strict=True) if any(c["type"] == "discard" for c in v["legal"]))
    other = tokens[1 - tokens.index(token)]
    card = mine["you"]["hand"][0]["id"]
    assert (await api.post(f"/games/{game_id}/commands", json={"type": "discard", "card": card}, headers=bearer(other))).status_code == 422
    assert (await api.post(f"/games/{game_id}/commands", json={"type": "discard", "card": card}, headers=bearer(token))).status_code == 200
    after = await scrape(api)
    commands = "free_parking_commands"  # a counter's family, its samples named ..._total
    for outcome in ("accepted", "not_your_turn"):
        grew = value(after[commands], f"{commands}_total", kind="free-parking", type="discard", outcome=outcome) - value(
            before.get(commands, []), f"{commands}_total", kind="free-parking", type="discard", outcome=outcome)
        assert grew == 1, (outcome, after[commands])
    assert value(after["free_parking_games"], "free_parking_games", status="playing") >= 1
    assert len(after["free_parking_projector_lag"]) == 16  # one figure per partition
    assert value(after["free_parking_archive_backlog"], "free_parking_archive_backlog") >= 0
    route = "/games/<game_id:str>/commands"
    seconds = "free_parking_request_seconds"
    assert value(after[seconds], f"{seconds}_count", method="POST", route=route) >= 2
    assert value(after["free_parking_appends"], "free_parking_appends_total", outcome="ok") >= 1


@pytest.fixture(params=["embedded", "redis"])
def ops_kind(request):
    return request.param


async def serve(ops_kind, tmp_path, **overrides):
    settings = make_settings(ops_kind, tmp_path, **overrides)
    return settings, fresh_app(settings)


async def test_ready_when_the_projectors_keep_up_and_not_when_they_fall_behind(ops_kind, tmp_path):
    settings, app = await serve(ops_kind, tmp_path, projector=False, ready_lag=0)
    try:
        async with serving(app) as client:
            r = await client.get("/readyz")
            assert r.status_code == 200 and r.json() == {"ready": True, "store": True, "projector_lag": 0, "lag_bound": 0,
                                                "archive": True}
            assert (await client.post("/games", json={"kind": "solitaire"})).status_code == 201  # no projector reads it
            r = await client.get("/readyz")
            assert r.status_code == 503 and r.json()["ready"] is False and r.json()["projector_lag"] >= 1, r.text
            assert (await client.get("/healthz")).status_code == 200  # alive all the same
    finally:
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)


async def test_the_access_log_is_one_json_line_per_request(ops_kind, tmp_path):
    settings, app = await serve(ops_kind, tmp_path, access_log=True)
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    logging.getLogger("free_parking.access").addHandler(handler)
    try:
        async with serving(app) as client:
            ok = await client.get("/healthz")
            missing = await client.get("/games/nope")
    finally:
        logging.getLogger("free_parking.access").removeHandler(handler)
        if settings.redis_url:
            await drop_namespace_at(settings.redis_url, settings.namespace)
    logged = [json.loads(line) for line in lines.getvalue().splitlines()]
    ids = {entry["request_id"]: entry for entry in logged}
    assert ids[ok.headers["x-request-id"]]["status"] == 200 and ids[ok.headers["x-request-id"]]["path"] == "/healthz"
    entry = ids[missing.headers["x-request-id"]]
    assert entry["status"] == 404 and entry["method"] == "GET" and entry["route"] == "/games/<game_id:str>"
    assert entry["ms"] >= 0 and entry["client"] == "127.0.0.1"


async def test_not_ready_when_the_archive_cannot_be_reached(tmp_path):
    """Archived games are read from the archive: a worker that cannot reach it is alive, and not ready."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    _, app = await serve("embedded", tmp_path, archive_dir=str(blocker / "archive"))
    async with serving(app) as client:
        r = await client.get("/readyz")
        assert r.status_code == 503 and r.json()["archive"] is False and r.json()["store"] is True, r.text
        assert (await client.get("/healthz")).status_code == 200
