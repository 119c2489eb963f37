"""Players and games: registering, creating, listing, joining, the deal, the view, the seed's commitment."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re

from service.bots import bot, next_move
from service.sim.games import new_game as simulated_game
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import drive, fill, log_of, new_game, seeded_game, view

RESIGN = {"type": "resign"}
"""What a seat off turn may still do: resign (every seat still in may, at any moment)."""

HEX64 = re.compile(r"^[0-9a-f]{64}$")


async def test_healthz_names_the_store(api, store_kind):
    r = await api.get("/healthz")
    named = {"cluster": "redis"}.get(store_kind, store_kind)  # the API names the kind of store: a cluster is Redis
    assert r.status_code == 200 and r.json() == {"ok": True, "store": named}
    if store_kind == "cluster":  # found by itself (cluster="auto"), and every primary answered the ping
        assert api.app.ctx.store.cluster and len(api.app.ctx.store.r.get_primaries()) == 3


async def test_registering_gives_a_player_id_and_a_token_of_their_own(api):
    a = await api.post("/players", json={"name": "Ann"})
    b = await api.post("/players", json={"name": "Ann"})
    assert a.status_code == b.status_code == 201
    assert set(a.json()) >= {"player_id", "name", "token"} and a.json()["name"] == "Ann"
    assert a.json()["player_id"] != b.json()["player_id"] and a.json()["token"] != b.json()["token"]
    r = await api.get(f"/players/{a.json()['player_id']}")
    assert r.status_code == 200 and r.json()["name"] == "Ann"
    assert (await api.get("/players/p_nobody")).status_code == 404


async def test_creating_a_game_commits_to_a_seed_that_is_revealed_at_the_end(api):
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "options": {"response_seconds": 5}})
    assert r.status_code == 201, r.text
    created = r.json()
    assert set(created) == {"game_id", "kind", "seats", "seed_commitment", "version", "head", "seeding"}  # API.md's, and how the seed is made
    assert (created["kind"], created["seats"], created["version"], created["seeding"]) == ("free-parking", 2, 1, "combined")
    assert HEX64.match(created["seed_commitment"]) and HEX64.match(created["head"])
    v = await view(api, created["game_id"])
    assert (v["status"], v["version"], v["head"]) == ("waiting", 1, created["head"])
    _, _, log = await log_of(api, created["game_id"])
    assert log[0]["type"] == "game_created" and log[0]["public"]["seed_commitment"] == created["seed_commitment"]
    assert log[0]["public"]["config"] == {"seats": 2, "response_seconds": 5}
    await fill(api, created["game_id"], 2)
    await drive(api.app, created["game_id"])
    _, _, log = await log_of(api, created["game_id"])
    revealed = [e["public"]["seed"] for e in log if e["type"] == "seed_revealed"]
    assert len(revealed) == 1 and log[-1]["type"] == "seed_revealed"
    assert hashlib.sha256(bytes.fromhex(revealed[0])).hexdigest() == created["seed_commitment"]
    export = await api.get(f"/games/{created['game_id']}/export")  # open to anyone now
    assert export.status_code == 200 and revealed[0] in export.text


async def test_an_admin_seed_deals_the_same_game_every_time(api):
    seed = hashlib.sha256(b"the same deal").hexdigest()
    hands = []
    for _ in range(2):
        r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": seed}, headers=ADMIN_HEADERS)
        assert r.status_code == 201 and r.json()["seed_commitment"] == hashlib.sha256(bytes.fromhex(seed)).hexdigest()
        tokens = await fill(api, r.json()["game_id"], 2)
        hands.append([[c["id"] for c in (await view(api, r.json()["game_id"], t))["you"]["hand"]] for t in tokens])
    assert hands[0] == hands[1]
    other = await seeded_game(api, 2, hashlib.sha256(b"another deal").hexdigest())
    assert [[c["id"] for c in (await view(api, other[0], t))["you"]["hand"]] for t in other[1]] != hands[0]


async def test_the_lobby_shows_each_games_turn_clock_before_anyone_joins(api):
    clocked = await new_game(api, 2, turn_seconds=90, forfeit_after=2)
    default_forfeit = await new_game(api, 2, turn_seconds=30)
    unclocked = await new_game(api, 2)
    solitaire = (await api.post("/games", json={"kind": "solitaire"})).json()["game_id"]
    listed = {g["game_id"]: (g["turn_seconds"], g["forfeit_after"]) for g in (await api.get("/games")).json()["games"]}
    views = {g: ((v := await view(api, g)).get("turn_seconds"), v.get("forfeit_after")) for g in (clocked, default_forfeit)}
    assert listed[clocked] == (90, 2)
    assert listed[default_forfeit] == (30, views[default_forfeit][1]) and listed[default_forfeit][1] is not None
    assert listed[unclocked] == (None, None) and listed[solitaire] == (None, None)


async def test_games_are_listed_newest_first_with_their_status_and_seats_taken(api):
    waiting = await new_game(api, 3)
    half = await new_game(api, 3)
    await api.post(f"/games/{half}/seats", json={"name": "Ann"})
    player = (await api.post("/players", json={"name": "Bo"})).json()
    await api.post(f"/games/{half}/seats", json={}, headers=bearer(player["token"]))
    playing = await new_game(api, 2)
    await fill(api, playing, 2)
    finished = await new_game(api, 2)
    for name in ("greedy", "greedy"):
        await api.post(f"/games/{finished}/seats", json={"bot": name})
    for _ in range(300):  # the server's runner plays the bots' game to its end
        if (await view(api, finished))["status"] == "finished":
            break
        await asyncio.sleep(0.05)

    async def listed(**params):
        r = await api.get("/games", params=params)
        assert r.status_code == 200, r.text
        return [(g["game_id"], g["kind"], g["seats"], g["taken"], g["status"]) for g in r.json()["games"]]

    everything = await listed()
    assert everything == [
        (finished, "free-parking", 2, 2, "finished"),
        (playing, "free-parking", 2, 2, "playing"),
        (half, "free-parking", 3, 2, "waiting"),
        (waiting, "free-parking", 3, 0, "waiting"),
    ]
    assert await listed(status="waiting") == everything[2:]
    assert await listed(status="playing") == everything[1:2]
    assert await listed(status="finished") == everything[:1]
    assert await listed(kind="free-parking") == everything
    assert await listed(kind="monopoly") == []
    assert await listed(limit=1) == everything[:1]
    assert await listed(status="waiting", limit=1) == everything[2:3]
    assert await listed(kind="free-parking", limit=3) == everything[:3]
    created = [g["created_at"] for g in (await api.get("/games")).json()["games"]]
    assert created == sorted(created, reverse=True)


async def test_a_lobby_page_reads_the_metadata_of_its_limit_whatever_else_the_store_holds(api):
    """A page of one kind reads that kind's index, so it costs what its ``limit`` says: forty newer solitaires leave
    a page of two card games reading two games' metadata (the index itself is read ``limit`` deep per partition)."""
    cards = [await new_game(api, 2) for _ in range(3)]
    for _ in range(40):
        r = await api.post("/games", json={"kind": "solitaire"})
        assert r.status_code == 201, r.text
    store, read = api.app.ctx.store, []
    metas = store.metas

    async def counted(game_ids):
        read.append(len(game_ids))
        return await metas(game_ids)

    store.metas = counted
    r = await api.get("/games", params={"kind": "free-parking", "limit": 2})
    assert [g["game_id"] for g in r.json()["games"]] == cards[:0:-1]
    assert read == [2]
    r = await api.get("/games", params={"limit": 5})
    assert len(r.json()["games"]) == 5 and read == [2, 5]


