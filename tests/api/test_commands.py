"""Commands: ``expected_version`` and ``command_id`` semantics, races, and what an answer holds.

Races are run for real: concurrent requests on one service, a second "worker" (another ``Games`` over the
same store, as a second process would be) and, on Redis, two services on one namespace. After each, the
admin's export must verify offline and every accepted command's events must be in it exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib
import random

import pytest

from replays.verify import verify
from service.api.games import Games
from service.bots import bot, next_move
from service.events import free_parking as ev
from service.events.export import load
from service.sim.games import new_game as simulated_game
from tests.api.conftest import ADMIN_HEADERS, bearer, fresh_app, make_settings
from tests.api.helpers import TIME_EXPIRES_SEED, assert_error, card_of, drive, log_of, playable, seeded_game, view
from tests.http import serving
from tests.stores import drop_namespace

SEED = TIME_EXPIRES_SEED()


async def post(api, game_id, token, body):
    return await api.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))


async def export_verified(api, game_id):
    """The admin's export of the game, checked offline: the chain, the secrets and every decision re-made."""
    r = await api.get(f"/games/{game_id}/export", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    header, envelopes = load(r.content)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert [e.seq for e in envelopes] == list(range(1, len(envelopes) + 1))
    return envelopes


def each_once(answers, envelopes):
    """Every accepted command's events are in the log exactly once, where its answer said; no two answers
    claim one seq."""
    by_seq = {e.seq: e for e in envelopes}
    claimed = [e["seq"] for a in answers for e in a["events"]]
    assert len(claimed) == len(set(claimed)), f"two answers claim one event: {sorted(claimed)}"
    for a in answers:
        for e in a["events"]:
            assert by_seq[e["seq"]].hash == e["hash"], f"seq {e['seq']}: the log holds another event than the answer said"


def spy_on_appends(store):
    """Record the outcome of every append the store answers (``ok``, ``conflict``, ``duplicate``…)."""
    outcomes: list[str] = []
    append = store.append

    async def recorded(req):
        result = await append(req)
        outcomes.append(result.outcome)
        return result

    store.append = recorded
    return outcomes


# --- what an answer holds -----------------------------------------------------------------------------------


async def test_an_answer_is_the_batch_at_the_games_version_and_head_redacted_for_the_caller(api):
    game_id, tokens = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, tokens[1])
    feed = {"type": "feed_meter", "card": card_of(v, "M"), "expected_version": v["version"], "command_id": "feed-1"}
    r = await post(api, game_id, tokens[1], feed)
    assert r.status_code == 200, r.text
    fed = r.json()
    r = await post(api, game_id, tokens[1], {"type": "end_turn"})  # without expected_version: decided on the latest state
    assert r.status_code == 200, r.text
    ended = r.json()
    version, head, log = await log_of(api, game_id)
    for before, answer in ((v["version"], fed), (fed["version"], ended)):
        seqs = [e["seq"] for e in answer["events"]]
        assert seqs == list(range(before + 1, answer["version"] + 1)), "the answer's events are not exactly its batch"
        assert answer["head"] == answer["events"][-1]["hash"]
        assert answer["view"]["version"] == answer["version"] and answer["view"]["head"] == answer["head"]
        assert answer["view"]["seat"] == 1
        first = answer["events"][0]
        assert first["actor"] == "seat:1" and first["command"] is not None
        assert all(e["command"] is None for e in answer["events"][1:])
        for e in answer["events"]:  # the log's own envelopes, less their secrets
            assert e == {**log[e["seq"] - 1], "secret": None}
    assert fed["events"][0]["command_id"] == "feed-1" and ended["events"][0].get("command_id") is None
    assert (version, head) == (ended["version"], ended["head"])
    assert (await view(api, game_id))["version"] == version
    # ending the turn drew cards for seat 0: the log has them, the answer to seat 1 does not
    drawn = [e for e in ended["events"] if e["type"] == "cards_drawn"]
    assert drawn and all(e["secret"] is None for e in drawn)
    assert all(log[e["seq"] - 1]["secret"] is not None for e in drawn)


# --- expected_version ---------------------------------------------------------------------------------------


