"""Racing clients: many clients fire conflicting, stale and repeated commands at the same few games, through two
workers whose caches race too. Afterwards every accepted command's events are in the log exactly once, every log
verifies and is cut into whole batches, and no refused command appended anything.

Each client, again and again, reads the seats' views, takes one command some seat may send (the seat whose turn
it is, or one that may interrupt), and sends it in one of four ways:

* pinned: with ``expected_version`` — stale as soon as another client got in first: ``409 version_conflict``;
* loose: without it — a lost race is re-decided on the fresh state, and refused (``422``) if no longer legal;
* repeated: the same command, same ``command_id``, three times at once — one is applied, every copy accepted is
  answered with the same events (a copy decided on a state where it was not legal yet is refused: nothing is kept);
* reused: a ``command_id`` sent again with another command — ``409 command_id_reused`` if the first went through.
"""

from __future__ import annotations

import asyncio
import random
import time

import httpx

from tests.drills.support import Ledger, background, guest_games, read_logs, versions
from tests.api.helpers import pick, playable

GAMES, SEATS, CLIENTS_PER_GAME, COMMANDS_PER_CLIENT = 2, 3, 5, 20
REFUSALS = {"409 version_conflict", "409 command_id_reused"}


async def test_racing_clients_leave_every_accepted_command_once_and_nothing_of_a_refused_one(servers, services):
    server = servers()
    service = services(server, workers=2)
    ledger = Ledger()
    kinds: dict[str, str] = {}  # command id → how it was sent
    stop = asyncio.Event()
    async with (
        httpx.AsyncClient(base_url=service.url, timeout=30, limits=httpx.Limits(max_connections=64)) as api,
        background(stop) as start,
    ):
        games = await guest_games(api, GAMES, seats=SEATS)
        clients = start([_client(api, g, tokens, ledger, kinds, random.Random(f"{i}-{c}"), f"r{i}.{c}")
                         for i, (g, tokens) in enumerate(games) for c in range(CLIENTS_PER_GAME)])  # fmt: skip
        started = time.monotonic()
        await asyncio.gather(*clients)
        raced = time.monotonic() - started
        game_ids = [g for g, _ in games]
        final = await versions(api, game_ids)

    service.stop()  # the runner may still fire a deadline: nothing moves while the logs are read
    logs = await read_logs(server.url, game_ids)
    counts = _check(ledger, logs, kinds)
    assert counts["accepted"] >= 50 and counts["refused"] >= 10, counts  # there was a race, and it was lost often
    assert ledger.statuses["409 version_conflict"] and ledger.statuses["409 command_id_reused"], ledger.statuses
    assert all(len(log.envelopes) >= final[g][0] for g, log in logs.items())
    print(f"\n[racing] {GAMES * CLIENTS_PER_GAME} clients on {GAMES} games, {raced:.1f} s: commands {counts}; "
          f"answers {dict(ledger.statuses)}; logs of {[len(log.envelopes) for log in logs.values()]} events")  # fmt: skip


async def _client(
    api: httpx.AsyncClient, game_id: str, tokens: list[str], ledger: Ledger, kinds: dict[str, str], rnd: random.Random, tag: str
) -> None:
    for n in range(COMMANDS_PER_CLIENT):
        seats = rnd.sample(range(len(tokens)), len(tokens))  # a random seat that may act: whose turn, or interrupting
        for i in seats:
            v = (await api.get(f"/games/{game_id}", headers=_auth(tokens[i]))).json()
            if v["status"] == "finished":
                return
            if playable(v["legal"]):
                break
        else:
            await asyncio.sleep(0.01)
            continue
        token = tokens[i]
        command = pick(v["legal"], rnd)
        command_id = f"{tag}-{n}"
        roll = rnd.random()
        if roll < 0.4:
            kinds[command_id] = "pinned"
            await _send(api, game_id, token, dict(command, expected_version=v["version"], command_id=command_id), ledger)
        elif roll < 0.7:
            kinds[command_id] = "loose"
            await _send(api, game_id, token, dict(command, command_id=command_id), ledger)
        elif roll < 0.9:
            kinds[command_id] = "repeated"
            body = dict(command, expected_version=v["version"], command_id=command_id) if rnd.random() < 0.5 else dict(command, command_id=command_id)
            await asyncio.gather(*(_send(api, game_id, token, body, ledger) for _ in range(3)))
        else:
            kinds[command_id] = "reused"
            await _send(api, game_id, token, dict(command, command_id=command_id), ledger)
            other = next((c for c in playable(v["legal"]) if c != command), None) or {"type": "end_turn"}
            await _send(api, game_id, token, dict(other, command_id=command_id), ledger)


async def _send(api: httpx.AsyncClient, game_id: str, token: str, body: dict, ledger: Ledger) -> None:
    r = await ledger.send(api, game_id, token, body, patience=10)
    assert r is not None, f"{body}: no answer"
    code = f"{r.status_code} {r.json()['error']['code']}" if r.status_code != 200 else "200"
    assert r.status_code == 200 or code in REFUSALS or r.status_code == 422, f"{body} → {r.status_code} {r.text}"


def _check(ledger: Ledger, logs, kinds: dict[str, str]) -> dict[str, int]:
    from tests.drills.support import check_ledger

    counts = check_ledger(ledger, logs)  # accepted: in the log once, as answered; refused: nowhere; nothing else
    for command_id, answers in ledger.answers.items():
        statuses = [status for status, _ in answers]
        if kinds[command_id] == "repeated":  # the copies of one command: every accepted copy answered alike
            accepted = [body for status, body in answers if status == 200]
            assert all(body == accepted[0] for body in accepted), (command_id, answers)
            # a copy decided before another client's move made it legal is refused (422, nothing written, no id
            # kept); once one is accepted, the copies after it get its answer — never a conflict or another batch
            assert all(status in (200, 422) for status in statuses) or not accepted, (command_id, answers)
        if kinds[command_id] == "reused" and statuses[0] == 200:
            assert answers[1] == (409, "command_id_reused"), (command_id, answers)
    return counts


def _auth(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}
