"""``GET /ratings`` and a player's ``ratings`` over HTTP, and the offline recomputation: ``python -m replays ratings``
on the games' exports prints the very table the service answers, to the last digit (RULES.md §4)."""

from __future__ import annotations

import asyncio

import msgspec

from replays.__main__ import main as replays_main
from replays.ratings import recompute
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import assert_error, playable, wait_for


async def _game(api, seats: list[str], tokens: dict[str, str], **extra) -> str:
    """A card game seated in order: a registered player's name (their token) or ``bot:<kind>``."""
    headers = ADMIN_HEADERS if "seed" in extra else {}
    r = await api.post("/games", json={"kind": "free-parking", "seats": len(seats), **extra}, headers=headers)
    game_id = r.json()["game_id"]
    for who in seats:
        body, auth = ({"bot": who[4:]}, {}) if who.startswith("bot:") else ({}, bearer(tokens[who]))
        assert (await api.post(f"/games/{game_id}/seats", json=body, headers=auth)).status_code == 201
    return game_id


async def _play_out(api, game_id: str, tokens: list[str]) -> int:
    """The people's seats play their first legal command until the game ends (the server's bots play theirs)."""
    while True:
        views = [(await api.get(f"/games/{game_id}", headers=bearer(t))).json() for t in tokens]
        if views[0]["status"] == "finished":
            return views[0]["version"]
        moved = False
        for token, v in zip(tokens, views, strict=True):
            if playable(v["legal"]):  # people play on: none resigns by chance
                await api.post(f"/games/{game_id}/commands", json=playable(v["legal"])[0], headers=bearer(token))
                moved = True
                break
        if not moved:
            await asyncio.sleep(0.02)


async def test_the_service_and_the_offline_tool_give_the_same_ratings(api, tmp_path, capsys):
    people = {name: (await api.post("/players", json={"name": name})).json() for name in ("Ann", "Bob")}
    tokens = {name: p["token"] for name, p in people.items()}
    tables = [["Ann", "bot:greedy"], ["Ann", "Bob", "bot:greedy"], ["Bob", "bot:expert"], ["bot:greedy", "Ann", "bot:greedy"]]
    games = [(await _game(api, seats, tokens), [tokens[s] for s in seats if not s.startswith("bot:")]) for seats in tables]
    fixed = await _game(api, ["Ann", "bot:greedy"], tokens, seed="ab" * 32)  # an admin's seed: not rated
    games.append((fixed, [tokens["Ann"]]))
    for game_id, mine in games:
        final = await _play_out(api, game_id, mine)

        async def projected(game_id=game_id, final=final) -> bool:
            return (await api.get(f"/games/{game_id}/scores")).json()["version"] == final

        await wait_for(projected, 60)
        (tmp_path / f"{game_id}.ndjson").write_bytes((await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)).content)

    served = (await api.get("/ratings", params={"kind": "free-parking"})).json()
    assert replays_main(["ratings", str(tmp_path), "--json", "--kind", "free-parking"]) == 0
    offline = msgspec.json.decode(capsys.readouterr().out)
    assert served == offline
    rows = {row["player_id"]: row for row in served["players"]}
    ann, bob = people["Ann"]["player_id"], people["Bob"]["player_id"]
    assert rows[ann]["games"] == 3  # the fixed-seed game is not rated; the game Ann played with two greedy seats is
    assert rows[bob]["games"] == 2
    assert rows["bot:greedy"]["games"] == 2  # it held several seats of the last game: that one did not move it
    assert rows["bot:expert"]["games"] == 1 and rows["bot:expert"]["name"] == "expert bot"
    assert [r["rating"] for r in served["players"]] == sorted((r["rating"] for r in served["players"]), reverse=True)
    assert all(r["rating"] == r["mu"] - 3 * r["sigma"] for r in served["players"])

    me = (await api.get(f"/players/{ann}")).json()
    assert me["ratings"] == {"free-parking": {k: rows[ann][k] for k in ("rating", "mu", "sigma", "games")}}
    assert (await api.get("/ratings", params={"limit": "1"})).json()["players"] == served["players"][:1]

    # each game's change: the last rated game of each person leaves them at their rating in the table
    assert (await api.get(f"/games/{fixed}/ratings")).json() == {"game_id": fixed, "kind": "free-parking", "rated": False,
                                                                 "changes": []}
    _, rated = recompute([str(tmp_path)])
    last: dict[str, dict] = {}
    for game in sorted(rated, key=lambda g: g.order):
        answer = (await api.get(f"/games/{game.game_id}/ratings")).json()
        assert answer["rated"] and {c["seat"] for c in answer["changes"]} == {p.seat for p in game.places}
        last.update({c["player_id"]: c for c in answer["changes"]})
    assert {pid: c["after"] for pid, c in last.items()} == {pid: r["rating"] for pid, r in rows.items()}
    assert_error(await api.get("/games/g_0000000000000000/ratings"), 404)
    assert (await api.get("/ratings", params={"kind": "monopoly"})).json() == {"kind": "monopoly", "players": []}


async def test_a_bad_ratings_query_is_refused(api):
    for params in ({"kind": "solitaire"}, {"kind": ""}, {"kind": "chess"}, {"limit": "0"}, {"limit": "201"}, {"limit": "x"}):
        assert_error(await api.get("/ratings", params=params), 400)