async def test_expected_version_is_checked_against_the_store_not_a_workers_cache(api):
    """Another worker moves the game on: a client that pinned the old version gets 409 from this worker,
    whose cache is behind; one that pinned the new version is accepted."""
    game_id, tokens = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, tokens[1])
    other = Games(api.app.ctx.store)  # a second worker on the same store
    moved = await other.execute(game_id, ev.FeedMeter(card=card_of(v, "M")), lambda _: 1, actor_key="seat:1", command_id=None, expected_version=v["version"])
    now = moved.envelopes[-1].seq
    before = await log_of(api, game_id)
    error = assert_error(await post(api, game_id, tokens[1], {"type": "end_turn", "expected_version": v["version"]}), 409, "version_conflict")
    assert error["detail"]["version"] == now
    assert await log_of(api, game_id) == before
    r = await post(api, game_id, tokens[1], {"type": "end_turn", "expected_version": now})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["seq"] == now + 1
    each_once([r.json()], await export_verified(api, game_id))


async def test_a_command_without_expected_version_that_a_rule_refuses_on_a_stale_cache_is_decided_again(api):
    """This worker's cache says the main play is still owed, so ``end_turn`` looks illegal; the store is
    ahead (another worker fed the meter): the command is re-decided on the fresh state and accepted."""
    game_id, tokens = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, tokens[1])
    other = Games(api.app.ctx.store)
    await other.execute(game_id, ev.FeedMeter(card=card_of(v, "M")), lambda _: 1, actor_key="seat:1", command_id=None, expected_version=None)
    r = await post(api, game_id, tokens[1], {"type": "end_turn"})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["seq"] == v["version"] + 2
    each_once([r.json()], await export_verified(api, game_id))


def _interrupt_ready(s, rules) -> bool:
    """No wait; the turn seat is in its main play; another seat may play Officer Jones on a seat that is
    not the turn seat (so a discard by the turn seat leaves that interrupt legal)."""
    if s.pending is not None or s.phase != "main" or not s.seats[s.turn_seat].hand:
        return False
    return any(
        isinstance(c, ev.OfficerJones) and c.target != s.turn_seat
        for x in range(s.n)
        if x != s.turn_seat
        for c in rules.legal_commands(s, x)
    )


def _interrupt_seed(seats: int = 3) -> str:
    """A seed whose greedy game (``drive``'s moves) reaches ``_interrupt_ready`` early."""
    for i in range(200):
        seed = hashlib.sha256(b"interrupt-%d" % i).digest()
        sim = simulated_game("free-parking", seats, seed, "g_search", ["greedy"] * seats)
        rules, rnd, players = sim.game.rules, random.Random(0), [bot("free-parking", "greedy")] * seats
        for _ in range(150):
            s = sim.game.state
            if rules.status_of(s) == "finished":
                break
            if _interrupt_ready(s, rules):
                return seed.hex()
            seat, command = next_move(rules, s, players, rnd)
            sim.send(command, seat)
    raise AssertionError("no seed reaches an interrupt early")


async def test_a_command_without_expected_version_that_loses_a_race_is_decided_again_and_may_still_succeed(api):
    """An interrupt decided on this worker's cache loses the append race to another worker's discard; the
    service re-reads, re-decides it on the fresh state — where it is still legal — and appends it."""
    game_id, tokens = await seeded_game(api, 3, _interrupt_seed())
    game = await drive(api.app, game_id, lambda g: _interrupt_ready(g.state, g.rules))
    s, rules = game.state, game.rules
    jones = next(c for x in range(s.n) if x != s.turn_seat for c in rules.legal_commands(s, x)
                 if isinstance(c, ev.OfficerJones) and c.target != s.turn_seat)
    by = next(x for x in range(s.n) if jones in rules.legal_commands(s, x))
    seats = {(await view(api, game_id, t))["seat"]: t for t in tokens}
    token = seats[by]
    stale = game.version
    other = Games(api.app.ctx.store)
    discard = ev.Discard(card=s.seats[s.turn_seat].hand[0])
    await other.execute(game_id, discard, lambda _: s.turn_seat, actor_key=f"seat:{s.turn_seat}", command_id=None, expected_version=stale)
    body = {"type": "officer_jones", "card": jones.card, "target": jones.target}
    assert api.app.ctx.games.cache[game_id].version == stale  # this worker's cache is behind: the race is real
    outcomes = spy_on_appends(api.app.ctx.store)
    r = await post(api, game_id, token, body)
    assert r.status_code == 200, r.text
    assert outcomes == ["conflict", "ok"], outcomes
    answer = r.json()
    assert answer["events"][0]["type"] == "officer_jones_played" and answer["events"][0]["actor"] == f"seat:{by}"
    envelopes = await export_verified(api, game_id)
    assert [e.type for e in envelopes[stale:stale + 1]] == ["card_discarded"]
    each_once([answer], envelopes)


