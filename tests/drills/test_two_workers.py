"""Two real worker processes on one Redis, whose caches disagree: a player whose seat changed (Trade Places) on one
worker cannot act for the seat they left through the other, whose cache predates the trade.

Each client here is one keep-alive connection, and which worker holds it is read off ``/proc`` (``Service.
worker_serving``), so the test knows it talks to both: worker A sees the trade happen, worker B only served the game
before it.
"""

from __future__ import annotations

import http.client
import json
import os
import signal

from tests.api.helpers import trade_places_seed
from tests.drills.support import ADMIN_HEADERS, bearer


class Client:
    """One keep-alive HTTP connection (so every request of it reaches the same worker)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers={"content-type": "application/json", **(headers or {})})
        r = self.conn.getresponse()
        return r.status, json.loads(r.read() or b"null")

    @property
    def port(self) -> int:
        return self.conn.sock.getsockname()[1]


def one_client_per_worker(service) -> list[Client]:
    """A connection to each of the service's two workers. They accept from one shared listening socket, and the
    kernel hands a new connection to whichever worker takes it first — often the same one every time (64 tries in a
    row reached one worker in a CI run) — so the worker already held is paused while the second connection is made:
    only the other one can accept it."""
    first = Client(service.port)
    assert first.request("GET", "/healthz")[0] == 200  # answered: a worker has accepted the connection
    held = service.worker_serving(first.port)
    assert held is not None, service.workers()
    os.kill(held, signal.SIGSTOP)
    try:
        second = Client(service.port)
        assert second.request("GET", "/healthz")[0] == 200
        other = service.worker_serving(second.port)
    finally:
        os.kill(held, signal.SIGCONT)
    assert other not in (None, held), (held, other, service.workers())
    return [first, second]


def test_a_worker_whose_cache_predates_a_trade_refuses_the_seat_the_player_left(servers, services):
    service = services(servers(), workers=2)
    a, b = one_client_per_worker(service)
    status, created = a.request("POST", "/games", {"kind": "free-parking", "seats": 2, "seed": trade_places_seed()}, ADMIN_HEADERS)
    assert status == 201, created
    game_id = created["game_id"]
    ann, bob = (a.request("POST", f"/games/{game_id}/seats", {"name": name})[1]["token"] for name in ("Ann", "Bob"))
    status, cached = b.request("GET", f"/games/{game_id}", headers=bearer(bob))  # worker B caches the game: Bob at 1
    assert status == 200 and cached["seat"] == 1

    status, v = a.request("GET", f"/games/{game_id}", headers=bearer(bob))
    for body in ({"type": "discard", "card": v["you"]["hand"][0]["id"]}, {"type": "draw_second_chance"}):
        status, answer = a.request("POST", f"/games/{game_id}/commands", body, bearer(bob))
        assert status == 200, answer
    old_hand = answer["view"]["you"]["hand"]
    for token in (ann, bob):  # the named player, then the drawer (rules version 2 asks both)
        status, answer = a.request("POST", f"/games/{game_id}/commands", {"type": "accept"}, bearer(token))
        assert status == 200, answer
    assert any(e["type"] == "places_traded" for e in answer["events"]), answer
    status, log = a.request("GET", f"/games/{game_id}/events", headers=ADMIN_HEADERS)

    # Bob, at seat 0 now, plays his old hand through worker B as if he still sat at seat 1 (whose turn it is)
    status, refused = b.request("POST", f"/games/{game_id}/commands", {"type": "discard", "card": old_hand[0]["id"]}, bearer(bob))
    assert status == 422 and refused["error"]["code"] == "not_your_turn", refused
    status, seen = b.request("GET", f"/games/{game_id}", headers=bearer(bob))
    assert status == 200 and seen["seat"] == 0 and seen["players"][0]["name"] == "Bob", seen
    assert a.request("GET", f"/games/{game_id}/events", headers=ADMIN_HEADERS)[1] == log  # nothing was appended

    # Ann, at seat 1 now, plays her turn through worker B
    mine = b.request("GET", f"/games/{game_id}", headers=bearer(ann))[1]["you"]["hand"]
    status, answer = b.request("POST", f"/games/{game_id}/commands", {"type": "discard", "card": mine[0]["id"]}, bearer(ann))
    assert status == 200 and answer["events"][0]["actor"] == "seat:1", answer

    # both workers sign with the one key made before they started: the same receipt for the same version
    status, seen_a = a.request("GET", f"/games/{game_id}")
    status, seen_b = b.request("GET", f"/games/{game_id}")
    if seen_a["version"] == seen_b["version"]:
        assert seen_a["receipt"] == seen_b["receipt"]
    assert seen_a["receipt"]["key_id"] == seen_b["receipt"]["key_id"]
    assert a.request("GET", "/keys")[1] == b.request("GET", "/keys")[1]


def healthz_answered(client: Client) -> float:
    """``GET /healthz`` answers counted by the ``/metrics`` of whichever worker ``client`` talks to."""
    from prometheus_client.parser import text_string_to_metric_families

    client.conn.request("GET", "/metrics")
    text = client.conn.getresponse().read().decode()
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == "free_parking_responses_total" and s.labels == {"method": "GET", "route": "/healthz", "status": "200"})


def test_each_workers_metrics_count_every_workers_requests(servers, services):
    """Several workers share one folder of metric files (prometheus-client's multi-process mode): a scrape of
    either worker counts the requests both served."""
    service = services(servers(), workers=2)
    a, b = one_client_per_worker(service)
    before = healthz_answered(a)
    for client, times in ((a, 5), (b, 7)):
        for _ in range(times):
            assert client.request("GET", "/healthz")[0] == 200
    assert healthz_answered(b) - before == 12
    assert healthz_answered(a) - before == 12
