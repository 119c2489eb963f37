"""Bot accounts (issue 33, "Bring your own bot"): ``POST /players`` with ``account: "bot"`` registers a program playing
through the API. It is shown as a bot at every table, in the lobby's list and in the ratings, and the server's bots at
its table wait no human pace for it (docs/bots.md, "Bot accounts"). Its rate limits: ``test_bot_account_limits.py``."""

from __future__ import annotations

import asyncio

import pytest

from service.api.bot_budget import BUCKET_META
from tests.api.conftest import bearer, make_settings, served
from tests.api.helpers import assert_error, playable, verified, wait_for

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])
PACE_MS = 600_000
"""Ten minutes a move, were the pace a bot account's: a game that finishes at all did not wait it."""


async def register(api, name: str, **extra) -> dict:
    r = await api.post("/players", json={"name": name, **extra})
    assert r.status_code == 201, r.text
    return r.json()


async def table(api, kind: str, seated: list[dict | str], **options) -> str:
    """A ``kind`` game seated in order: a registered player (their registration's answer) or a server bot's kind."""
    r = await api.post("/games", json={"kind": kind, "seats": len(seated), "options": options})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    for who in seated:
        body, auth = ({"bot": who}, {}) if isinstance(who, str) else ({}, bearer(who["token"]))
        assert (await api.post(f"/games/{game_id}/seats", json=body, headers=auth)).status_code == 201
    return game_id


MONOPOLY_PLAIN = ("roll", "buy", "choose_tax", "pass_bid", "reject_trade", "claim_buildings", "declare_bankruptcy")
"""Monopoly played plainly (``helpers.plain_monopoly_move``): never an owner's move or a trade offer, which could go
on for ever; a debt it cannot pay, bankruptcy."""


def choose(view: dict) -> dict | None:
    """The card game's first legal command but resign; Monopoly's plain one, if any."""
    moves = playable(view["legal"])
    if view["kind"] != "monopoly":
        return moves[0] if moves else None
    return next((c for kind in MONOPOLY_PLAIN for c in moves if c["type"] == kind), None)


async def play_out(api, game_id: str, tokens: list[str]) -> dict:
    """The registered seats play (``choose``) until the game ends; the server plays its bots. Answers the finished
    game's spectator view."""
    async def over():
        views = [(await api.get(f"/games/{game_id}", headers=bearer(t))).json() for t in tokens]
        if views[0]["status"] == "finished":
            return views[0]
        for token, v in zip(tokens, views, strict=True):
            if (move := choose(v)) is not None:
                command = dict(move, expected_version=v["version"])
                r = await api.post(f"/games/{game_id}/commands", json=command, headers=bearer(token))
                assert r.status_code in (200, 409), r.text  # 409: a bot moved first
                return None
        await asyncio.sleep(0.02)  # nothing to do for the people here: the server's bots are on
        return None

    return await wait_for(over, 120, every=0)


async def test_each_account_kind_is_registered_and_shown(api):
    ann = await register(api, "Ann")
    robo = await register(api, "Robo", account="bot")
    pat = await register(api, "Pat", account="person")
    assert (ann["account"], robo["account"], pat["account"]) == ("person", "bot", "person")
    for who, account in ((ann, "person"), (robo, "bot"), (pat, "person")):
        shown = (await api.get(f"/players/{who['player_id']}")).json()
        assert shown["account"] == account and shown["name"] == who["name"]


async def test_a_bad_account_is_refused_and_registers_nothing(api):
    store = api.app.ctx.store
    before = len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:player:*")])
    for value in ("robot", "Bot", "", None, 1, ["bot"], {"kind": "bot"}):
        error = assert_error(await api.post("/players", json={"name": "Eve", "account": value}), 400, "invalid_request")
        assert "$.account" in error["message"], error
    error = assert_error(await api.post("/players", json={"name": "Eve", "bot": "greedy"}), 400, "invalid_request")
    assert "bot" in error["message"], error  # a seat's field, not a player's: unknown here
    assert len([k async for k in store.r.scan_iter(match=f"{store.keys.ns}:player:*")]) == before