# --- command_id ---------------------------------------------------------------------------------------------


async def test_a_repeated_command_id_returns_the_first_answer_even_after_the_game_moved_on(api):
    game_id, tokens = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, tokens[1])
    feed = {"type": "feed_meter", "card": card_of(v, "M"), "expected_version": v["version"], "command_id": "feed"}
    first = await post(api, game_id, tokens[1], feed)
    assert first.status_code == 200, first.text
    assert (await post(api, game_id, tokens[1], {"type": "end_turn", "command_id": "end"})).status_code == 200
    before = await log_of(api, game_id)
    for _ in range(2):  # a client retrying after a lost answer, its expected_version now stale
        again = await post(api, game_id, tokens[1], feed)
        assert again.status_code == 200, again.text
        assert again.json()["events"] == first.json()["events"]
        assert (again.json()["version"], again.json()["head"]) == (first.json()["version"], first.json()["head"])
    again = await post(api, game_id, tokens[1], {"type": "end_turn", "command_id": "end"})
    assert again.status_code == 200 and again.json()["events"][0]["type"] == "turn_ended"
    assert await log_of(api, game_id) == before, "a repeated command id appended something"
    # another body under a used id is refused, whatever the game's state
    for body in (dict(feed, expected_version=before[0]), {"type": "accept", "command_id": "feed"}, dict(feed, card="M20-9")):
        assert_error(await post(api, game_id, tokens[1], body), 409, "command_id_reused")
    assert await log_of(api, game_id) == before


async def test_command_ids_are_scoped_to_the_seat_and_the_game_and_a_refused_command_records_none(api):
    game_id, tokens = await seeded_game(api, 2, SEED)
    other_game, other_tokens = await seeded_game(api, 2, SEED)
    # refused by the rules: the id is not spent
    assert_error(await post(api, game_id, tokens[1], {"type": "end_turn", "command_id": "x"}), 422, "main_play_required")
    v = await view(api, game_id, tokens[1])
    assert (await post(api, game_id, tokens[1], {"type": "feed_meter", "card": card_of(v, "M"), "command_id": "y"})).status_code == 200
    r = await post(api, game_id, tokens[1], {"type": "end_turn", "command_id": "x"})
    assert r.status_code == 200 and r.json()["events"][0]["type"] == "turn_ended", r.text
    # seat 0 may use the ids seat 1 used, and so may the same seat of another game
    v0 = await view(api, game_id, tokens[0])
    r = await post(api, game_id, tokens[0], {"type": "feed_meter", "card": card_of(v0, "M"), "command_id": "y"})
    assert r.status_code == 200 and r.json()["events"][0]["actor"] == "seat:0", r.text
    v = await view(api, other_game, other_tokens[1])
    r = await post(api, other_game, other_tokens[1], {"type": "feed_meter", "card": card_of(v, "M"), "command_id": "y"})
    assert r.status_code == 200 and r.json()["events"][0]["game_id"] == other_game, r.text


# --- races --------------------------------------------------------------------------------------------------


