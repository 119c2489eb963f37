"""Loopback ports 18800-18899 for the servers of the session-23 review's tests (the range that review was given),
in place of the attack tests' usual 47100-47999 and of the web tests' ephemeral ports."""

from __future__ import annotations

import random
import socket

import pytest


def reviewer_port() -> int:
    ports = list(range(18800, 18900))
    random.shuffle(ports)
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 18800-18899")


@pytest.fixture(autouse=True)
def _reviewer_ports(monkeypatch):
    import tests.attack.conftest as attack
    import tests.servers as servers

    monkeypatch.setattr(attack, "attack_port", reviewer_port)
    monkeypatch.setattr(servers, "free_port", reviewer_port)
