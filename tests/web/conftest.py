"""The web tests run on the services of tests/api: ``api`` (in process) and ``live`` (a ``python -m service`` process)."""

from tests.api.conftest import api, live, live_kind, store_kind  # noqa: F401  (fixtures)