async def _race_with_one_version(clients, game_id, tokens, rounds: int):
    """``rounds`` times: the seat that may act sends two or three of its legal commands at once, all with the
    same ``expected_version``, each through one of ``clients``. Exactly one is accepted; the rest are 409."""
    answers = []
    for n in range(rounds):
        views = {t: await view(clients[0], game_id, t) for t in tokens}
        token, v = next((t, v) for t, v in views.items() if playable(v["legal"]))
        if v["status"] == "finished":
            break
        moves = playable(v["legal"])
        picks = [moves[i % len(moves)] for i in range(2 + n % 2)]
        bodies = [dict(c, expected_version=v["version"], command_id=f"race-{n}-{i}") for i, c in enumerate(picks)]
        rs = await asyncio.gather(*(post(clients[i % len(clients)], game_id, token, b) for i, b in enumerate(bodies)))
        statuses = sorted(r.status_code for r in rs)
        assert statuses == [200] + [409] * (len(rs) - 1), [r.text for r in rs]
        for r in rs:
            if r.status_code == 409:
                assert_error(r, 409, "version_conflict")
            else:
                answers.append(r.json())
                assert r.json()["events"][0]["seq"] == v["version"] + 1
    return answers


async def test_concurrent_commands_with_one_expected_version_one_wins_and_nothing_is_lost_or_doubled(api):
    game_id, tokens = await seeded_game(api, 2, SEED)
    answers = await _race_with_one_version([api], game_id, tokens, rounds=12)
    assert len(answers) >= 10
    each_once(answers, await export_verified(api, game_id))


async def test_concurrent_commands_without_expected_version_are_each_decided_once(api):
    """Four commands of the turn's player at once, none pinned: one main play gets in, the other main plays are
    refused by the rules once re-decided (never 409, never twice), and ``end_turn`` is accepted only after it."""
    game_id, tokens = await seeded_game(api, 2, SEED)
    v = await view(api, game_id, tokens[1])
    hand = [c["id"] for c in v["you"]["hand"]]
    bodies = [{"type": "feed_meter", "card": card_of(v, "M")}, {"type": "discard", "card": hand[0]},
              {"type": "discard", "card": hand[1]}, {"type": "end_turn"}]
    rs = await asyncio.gather(*(post(api, game_id, tokens[1], b) for b in bodies))
    accepted = [r.json() for r in rs if r.status_code == 200]
    for r in rs:
        if r.status_code != 200:
            assert_error(r, 422)
            assert r.json()["error"]["code"] in ("main_play_done", "main_play_required", "not_your_turn")
    main_plays = [a for a in accepted if a["events"][0]["type"] in ("meter_fed", "card_discarded")]
    assert len(main_plays) == 1, [a["events"][0]["type"] for a in accepted]
    envelopes = await export_verified(api, game_id)
    each_once(accepted, envelopes)
    assert sum(e.type in ("meter_fed", "card_discarded") for e in envelopes) == 1


@pytest.fixture
async def two_workers(tmp_path):
    """Two services on one Redis namespace: two workers of one deployment."""
    settings = make_settings("redis", tmp_path)
    async with serving(fresh_app(settings)) as one, serving(fresh_app(settings)) as two:
        yield one, two
    import redis.asyncio as aioredis

    r = aioredis.from_url(settings.redis_url)
    await drop_namespace(r, settings.namespace)
    await r.aclose()


async def test_two_workers_racing_on_one_redis_accept_one_command_per_version(two_workers):
    one, two = two_workers
    game_id, tokens = await seeded_game(one, 2, SEED)
    answers = await _race_with_one_version([one, two], game_id, tokens, rounds=12)
    assert len(answers) >= 10
    # unpinned commands through both workers: each worker's cache is behind the other's appends
    for n in range(6):
        v = await view(two, game_id, tokens[0])
        seat = v["pending"]["seat"] if v["pending"] else v["turn"]
        v = await view(one if n % 2 else two, game_id, tokens[seat])
        moves = playable(v["legal"])
        rs = await asyncio.gather(post(one, game_id, tokens[seat], moves[0]),
                                  post(two, game_id, tokens[seat], moves[-1]))
        for r in rs:
            assert r.status_code in (200, 422), r.text
            if r.status_code == 200:
                answers.append(r.json())
        assert any(r.status_code == 200 for r in rs), [r.text for r in rs]
    each_once(answers, await export_verified(one, game_id))
    assert (await log_of(one, game_id)) == (await log_of(two, game_id))
