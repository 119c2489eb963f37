"""One anonymous client grows the store without bound through a single game.

docs/limits.md limits *new games and players* per client because "each game is kept in the store for good", and says
other requests need no limit: "reads and commands are bounded by the games they touch". A solitaire is not bounded:
undo is unlimited (docs/rules-solitaire.md) and each ``move`` / ``undo`` pair appends two events kept for good, the
``undone`` one with the whole layout written out (~700 bytes of JSON). Measured against a running embedded service:
600 commands in 4.1 s from one client on one connection, +470 KB of journal (and the same in the embedded store's
memory, which holds everything): about 400 MB an hour per connection, from one game the limiter counted once. (A
Monopoly game can cycle ``offer_trade`` / ``withdraw_trade`` for ever in the same way.)

Expected: some bound — events per game, or commands per client — so that the premise "bounded by the games they
touch" holds. Here: a solitaire never needs more than a few hundred events to be played out, so 200 in one game
from one client must meet a refusal somewhere.
"""

from __future__ import annotations

from tests.attack.conftest import bearer

BOUND = 200


async def test_one_client_cannot_append_without_bound_to_one_solitaire(api):
    game = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    token = (await api.post(f"/games/{game}/seats", json={"name": "Solo"})).json()["token"]
    view = (await api.get(f"/games/{game}", headers=bearer(token))).json()
    move = next(c for c in view["legal"] if c["type"] == "move")
    refused = []
    for i in range(BOUND // 2 + 10):
        for body in (move, {"type": "undo"}):
            r = await api.post(f"/games/{game}/commands", json=body, headers=bearer(token))
            if r.status_code != 200:
                refused.append((r.status_code, r.json()["error"]["code"]))
        if refused:
            break
    version = (await api.get(f"/games/{game}")).json()["version"]
    store = api.app.ctx.store
    size = sum(len(e) for e in await store.r.xrange(store.keys.stream(game)) for e in [str(e)])
    assert refused or version <= BOUND, (
        f"one client appended {version} events (~{size // 1024} KiB in the store) to one solitaire, none refused")
