"""The drills' fixtures: redis-servers (``servers``, from ``tests/servers.py``) and services of their own."""

from __future__ import annotations

import pytest

from tests.drills.support import service_settings
from tests.servers import Server, Service


@pytest.fixture
def services(tmp_path, request):
    """``services(server, workers=1, **settings)`` starts ``python -m service serve`` on ``server`` (a
    ``Server``); every one is stopped at the end, and the log of each is printed when the test failed."""
    started: list[Service] = []

    def start(server: Server, *, workers: int = 1, name: str = "service", **settings) -> Service:
        service = Service(tmp_path / name, server.url, workers=workers, **service_settings(**settings))
        started.append(service)
        request.node.service_logs = [*getattr(request.node, "service_logs", []), (f"log of {service.dir.name}", service.log)]
        return service.start()

    yield start
    for service in started:
        service.stop()
