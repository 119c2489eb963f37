"""The client's tests run against the real service (``tests/api/conftest.py``: ``live``, one process per store)."""

from __future__ import annotations

from tests.api.conftest import live, live_kind, shared_live_services  # noqa: F401  (fixtures)