async def test_joining_by_name_by_player_token_and_as_a_bot(api):
    game_id = await new_game(api, 3)
    guest = await api.post(f"/games/{game_id}/seats", json={"name": "Guest"})
    assert guest.status_code == 201 and guest.json()["seat"] == 0 and guest.json()["token"]
    player = (await api.post("/players", json={"name": "Reg"})).json()
    joined = await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(player["token"]))
    assert joined.status_code == 201, joined.text
    assert joined.json()["seat"] == 1
    assert joined.json()["token"] == player["token"], "a registered player keeps their own token"
    assert joined.json()["player_id"] == player["player_id"]
    v = await view(api, game_id, player["token"])
    assert v["seat"] == 1 and v["players"][1]["name"] == "Reg" and v["players"][1]["player_id"] == player["player_id"]
    assert (await view(api, game_id, guest.json()["token"]))["seat"] == 0
    assert v["status"] == "waiting" and v["legal"] == [] and v["you"]["hand"] == []
    bot_seat = await api.post(f"/games/{game_id}/seats", json={"bot": "greedy"})
    assert bot_seat.status_code == 201 and bot_seat.json()["seat"] == 2
    v = await view(api, game_id, player["token"])
    assert v["players"][2]["bot"] == "greedy" and v["status"] == "playing"
    _, _, log = await log_of(api, game_id)
    seated = [e["public"]["player"] for e in log if e["type"] == "seat_taken"]
    assert seated[0]["guest"] is True and seated[0]["name"] == "Guest"
    assert seated[1] == {"name": "Reg", "player_id": player["player_id"]}
    assert seated[2]["bot"] == "greedy"


