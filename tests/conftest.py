"""Fixtures every test may use."""

from __future__ import annotations

import pytest

from service.simulate import simulate


@pytest.fixture(scope="session")
def finished_game():
    """A four-seat greedy game played to its end, reused read-only by tests that need a finished log."""
    return simulate("free-parking", 4, bytes(range(32)), "finished-game", ["greedy"] * 4)
