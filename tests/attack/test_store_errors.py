"""A Redis that answers, but refuses writes: full (``maxmemory``, ``noeviction``: Redis's default policy) or read-only (a
replica, e.g. after a failover promoted another node). Every write is then a ``ResponseError`` subclass that
``Store._read`` does not count as unavailability, and the API answers **500 internal_error**, "this is a bug",
while ``/healthz`` keeps saying ``ok: true``. Expected: a 503 in the error shape (the store cannot take the write;
nothing was written) — never a 500, which API.md says is a bug for any input.
"""

from __future__ import annotations

import pytest

from tests.attack.conftest import ADMIN_HEADERS, inproc, settings


@pytest.mark.parametrize("refusal", [("config", "set", "maxmemory", "1"), ("replicaof", "127.0.0.1", "1")],
                         ids=["out_of_memory", "read_only_replica"])
async def test_a_redis_that_refuses_writes_is_a_503_not_a_500(own_redis, tmp_path, refusal):
    server = own_redis()
    async with inproc(settings(tmp_path, redis_url=server.url, namespace="attack", projector=False, runner=False)) as api:
        r = await api.post("/games", json={"kind": "free-parking", "seats": 2})
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        server.cli(*refusal)  # from now on Redis refuses every write (OOM / READONLY), still answering reads
        assert (await api.get("/healthz")).json()["ok"] is True
        answers = {
            "POST /players": await api.post("/players", json={"name": "Ann"}),
            "POST /games": await api.post("/games", json={"kind": "free-parking", "seats": 2}, headers=ADMIN_HEADERS),
            "POST /games/{id}/seats": await api.post(f"/games/{game_id}/seats", json={"bot": "random"}),
        }
        bad = {what: (r.status_code, r.json()["error"]["code"]) for what, r in answers.items() if r.status_code != 503}
        assert not bad, f"Redis refusing writes ({' '.join(refusal)}) answered: {bad}"
