"""Every server bot's move re-derived from its own seat (issue 30; docs/fairness.md): bots seated over HTTP, played by
the service's runner to the end, and the export's verdict re-derives each of their commands from the seat's own world
— every bot of every kind. ``tests/bots/test_peeking_bots.py`` shows the check refuses bots that read the true table."""

from __future__ import annotations

import msgspec
import pytest

from replays.verify import verify
from service.events.export import load
from tests.api.conftest import ADMIN_HEADERS
from tests.api.helpers import view, wait_for

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])

TABLES = [
    ("free-parking", ["random", "greedy", "greedy"]),
    ("free-parking", ["expert", "greedy"]),
    ("monopoly", ["random", "strategic"]),
    ("solitaire", ["greedy"]),
    ("solitaire", ["solver"]),
]


@pytest.mark.parametrize(("kind", "bots"), TABLES, ids=lambda t: t if isinstance(t, str) else "-".join(t))
async def test_every_bot_move_of_a_game_the_service_played_is_re_derived_from_its_own_seat(api, kind, bots):
    options = {"max_rounds": 12} if kind == "monopoly" else {}  # a timed game: over in twelve rounds
    r = await api.post("/games", json={"kind": kind, "seats": len(bots), **({"options": options} if options else {})})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    for name in bots:
        r = await api.post(f"/games/{game_id}/seats", json={"bot": name})
        assert r.status_code == 201, r.text

    async def finished():
        v = await view(api, game_id)
        return v if v["status"] == "finished" else None

    await wait_for(finished, seconds=240)
    header, envelopes = load((await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)).content)
    taken = [msgspec.json.decode(e.public)["player"] for e in envelopes if e.type == "seat_taken"]
    assert all(p["bot_version"] == 1 for p in taken), taken
    moves = sum(e.actor.startswith("seat:") and e.command_id is not None for e in envelopes)
    verdict = verify(header, envelopes)
    assert verdict.ok, verdict.summary()
    assert verdict.bots == f"{moves} bot moves re-derived from their seats' own views", verdict.summary()
