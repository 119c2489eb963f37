"""Bots hold back for a chance a person at the table can take out of turn (issue 31), read off the log: each event's
recorded ``at`` is when the service appended it, so "the bot's next event came at least the window after the event that
opened the person's chance" is a bound the service guarantees, checked on the log, never on a clock.

The games are dealt from admin-fixed seeds found offline with the rules code (``tests/api/chance_seeds.py``), so the
chance opens for certain: in the card game the greedy bot's first play is a Free Parking errand at Violation — Ann,
holding Officer Jones, may play it on the bot; in Monopoly Ann declines the first property she lands on and the two
strategic bots bid it up against her.
"""

from __future__ import annotations

import pytest

from tests.api.chance_seeds import auction_seed, officer_jones_seed
from tests.api.conftest import ADMIN_HEADERS, bearer, make_settings, served
from tests.api.helpers import view
from tests.api.test_bot_pace import events, until

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])
CHANCE_MS = 400


async def seated_game(api, kind: str, seed: bytes, bots: tuple[str, ...]) -> tuple[str, str]:
    """A game dealt from ``seed``: Ann in seat 0, then ``bots``. Its id and Ann's token."""
    r = await api.post("/games", json={"kind": kind, "seats": 1 + len(bots), "seed": seed.hex(), "options": {}},
                       headers=ADMIN_HEADERS)  # fmt: skip
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    r = await api.post(f"/games/{game_id}/seats", json={"name": "Ann"})
    assert r.status_code == 201 and r.json()["seat"] == 0, r.text
    token = r.json()["token"]
    for bot in bots:
        assert (await api.post(f"/games/{game_id}/seats", json={"bot": bot})).status_code == 201
    return game_id, token


async def the_bots_free_parking(api, game_id: str) -> tuple[list[dict], dict]:
    """The log once the bot's first play (the Free Parking errand that opens Ann's Officer Jones) is in it, and that
    play's event."""

    async def played():
        log = await events(api, game_id)
        return log if any(e.get("actor") == "seat:1" for e in log) else None

    log = await until(played, "the bot's first play")
    opened = next(e for e in log if e.get("actor") == "seat:1")
    assert opened["type"] == "errand_run" and opened["public"]["free_parking"], opened
    return log, opened


async def test_after_the_bot_opened_an_officer_jones_its_next_move_waits_the_chance_window(store_kind, tmp_path):
    async with served(make_settings(store_kind, tmp_path, human_chance_ms=CHANCE_MS)) as api:  # the pace itself: 0
        game_id, ann = await seated_game(api, "free-parking", officer_jones_seed(), ("greedy",))
        _, opened = await the_bots_free_parking(api, game_id)

        async def moved_on():
            log = await events(api, game_id)
            return next((e for e in log if e["seq"] > opened["seq"]), None)

        after = await until(moved_on, "the bot's next move")
        assert after["actor"] == "seat:1", after  # Ann let the chance pass: the bot went on, but only after the window
        assert after["at"] - opened["at"] >= CHANCE_MS, (opened, after)


async def test_the_person_taking_the_chance_ends_the_wait_and_the_due_time_is_recorded(store_kind, tmp_path):
    window = 600_000  # ten minutes: a bot that kept waiting would fail this test's bound long before
    async with served(make_settings(store_kind, tmp_path, human_chance_ms=window)) as api:
        game_id, ann = await seated_game(api, "free-parking", officer_jones_seed(), ("greedy",))
        _, opened = await the_bots_free_parking(api, game_id)
        due = dict(await api.app.ctx.store.due_games(opened["at"] + window))  # what any worker's scan finds
        assert due.get(game_id) == opened["at"] + window
        assert game_id not in dict(await api.app.ctx.store.due_games(opened["at"] + window - 1))
        jones = next(c for c in (await view(api, game_id, ann))["legal"] if c["type"] == "officer_jones")
        r = await api.post(f"/games/{game_id}/commands", json=jones, headers=bearer(ann))
        assert r.status_code == 200, r.text
        taken = r.json()["events"][-1]["seq"]

        async def answered():
            log = await events(api, game_id)
            return next((e for e in log if e["seq"] > taken and e.get("actor") == "seat:1"), None)

        answer = await until(answered, "the bot's answer to Officer Jones, long before the window's end")
        assert answer["at"] < opened["at"] + window


async def test_an_auction_a_person_bids_in_goes_at_the_chance_pace(store_kind, tmp_path):
    async with served(make_settings(store_kind, tmp_path, human_chance_ms=CHANCE_MS)) as api:
        game_id, ann = await seated_game(api, "monopoly", auction_seed(), ("strategic", "strategic"))
        for command in ("roll", "decline"):  # Ann rolls onto a property for sale and declines it: an auction of all three
            r = await api.post(f"/games/{game_id}/commands", json={"type": command}, headers=bearer(ann))
            assert r.status_code == 200, r.text

        async def bots_done():
            v = await view(api, game_id, ann)
            return v if v["pending"] and v["pending"]["kind"] == "auction" and v["pending"]["seats"] == [0] else None

        await until(bots_done, "the bots' bidding (the auction waiting on Ann alone)")
        r = await api.post(f"/games/{game_id}/commands", json={"type": "pass_bid"}, headers=bearer(ann))
        assert r.status_code == 200, r.text
        log = await events(api, game_id)
        start = next(i for i, e in enumerate(log) if e["type"] == "auction_opened")
        end = next(i for i, e in enumerate(log) if e["type"] == "bid_passed" and e["actor"] == "seat:0")
        bots = [(log[i - 1], e) for i, e in enumerate(log[:end]) if i > start and e["command"] is not None]
        assert all(e["actor"] in ("seat:1", "seat:2") for _, e in bots), bots  # Ann only declined, then passed
        assert sum(e["type"] == "bid_placed" for _, e in bots) >= 2, bots
        for previous, move in bots:  # every bot bid (and pass) at least the window after the event before it
            assert move["at"] - previous["at"] >= CHANCE_MS, (previous, move)


async def test_a_look_scheduled_for_an_older_version_moves_no_bot(store_kind, tmp_path):
    """The runner's own schedule keeps a look per append; one set before the game moved on must not move a bot then:
    the append that moved it scheduled its own look, at the wait it owes (a person's chance, the pace)."""
    async with served(make_settings(store_kind, tmp_path, human_pace_ms=600_000)) as api:
        game_id, _ = await seated_game(api, "free-parking", officer_jones_seed(), ("greedy",))
        version = len(await events(api, game_id))  # dealt: the bot is owed its first move, ten minutes on
        runner = api.app.ctx.runner
        assert not await runner.act(game_id, clear=False, version=version - 1)
        assert len(await events(api, game_id)) == version
        assert await runner.act(game_id, clear=False, version=version)  # a look set for this version does act
        assert (await events(api, game_id))[version]["actor"] == "seat:1"
