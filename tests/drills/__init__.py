"""Failure drills: real servers, started by the tests on loopback ports, broken on purpose.

Each drill runs the service as it is deployed (``python -m service serve``, one or two Sanic workers) on a
``redis-server`` of its own (``tests/servers.py``; the shared Redis on 6379 is never touched), puts a load on
it through HTTP, breaks something, and then checks the logs themselves — read back from Redis, re-verified from
the seed (``replays.verify``), and matched against every answer a client was given:

* ``test_racing.py`` — clients racing on the same games with conflicting, stale and repeated commands;
* ``test_redis_crash.py`` — Redis ``SIGKILL``ed under a bot load and restarted (``appendfsync always``; what
  ``everysec`` loses, measured; ``WAITAOF`` where the server has it);
* ``test_redis_unavailable.py`` — Redis down for a while: 503s, nothing half-written, recovery without a restart;
* ``test_projector_crash.py`` — a standalone projector ``SIGKILL``ed mid-batch, its entries reclaimed;
* ``test_worker_crash.py`` — a Sanic worker ``SIGKILL``ed while commands stream in.

The sixth drill, ``kill -9`` of the embedded store's service (``make run``) mid-game, is
``tests/api/test_restart.py::test_kill_9_mid_game_loses_nothing_acknowledged``; it is not repeated here.
"""
