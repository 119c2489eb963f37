"""Results: each measure's rounds, its ratio's median, min and max, the target, and the table (rich and Markdown)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Literal

from rich.console import Console
from rich.table import Table


@dataclass
class Measure:
    """One row: a ratio (or an absolute value) per round, and the target it is held against."""

    key: str
    name: str
    compared_with: str
    target: float
    direction: Literal["min", "max"]  # min: the value must be at least the target; max: at most
    unit: str = "×"  # "×" for ratios; else the unit of an absolute value ("MB")
    values: list[float] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # per round: the absolute numbers behind the ratio
    note: str = ""  # where the target applies only sometimes (nproc), or what limits it
    applies: bool = True  # False: reported, not held against the target here (e.g. nproc < 4)
    error: str = ""

    def add(self, value: float, detail: str = "") -> None:
        self.values.append(value)
        if detail:
            self.details.append(detail)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    @property
    def low(self) -> float:
        return min(self.values) if self.values else math.nan

    @property
    def high(self) -> float:
        return max(self.values) if self.values else math.nan

    @property
    def met(self) -> bool | None:
        if not self.values:
            return None
        m = self.median
        return m >= self.target if self.direction == "min" else m <= self.target

    def fmt(self, v: float) -> str:
        if math.isnan(v):
            return "—"
        if self.unit == "×":
            return f"{v:.2f}"
        return f"{v:.0f} {self.unit}" if v >= 100 else f"{v:.1f} {self.unit}"

    @property
    def target_text(self) -> str:
        sign = "≥" if self.direction == "min" else "≤"
        t = f"{self.target:g}×" if self.unit == "×" else f"{self.target:g} {self.unit}"
        return f"{sign} {t}"

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        met = self.met
        if met is None:
            return "—"
        if not self.applies:
            return "reported (" + ("meets it" if met else "below it") + ")"
        return "met" if met else "MISSED"


def table(measures: list[Measure], title: str) -> Table:
    t = Table(title=title, show_lines=False)
    for col, kw in (("#", {"justify": "right"}), ("measure", {}), ("compared with", {}), ("median", {"justify": "right"}),
                    ("min", {"justify": "right"}), ("max", {"justify": "right"}), ("target", {"justify": "right"}),
                    ("", {}), ("rounds: the numbers behind it", {})):
        t.add_column(col, **kw)
    for i, m in enumerate(measures, 1):
        style = {"met": "green", "MISSED": "bold red", "error": "bold red"}.get(m.verdict, "yellow")
        details = m.error or "; ".join(m.details[:1]) + (f" (+{len(m.details) - 1} more)" if len(m.details) > 1 else "")
        t.add_row(m.key, m.name, m.compared_with, m.fmt(m.median), m.fmt(m.low), m.fmt(m.high), m.target_text,
                  f"[{style}]{m.verdict}[/{style}]", details)
    return t


def markdown(measures: list[Measure], header: str) -> str:
    lines = [header, "", "| # | measure | compared with | median | min | max | target | |", "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for m in measures:
        lines.append(f"| {m.key} | {m.name} | {m.compared_with} | {m.fmt(m.median)} | {m.fmt(m.low)} | {m.fmt(m.high)} | {m.target_text} | {m.verdict} |")
    lines.append("")
    for m in measures:
        if m.details or m.note or m.error:
            lines.append(f"- **{m.key}** " + (m.error or " · ".join(m.details)) + (f" — {m.note}" if m.note else ""))
    return "\n".join(lines) + "\n"


def print_table(measures: list[Measure], title: str, console: Console | None = None) -> None:
    console = console or Console()
    console.print(table(measures, title))
    for m in measures:
        if len(m.details) > 1 or m.note:
            console.print(f"[bold]{m.key}[/bold] " + " · ".join(m.details) + (f"\n    {m.note}" if m.note else ""), highlight=False)