async def test_the_game_deals_the_moment_the_last_seat_is_taken(api):
    game_id = await new_game(api, 3)
    tokens = []
    for i in range(3):
        before = await view(api, game_id)
        assert before["status"] == "waiting" and before["turn_number"] == 0
        r = await api.post(f"/games/{game_id}/seats", json={"name": f"P{i}"})
        tokens.append(r.json()["token"])
    version, head, log = await log_of(api, game_id)
    last_seat = max(e["seq"] for e in log if e["type"] == "seat_taken")
    batch = log[last_seat - 1:]
    assert [e["type"] for e in batch[:4]] == ["seat_taken", "round_dealt", "turn_began", "cards_drawn"]
    assert len({e["at"] for e in batch}) == 1 and all(e["command"] is None for e in batch[1:]), "the deal is not part of the last seat's batch"
    views = [await view(api, game_id, t) for t in tokens]
    assert all(v["status"] == "playing" and v["version"] == version and v["head"] == head for v in views)
    assert [len(v["you"]["hand"]) for v in views] == [5, 6, 5]  # seat 1 plays first and has drawn to six
    assert views[1]["turn"] == 1 and views[1]["legal"] and views[0]["legal"] == views[2]["legal"] == [RESIGN]


async def test_every_command_the_view_lists_as_legal_is_accepted(api):
    """API.md: each command of ``legal``, sent with ``expected_version``, gets 200 or 409 — never 422. The same
    seed deals the same game, so each sampled command is tried on a game of its own."""
    seed = hashlib.sha256(b"legal is legal").hexdigest()
    game_id, tokens = await seeded_game(api, 2, seed)
    legal = (await view(api, game_id, tokens[1]))["legal"]
    kinds = {c["type"] for c in legal}
    assert {"feed_meter", "swap_three", "discard"} <= kinds
    sample = [next(c for c in legal if c["type"] == k) for k in sorted(kinds)] + random.Random(0).sample(legal, 3)
    for command in sample:
        game_id, tokens = await seeded_game(api, 2, seed)
        v = await view(api, game_id, tokens[1])
        assert v["legal"] == legal
        r = await api.post(f"/games/{game_id}/commands", json=dict(command, expected_version=v["version"]), headers=bearer(tokens[1]))
        assert r.status_code == 200, f"{command} → {r.status_code} {r.text}"
        assert r.json()["events"][0]["command"] == command


def _trade_seed(seats: int = 2) -> str:
    """A seed whose greedy game (``drive``'s moves) trades places early."""
    for i in range(200):
        seed = hashlib.sha256(b"trade-%d" % i).digest()
        sim = simulated_game("free-parking", seats, seed, "g_search", ["greedy"] * seats)
        rules, rnd, players = sim.game.rules, random.Random(0), [bot("free-parking", "greedy")] * seats
        for _ in range(150):
            if rules.status_of(sim.game.state) == "finished":
                break
            seat, command = next_move(rules, sim.game.state, players, rnd)
            if any(e.type == "places_traded" for e in sim.send(command, seat)):
                return seed.hex()
    raise AssertionError("no seed trades places early")


async def test_players_who_trade_places_keep_their_tokens_and_change_seats(api):
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": _trade_seed()}, headers=ADMIN_HEADERS)
    game_id = r.json()["game_id"]
    players = [(await api.post("/players", json={"name": name})).json() for name in ("Ann", "Bob")]
    for p in players:
        assert (await api.post(f"/games/{game_id}/seats", json={}, headers=bearer(p["token"]))).status_code == 201
    await drive(api.app, game_id, lambda g: g.state.seats[0].player.player_id != players[0]["player_id"])
    _, _, log = await log_of(api, game_id)
    assert [e for e in log if e["type"] == "places_traded"]
    for p, now in zip(players, (1, 0), strict=True):
        v = await view(api, game_id, p["token"])
        assert v["seat"] == now and v["players"][now]["player_id"] == p["player_id"] and v["players"][now]["name"] == p["name"]
