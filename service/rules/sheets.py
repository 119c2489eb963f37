"""The CSVs an organiser opens in a spreadsheet (both tournament formats' exports and ``replays audit``): RFC 4180,
UTF-8 with a byte order mark, every text cell safe to open there."""

from __future__ import annotations

import csv
import io
from typing import Any

BOM = "\ufeff"
"""Every CSV starts with UTF-8's byte order mark: without it a spreadsheet guesses a legacy code page and garbles accents."""
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def sheet(columns: tuple[str, ...]) -> tuple[io.StringIO, Any]:
    """A CSV begun: its BOM and header row written; ``out.getvalue()`` once its rows are."""
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out)
    writer.writerow(columns)
    return out, writer


def text(value: str) -> str:
    """A text cell a spreadsheet will not run: one starting as a formula does (``=HYPERLINK(...)``, ``+``, ``-``,
    ``@``, a tab or a carriage return) gets a leading ``'`` (OWASP, CSV injection). Names come from players, and
    ``replays audit --csv`` writes whatever bundle it is given."""
    return f"'{value}" if value.startswith(_FORMULA_STARTS) else value
