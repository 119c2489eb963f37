"""What a newcomer reads in a clone: the README and every page of ``docs/``. Each relative link resolves to a file of
the repository — and, where it names an anchor, to a heading of that file (GitHub's slugs) — nothing points outside
the repository (the team's ``../shared/`` is not in a clone), and the README stays short enough to read: its first
screens are what a newcomer needs, the reference is in ``docs/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a shell example's ``$(...)`` is no link) and inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (``\\w``, spaces and hyphens kept), spaces to
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of ``page``'s headings; a repeated heading's later ones get ``-1``, ``-2``… as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M),
                              flags=re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def links(page: Path) -> list[str]:
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", prose(page.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are not the repository's


def test_slugs_are_githubs():
    assert slug("Monopoly: where turns end") == "monopoly-where-turns-end"
    assert slug("Metrics: `GET /metrics`") == "metrics-get-metrics"
    assert slug("Solitaire: how often a deal can be won") == "solitaire-how-often-a-deal-can-be-won"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading_of_the_repository(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(ROOT) or not file.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{target}: no heading {anchor!r} in {file.relative_to(ROOT)}")
    assert not broken, broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_points_outside_the_repository(page):
    assert not re.findall(r"(?<![\w.])\.\./shared\b[\w./-]*|(?<![\w./])shared/(?:seeds|data)/[\w./-]*", page.read_text())


def test_the_readme_is_at_most_300_lines():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move reference to docs/ and link it"
