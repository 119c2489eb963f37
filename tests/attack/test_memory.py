"""Memory a stranger can make a worker keep for good.

``Games.load`` puts an ``asyncio.Lock`` in ``Games._loading`` under the requested game id and pops it only when
the fold succeeds: a 404 (``_fold`` raises ``not_found``) leaves the id and its lock behind. Any anonymous GET of a
game id that does not exist (``/games/<id>``, ``/events``, ``/audit``, ``/export``, ``/events/stream``, ``/seats``, …)
adds one entry, as long as the path allows (the 8 KiB header limit): measured on a running service, 20,000 GETs of
7,000-character ids grew the worker from 84 MB to 228 MB, never given back.
"""

from __future__ import annotations

import asyncio
import secrets


async def test_404s_for_unknown_game_ids_leave_nothing_behind_in_the_worker(api):
    games = api.app.ctx.games
    ids = ["g_" + secrets.token_hex(2000) for _ in range(300)]  # 4 KB ids: well within the header limit

    async def probe(game_id: str) -> None:
        r = await api.get(f"/games/{game_id}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text

    await asyncio.gather(*(probe(g) for g in ids[:150]))
    for g in ids[150:]:  # one at a time too: no racing needed
        await probe(g)
    leaked = [g for g in games._loading if g in set(ids)]
    held = sum(len(g) for g in leaked)
    assert not leaked, f"{len(leaked)} unknown game ids ({held} bytes of ids, each with a Lock) stay in Games._loading for good"
