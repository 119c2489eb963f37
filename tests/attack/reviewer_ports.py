"""Loopback ports 18800-18899 for the servers of the session-23 review's tests (the range that review was given),
in place of the attack tests' usual 23000-24999 and of the web tests' ports."""

from __future__ import annotations

import pytest

from tests.servers import free_port_in


def reviewer_port() -> int:
    return free_port_in(range(18800, 18900))


@pytest.fixture(autouse=True)
def _reviewer_ports(monkeypatch):
    import tests.attack.conftest as attack
    from tests import servers

    monkeypatch.setattr(attack, "attack_port", reviewer_port)
    monkeypatch.setattr(servers, "free_port", reviewer_port)
