"""The README a newcomer reads in a clone, and the pages of ``docs/`` it sends them to: every file they link or name
(``docs/…``, ``service/…``, ``tests/…``…) is in the repository, and the README points at nothing outside it (the
team's ``../shared/`` is not in a clone). Links and their anchors: ``tests/test_docs_links.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_points_at_nothing_outside_the_repository():
    assert not re.findall(r"\.\./[\w./-]+", README)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_page_names_is_in_the_repository(page):
    """A name in code (``docs/fairness.md``, ``tests/api/test_load.py``) is from the repository's root, as the pages
    write them; the README's links are from the root too (``tests/test_docs_links.py`` checks every page's)."""
    text = page.read_text()
    linked = re.findall(r"\]\(([^)#\s]+)\)", text) if page.name == "README.md" else []
    named = re.findall(r"`((?:docs|service|replays|tests|bench)/[\w./-]+\.(?:md|py|png|js|lua))`", text)
    missing = sorted({p for p in linked + named if "://" not in p and not (ROOT / p).exists()})
    assert not missing, missing