async def test_every_view_of_a_table_shows_its_bot_account_as_a_bot(api):
    ann, robo = await register(api, "Ann"), await register(api, "Robo", account="bot")
    game_id = await table(api, "free-parking", [robo, ann, "greedy"])
    expected = [("Robo", None, "bot"), ("Ann", None, "person"), (None, "greedy", "bot")]
    for token in (None, robo["token"], ann["token"]):  # a spectator's view, and each seat's own
        players = (await api.get(f"/games/{game_id}", headers=bearer(token) if token else {})).json()["players"]
        assert [(p["name"] if p["bot"] is None else None, p["bot"], p["account"]) for p in players] == expected
    listed = next(g for g in (await api.get("/games", params={"status": "playing"})).json()["games"]
                  if g["game_id"] == game_id)
    assert listed["players"] == [{"name": "Robo", "account": "bot"}, {"name": "Ann"},
                                 {"name": listed["players"][2]["name"], "bot": "greedy", "account": "bot"}]
    for kind, seats in (("monopoly", [ann, robo]), ("solitaire", [robo])):
        game_id = await table(api, kind, seats)
        view = (await api.get(f"/games/{game_id}")).json()
        accounts = [p["account"] for p in view["seats"]] if kind == "monopoly" else [view["account"]]
        assert accounts == ["person", "bot"][2 - len(seats):], view


async def test_a_bot_accounts_game_with_server_bots_waits_no_human_pace_replays_and_is_rated_as_a_bot(store_kind, tmp_path):
    """At a table of a bot account and the server's bots, with a ten-minute pace and chance window: the game is played
    out (the server's bots move at once), every move recorded well inside the pace after the event before it, the
    log re-decided by ``replays verify`` (the account's seat is recorded in it: nothing else is), and each rated
    player's row in ``GET /ratings`` says it is a bot. A person's row says ``person``: ``tests/rules/test_ratings.py``."""
    settings = make_settings(store_kind, tmp_path, human_pace_ms=PACE_MS, human_chance_ms=PACE_MS)
    async with served(settings) as api:
        for kind, bots, options in (("free-parking", ["greedy", "random"], {}),
                                    ("monopoly", ["strategic"], {"max_rounds": 3})):
            robo = await register(api, f"Robo {kind}", account="bot")
            game_id = await table(api, kind, [robo, *bots], **options)
            await play_out(api, game_id, [robo["token"]])
            envelopes = await verified(api, game_id)
            server = [env for env in envelopes[1:] if env.actor.startswith("seat:")]  # the account's moves too
            assert len(server) > 2 * len(bots)
            assert all(env.at - envelopes[env.seq - 2].at < PACE_MS for env in server)

            async def rated(kind=kind, bots=bots, robo=robo):
                rows = (await api.get("/ratings", params={"kind": kind})).json()["players"]
                wanted = {robo["player_id"], *(f"bot:{b}" for b in bots)}
                return rows if wanted <= {r["player_id"] for r in rows} else None

            rows = await wait_for(rated, 60)
            assert {r["account"] for r in rows} == {"bot"}, rows


async def test_a_bot_account_queues_and_is_seated_as_a_bot_its_table_charged_to_its_address(store_kind, tmp_path):
    """Alone in the queue, a bot account is seated with the server's bots after the fill wait; with the limits on,
    its table names its address's bot accounts' bucket for the bots' moves (``bot_budget.py``)."""
    settings = make_settings(store_kind, tmp_path, queue_fill_ms=500, queue_interval_ms=100, rate_limits=True)
    async with served(settings) as api:
        robo = await register(api, "Robo", account="bot")
        r = await api.post("/queue", json={"kind": "free-parking", "seats": 2}, headers=bearer(robo["token"]))
        assert r.status_code == 202, r.text

        async def seated():
            status = (await api.get("/queue", headers=bearer(robo["token"]))).json()
            return status if status["state"] == "seated" else None

        status = await wait_for(seated, 30)
        view = (await api.get(f"/games/{status['game_id']}")).json()
        assert [p["account"] for p in view["players"]] == ["bot", "bot"] and view["players"][status["seat"]]["bot"] is None
        meta = await api.app.ctx.store.meta(status["game_id"])
        assert meta[BUCKET_META].startswith("bot_commands:addr:"), meta
