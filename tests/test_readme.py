"""The README a newcomer reads in a clone: every file it links or names in `docs/…` is in the repository, and it
points at nothing outside it (the team's `../shared/` is not in a clone)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_points_at_nothing_outside_the_repository():
    assert not re.findall(r"\.\./[\w./-]+", README)


def test_every_file_the_readme_links_or_names_is_in_the_repository():
    linked = re.findall(r"\]\(([^)#\s]+)\)", README)
    named = re.findall(r"`((?:docs|service|replays|tests|bench)/[\w./-]+\.(?:md|py|png|js|lua))`", README)
    missing = sorted({p for p in linked + named if "://" not in p and not (ROOT / p).exists()})
    assert not missing, missing
