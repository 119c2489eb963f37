"""Every setting of the service has a flag of `serve` (the secrets excepted, on purpose) and a row in
docs/operating.md, and a flag given wins over the environment."""

from __future__ import annotations

import argparse
from pathlib import Path

from service.api.settings import Settings
from service.cli import serve

DOC = (Path(__file__).resolve().parents[2] / "docs" / "operating.md").read_text()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    serve.add_arguments(p)
    return p


def test_every_setting_but_the_secrets_has_a_flag_and_every_setting_a_row_in_the_docs():
    flags = {action.dest for action in parser()._actions}
    assert [f for f in Settings.__struct_fields__ if f not in flags] == list(serve.SECRETS)
    for field in Settings.__struct_fields__:
        assert f"`FREE_PARKING_{field.upper()}" in DOC or f"FREE_PARKING_{field.upper()}`" in DOC, field


def test_a_flag_given_wins_over_the_environment_and_the_environment_over_the_default(monkeypatch):
    monkeypatch.setenv("FREE_PARKING_CACHE_SIZE", "77")
    monkeypatch.setenv("FREE_PARKING_PROJECTOR", "false")
    monkeypatch.setenv("FREE_PARKING_ADMIN_TOKEN", "s3cret")
    settings = serve.settings_from(parser().parse_args(["--store-wait-ms", "150", "--data", "elsewhere"]))
    assert (settings.cache_size, settings.projector, settings.store_wait_ms) == (77, False, 150)
    assert settings.data_dir == Path("elsewhere") and settings.admin_token == "s3cret"
    assert serve.settings_from(parser().parse_args(["--no-runner"])).runner is False
