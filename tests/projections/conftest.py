"""The games the projection tests share: played once per session (``helpers.shared_games``)."""

from __future__ import annotations

import pytest

from tests.projections.helpers import Played, shared_games


@pytest.fixture(scope="session")
def few() -> list[Played]:
    """28 games: four of each seat count from 2 to 8."""
    return shared_games(28)
