"""No read shows another seat's hand, a deck order or the seed before the game ends (DESIGN.md, "Reads,
privacy and identity"); after the end everything may be shown.

The truth comes from the admin (the replay's full state, the export's seed). Every read — the view, the event
feed, the audit log, the export, the replay, the scores, a command's answer — is fetched by each kind of caller
(the seat itself, another seat, a spectator without a token, the admin), and its raw body is searched for the
card ids of the hands it must not show, of both decks, for the seed (hex and base64) and for any secret that
is not ``null``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from service.bots import bot, next_move
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import card_of, drive, find_seed, holds, log_of, playable, seeded_game, view

SEATS = 3
SEED = find_seed(holds("M"), seats=SEATS)
READS = ("", "/events", "/audit", "/export", "/replay", "/scores")
SECRET = re.compile(rb'"secret":\s*(?!null)')


async def truth(api, game_id) -> dict:
    """What only the admin may know now: every hand, both decks in order, the seed."""
    r = await api.get(f"/games/{game_id}/replay", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    state = r.json()["state"]
    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    seed = json.loads(r.content.split(b"\n", 1)[0])["seed"]
    assert base64.b64decode(state["seed"]).hex() == seed
    return {
        "hands": [seat["hand"] for seat in state["seats"]],
        "deck": state["deck"],
        "second_chance": state["second_chance"],
        "seed": seed,
        "seed_b64": state["seed"],
    }


def mentions(body: bytes, card: str) -> bool:
    """``card`` appears in ``body`` as a whole id (``M30-1`` is not ``M30-12``), quoted or in plain words."""
    return re.search(rb"(?<![\w-])" + re.escape(card.encode()) + rb"(?![\w-])", body) is not None


def hidden_from(t: dict, seat: int | None) -> dict[str, list[str]]:
    """What ``seat`` (``None``: a spectator) must not see before the end."""
    others = [c for s, hand in enumerate(t["hands"]) if s != seat for c in hand]
    return {"another hand": others, "the deck": t["deck"], "the Second Chance deck": t["second_chance"],
            "the seed": [t["seed"], t["seed_b64"]]}


def assert_private(body: bytes, t: dict, seat: int | None, what: str) -> None:
    for kind, items in hidden_from(t, seat).items():
        shown = [c for c in items if (mentions(body, c) if kind != "the seed" else c.encode() in body)]
        assert not shown, f"{what} shows {kind}: {shown}"
    assert not SECRET.search(body), f"{what} holds a secret that is not null"


async def callers(api, game_id, tokens):
    """``(label, seat, headers)`` for every kind of caller; seats as the game has them now."""
    out = []
    for token in tokens:
        seat = (await view(api, game_id, token))["seat"]
        out.append((f"seat {seat}", seat, bearer(token)))
    return out + [("a spectator", None, {})]


@pytest.fixture
async def early(api):
    """A three-seat game a few commands in (one over HTTP, with its answer kept), before any deck ran out."""
    game_id, tokens = await seeded_game(api, SEATS, SEED)
    v = await view(api, game_id, tokens[1])
    r = await api.post(f"/games/{game_id}/commands", json={"type": "feed_meter", "card": card_of(v, "M")}, headers=bearer(tokens[1]))
    assert r.status_code == 200, r.text
    ended = await api.post(f"/games/{game_id}/commands", json={"type": "end_turn"}, headers=bearer(tokens[1]))
    assert ended.status_code == 200, ended.text
    await drive(api.app, game_id, lambda g: g.state.turn >= 5)
    _, _, log = await log_of(api, game_id)
    assert not [e for e in log if e["type"] == "deck_reshuffled"], "pick an earlier moment: a reshuffle makes old cards public"
    return game_id, tokens, ended


async def test_before_the_end_no_read_by_a_seat_or_a_spectator_shows_what_is_hidden(api, early):
    game_id, tokens, _ = early
    t = await truth(api, game_id)
    assert all(t["hands"]) and t["deck"] and t["second_chance"]
    for label, seat, headers in await callers(api, game_id, tokens):
        for path in READS:
            r = await api.get(f"/games/{game_id}{path}", headers=headers)
            if path in ("/export", "/replay"):
                assert r.status_code == 403, f"{label} may read {path} before the end"
            else:
                assert r.status_code == 200, r.text
            assert_private(r.content, t, seat, f"{path or 'the view'} read by {label}")
        v = await view(api, game_id, headers["authorization"].split()[1] if headers else None)
        assert all(p["hand"] is None for p in v["players"]), f"{label}'s view lists hands"
        if seat is not None:
            assert sorted(c["id"] for c in v["you"]["hand"]) == sorted(t["hands"][seat])
            own = (await api.get(f"/games/{game_id}", headers=headers)).content
            assert all(mentions(own, c) for c in t["hands"][seat])  # the search finds what is there
        else:
            assert v["you"] is None and v["legal"] == []


async def test_before_the_end_a_commands_answer_shows_only_the_callers_own_things(api, early):
    game_id, tokens, ended = early
    _, _, log = await log_of(api, game_id)
    at_answer = ended.json()["version"]
    # the truth as it was when the answer was given: replay to that version
    r = await api.get(f"/games/{game_id}/replay", params={"at": at_answer}, headers=ADMIN_HEADERS)
    state = r.json()["state"]
    t = {"hands": [s["hand"] for s in state["seats"]], "deck": state["deck"], "second_chance": state["second_chance"],
         "seed": base64.b64decode(state["seed"]).hex(), "seed_b64": state["seed"]}
    assert_private(ended.content, t, 1, "the answer to seat 1's end_turn")
    drawn = [e for e in log[ended.json()["events"][0]["seq"] - 1:at_answer] if e["type"] == "cards_drawn"]
    assert drawn and all(mentions(json.dumps(e["secret"]).encode(), c) for e in drawn for c in e["secret"]["cards"])
    # and a fresh command by each seat now
    now = await truth(api, game_id)
    for label, seat, headers in await callers(api, game_id, tokens):
        if seat is None:
            continue
        v = await view(api, game_id, headers["authorization"].split()[1])
        if not playable(v["legal"]):
            continue
        body = dict(playable(v["legal"])[-1], expected_version=v["version"])
        r = await api.post(f"/games/{game_id}/commands", json=body, headers=headers)
        assert r.status_code == 200, r.text
        now = await truth(api, game_id)
        assert_private(r.content, now, r.json()["view"]["seat"], f"the answer to {label}")
    # refused commands say nothing either
    for headers in ({}, ADMIN_HEADERS, bearer(tokens[0])):
        r = await api.post(f"/games/{game_id}/commands", json={"type": "feed_meter", "card": now["hands"][1][0]}, headers=headers)
        assert r.status_code in (401, 403, 422)
        body = r.content.replace(now["hands"][1][0].encode(), b"")  # the card it was sent
        assert_private(body, now, 0, f"a refused command's error ({r.status_code})")


async def test_the_admin_sees_everything_at_any_time(api, early):
    game_id, tokens, _ = early
    t = await truth(api, game_id)
    every = [c for hand in t["hands"] for c in hand]
    v = (await api.get(f"/games/{game_id}", headers=ADMIN_HEADERS)).json()
    assert [[c["id"] for c in p["hand"]] for p in v["players"]] == t["hands"]
    events = (await api.get(f"/games/{game_id}/events", headers=ADMIN_HEADERS)).content
    assert SECRET.search(events) and all(mentions(events, c) for c in t["deck"][:5])
    audit = (await api.get(f"/games/{game_id}/audit", headers=ADMIN_HEADERS)).content
    assert all(mentions(audit, c) for c in every), "the admin's audit does not spell out the hands"
    export = (await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)).content
    assert t["seed"].encode() in export and SECRET.search(export)
    replay = (await api.get(f"/games/{game_id}/replay", headers=ADMIN_HEADERS)).content
    assert all(mentions(replay, c) for c in every + t["deck"] + t["second_chance"])


async def test_after_the_end_everything_may_be_shown_to_everyone(api, early):
    game_id, tokens, _ = early
    _, _, log = await log_of(api, game_id)
    commitment = log[0]["public"]["seed_commitment"]
    last = await _finish_over_http(api, game_id, tokens)
    t = await truth(api, game_id)
    assert hashlib.sha256(bytes.fromhex(t["seed"])).hexdigest() == commitment
    # the command that ended the game answers with every secret, the seed's reveal among them
    assert last["view"]["status"] == "finished"
    assert any(e["type"] == "seed_revealed" and e["public"]["seed"] == t["seed"] for e in last["events"])
    assert all(p["hand"] is not None for p in last["view"]["players"])
    dealt = [e for e in log if e["type"] == "round_dealt"][0]["secret"]["hands"]
    for label, _, headers in [*await callers(api, game_id, tokens), ("the admin", None, ADMIN_HEADERS)]:
        v = (await api.get(f"/games/{game_id}", headers=headers)).json()
        assert all(p["hand"] is not None for p in v["players"]), label
        events = await api.get(f"/games/{game_id}/events", headers=headers)
        assert SECRET.search(events.content) and t["seed"].encode() in events.content, label
        audit = (await api.get(f"/games/{game_id}/audit", headers=headers)).content
        assert all(mentions(audit, c) for hand in dealt for c in hand), f"{label}: the audit hides the dealt hands after the end"
        export = await api.get(f"/games/{game_id}/export", headers=headers)
        assert export.status_code == 200 and json.loads(export.content.split(b"\n", 1)[0])["seed"] == t["seed"], label
        replay = await api.get(f"/games/{game_id}/replay", params={"at": 3}, headers=headers)
        assert replay.status_code == 200 and replay.json()["state"]["seed"] == t["seed_b64"], label


async def _finish_over_http(api, game_id, tokens) -> dict:
    """Play on in-process until someone is close to winning, then send the bots' moves over HTTP, each with its
    seat's token, until the game ends. Returns the last command's answer."""
    await drive(api.app, game_id, lambda g: max(s.score for s in g.state.seats) >= 150)
    games = api.app.ctx.games
    players = [bot("free-parking", "greedy") for _ in tokens]
    import random

    rnd = random.Random(1)
    answer = None
    for _ in range(500):
        game = await games.fresh(game_id)
        if game.rules.status_of(game.state) == "finished":
            assert answer is not None, "the game ended before a command over HTTP"
            return answer
        seat, command = next_move(game.rules, game.state, players, rnd)
        seat_token = {(await view(api, game_id, t))["seat"]: t for t in tokens}
        body = json.loads(game.codec.command_body(command))
        r = await api.post(f"/games/{game_id}/commands", json=dict(body, expected_version=game.version), headers=bearer(seat_token[seat]))
        assert r.status_code == 200, r.text
        answer = r.json()
    raise AssertionError("the game did not end")
