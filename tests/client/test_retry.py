"""Waiting out 429 and 503 (client/free_parking_client/retry.py): by ``Retry-After`` within a bounded total, and a
command resent with the same ``command_id`` and body — against the service's real rate limits, and a real 503 (its
Redis killed, then started again while the client waits)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from free_parking_client import ApiError, Client, RetryPolicy
from free_parking_client.core import Call
from free_parking_client.retry import retry_after
from tests.api.conftest import LiveService, make_settings
from tests.client.test_client import url_of
from tests.servers import ALWAYS


def answer(status: int, code: str = "x", **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": {"code": code, "message": "m", "detail": {}}})


def test_retry_after_is_read_as_seconds_or_a_date():
    assert retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # long past
    assert retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after(httpx.Headers({})) is None


def test_waits_add_up_to_the_policys_total_and_only_what_may_mend_is_retried():
    attempts = RetryPolicy(total=5.0, first=0.5, longest=2.0).start()
    assert [attempts.after_response(answer(503)) for _ in range(4)] == [0.5, 1.0, 2.0, None]  # 3.5 s, and 2 more: 5.5
    attempts = RetryPolicy(total=5.0).start()
    assert attempts.after_response(answer(429, "rate_limited", **{"retry-after": "4"})) == 4.0
    assert attempts.after_response(answer(429, "rate_limited", **{"retry-after": "4"})) is None  # 8 s > 5 s: it stands
    fresh = RetryPolicy().start()
    assert fresh.after_response(answer(503, "archive_damaged")) is None  # the operator must act first
    assert fresh.after_response(answer(409, "version_conflict")) is None and fresh.after_response(answer(200)) is None
    assert fresh.after_error(httpx.ReadError("lost"), idempotent=False) is None  # a new game might be made twice
    assert fresh.after_error(httpx.ReadError("lost"), idempotent=True) == 0.5
    assert fresh.after_error(httpx.ConnectError("refused"), idempotent=False) == 1.0  # nothing was sent


class Told:
    """``on_retry``: each wait the client was told of, as (method, path, status or error, the body sent)."""

    def __init__(self, then=None) -> None:
        self.waits: list[tuple[str, str, int | str, object]] = []
        self.then = then

    def __call__(self, call: Call, wait: float, outcome: httpx.Response | httpx.TransportError) -> None:
        status = outcome.status_code if isinstance(outcome, httpx.Response) else type(outcome).__name__
        self.waits.append((call.method, call.path, status, call.json))
        if self.then is not None:
            self.then()


def one_envelope_of(fp: Client, game_id: str, command_id: str) -> bool:
    return [e.command_id for e in fp.events(game_id).events].count(command_id) == 1


@pytest.mark.live_settings(rate_limits=True, commands_burst=1, commands_per_minute=60, games_burst=1, games_per_minute=60)
async def test_429s_are_waited_out_and_the_command_resent_with_the_same_id_and_body(live):
    told = Told()
    with Client(url_of(live), on_retry=told) as fp:
        await asyncio.to_thread(fp.register, "Gil")
        game_id = (await asyncio.to_thread(fp.create_game, "solitaire")).game_id
        await asyncio.to_thread(fp.create_game, "solitaire")  # the second game at once: 429, waited out
        assert [w[:3] for w in told.waits] and {w[:3] for w in told.waits} == {("POST", "/games", 429)}
        await asyncio.to_thread(fp.join, game_id)
        view = await asyncio.to_thread(fp.view, game_id)
        first = await asyncio.to_thread(fp.act, game_id, view.legal[0], view=view)
        told.waits.clear()
        second = await asyncio.to_thread(fp.act, game_id, first.view.legal[0], view=first.view)
        assert told.waits and {w[2] for w in told.waits} == {429}
        sent = told.waits[0][3]
        assert all(w[3] == sent for w in told.waits) and second.events[0].command_id == sent["command_id"]
        assert second.version > first.version and await asyncio.to_thread(one_envelope_of, fp, game_id, sent["command_id"])


@pytest.mark.parametrize("live_kind", ["embedded"])  # the bucket's wait is the store's: both stores above
@pytest.mark.live_settings(rate_limits=True, commands_burst=1, commands_per_minute=1)
async def test_a_wait_past_the_policys_total_gives_the_429_back(live):
    with Client(url_of(live), retry=RetryPolicy(total=5.0)) as fp:
        await asyncio.to_thread(fp.register, "Hal")
        game_id = (await asyncio.to_thread(fp.create_game, "solitaire")).game_id
        await asyncio.to_thread(fp.join, game_id)
        view = await asyncio.to_thread(fp.view, game_id)
        first = await asyncio.to_thread(fp.act, game_id, view.legal[0], view=view)
        with pytest.raises(ApiError) as limited:  # a minute's wait named: more than the 5 s the policy allows
            await asyncio.to_thread(fp.act, game_id, first.view.legal[0], view=first.view)
        assert limited.value.status == 429 and limited.value.detail["retry_after"] > 5


async def test_a_503_while_the_store_is_away_is_waited_out_and_the_command_goes_through_once(servers, tmp_path):
    """The service's own Redis is killed: the command is answered 503 (nothing written); the client, told of its
    wait, has Redis started again meanwhile and sends the same body again, which goes through, once."""
    redis = servers(*ALWAYS)
    service = LiveService(make_settings("redis", tmp_path, redis_url=redis.url), tmp_path)
    try:
        told = Told(then=lambda: redis.restart() if redis.proc is None else None)
        with Client(f"http://127.0.0.1:{service.port}", on_retry=told) as fp:
            await asyncio.to_thread(fp.register, "Ida")
            game_id = (await asyncio.to_thread(fp.create_game, "solitaire")).game_id
            await asyncio.to_thread(fp.join, game_id)
            view = await asyncio.to_thread(fp.view, game_id)
            redis.kill()
            done = await asyncio.to_thread(fp.act, game_id, view.legal[0], view=view)
            assert told.waits and told.waits[0][2] == 503
            assert done.version > view.version and await asyncio.to_thread(one_envelope_of, fp, game_id,
                                                                           told.waits[0][3]["command_id"])
    finally:
        await service.stop()
