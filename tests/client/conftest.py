"""The client's tests run against the real service (``tests/api/conftest.py``: ``live``, one process per store).

This checkout's ``client/`` comes first on the path: a venv installs the package from one checkout (``make install``:
editable), and a second checkout of the repository (a git worktree) must test its own client, not that one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "client"))

from tests.api.conftest import live, live_kind, shared_live_services  # noqa: E402, F401  (fixtures)
