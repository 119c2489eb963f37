"""The drills' fixtures: redis-servers (``servers``, from ``tests/servers.py``) and services of their own."""

from __future__ import annotations

import pytest

from tests.drills.support import service_settings
from tests.servers import Server, Service


@pytest.fixture
def services(tmp_path, request):
    """``services(server, workers=1, **settings)`` starts ``python -m service serve`` on ``server`` (a
    ``Server``, or a ``tests.cluster.Cluster``); every one is stopped at the end, and the log of each is printed when
    the test failed. ``sentinel=`` a ``tests.replicas.Replicated`` reaches the store through its Sentinel instead."""
    started: list[Service] = []

    def start(server: Server | None, *, workers: int = 1, name: str = "service", sentinel=None, **settings) -> Service:
        if sentinel is not None:
            settings["redis_sentinel"] = sentinel.sentinel.address
        url = server.url if server is not None else None
        service = Service(tmp_path / name, url, workers=workers, **service_settings(**settings))
        started.append(service)
        request.node.service_logs = [*getattr(request.node, "service_logs", []), (f"log of {service.dir.name}", service.log)]
        return service.start()

    yield start
    for service in started:
        service.stop()
