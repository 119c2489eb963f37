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
    request.node._drill_services = started

    def start(server: Server, *, workers: int = 1, name: str = "service", **settings) -> Service:
        service = Service(tmp_path / name, server.url, workers=workers, **service_settings(**settings))
        started.append(service)
        return service.start()

    yield start
    for service in started:
        service.stop()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for service in getattr(item, "_drill_services", []):
            report.sections.append((f"log of {service.dir.name}", service.tail(60)))
