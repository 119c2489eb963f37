"""The stage breakdown (bench/stages.py) gives each sampled stack to the stage its innermost known frame names."""

from __future__ import annotations

from pathlib import Path

from bench.stages import EVENT_LOOP, HTTP, read_profile, stage_of

LOOP = ["_run_module_as_main (<frozen runpy>:198)", "_run_server_forever (sanic/server/runners.py:210)"]
HANDLER = [*LOOP, "connection_task (connection_task:15)", "Http.http1 (sanic/http/http1.py:123)",
           "handle_request (handle_request:99)"]


def test_a_store_call_under_a_command_is_the_store_client_even_below_the_rules_and_asyncio():
    stack = [*HANDLER, "command (service/api/routes.py:227)", "Games.execute (service/api/games.py:300)",
             "Pipeline.execute (redis/asyncio/client.py:1500)", "StreamWriter.writelines (asyncio/streams.py:346)"]
    assert stage_of(stack) == "store client"


def test_fakeredis_is_the_embedded_store_not_the_redis_client():
    stack = [*HANDLER, "command (service/api/routes.py:227)", "FakeSocket._xadd (fakeredis/commands_mixins/streams_mixin.py:40)"]
    assert stage_of(stack) == "embedded store (fakeredis, journal)"


def test_rules_code_folding_a_tail_is_loading_and_deciding_otherwise():
    tail = [*HANDLER, "command (service/api/routes.py:224)", "Games.load (service/api/games.py:120)",
            "Game.fold (service/rules/engine.py:80)", "evolve (service/rules/free_parking/evolve.py:30)"]
    decide = [*HANDLER, "command (service/api/routes.py:227)", "Games._append (service/api/games.py:351)",
              "Game.decide (service/rules/engine.py:96)", "decide (service/rules/free_parking/decide.py:40)"]
    assert (stage_of(tail), stage_of(decide)) == ("load and tail", "decide")


def test_hashing_signing_and_the_view_are_their_own_stages():
    base = [*HANDLER, "command (service/api/routes.py:227)"]
    assert stage_of([*base, "Game.decide (service/rules/engine.py:96)", "seal (service/events/envelope.py:90)",
                     "digest (hmac.py:198)"]) == "seal and hash"
    assert stage_of([*base, "_receipt (service/api/routes.py:60)", "Keyring.sign (service/api/signing.py:99)"]) == "receipts (Ed25519)"
    assert stage_of([*base, "_view (service/api/routes.py:70)", "Game.view (service/rules/engine.py:120)",
                     "view (service/rules/free_parking/view.py:130)"]) == "view and legal"


def test_sanic_compiled_frames_are_http_and_a_bare_loop_is_the_event_loop():
    assert stage_of([*HANDLER, "http1_response_header (http1_response_header:77)", "send (send:13)"]) == HTTP
    assert stage_of(LOOP) == EVENT_LOOP


def test_work_outside_requests_goes_to_the_projector_whatever_it_calls():
    stack = [*LOOP, "Projector.run_forever (service/projections/projector.py:340)",
             "Pipeline.execute (redis/asyncio/client.py:1500)"]
    assert stage_of(stack) == "projector (in the worker)"


def test_a_raw_profile_is_summed_by_stage(tmp_path: Path):
    raw = tmp_path / "p.raw"
    process = 'process 1:"python -m service serve"'
    raw.write_text(f"{process};{';'.join(LOOP)} 3\n"
                   f"{process};{';'.join(HANDLER)};send (send:13) 5\n")
    assert read_profile(raw) == {EVENT_LOOP: 3, HTTP: 5}
