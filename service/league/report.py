"""A league's results as a terminal table, Markdown for docs/bots.md ("Bots, measured"), JSON for programs, and a PNG
of the ratings."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
from rich.table import Table

from .ratings import Share

HEADERS = ("table", "bot", "seats", "games", "won", "win share a seat", "95% interval", "an equal seat's")


def table_name(table: tuple[str, ...]) -> str:
    """``expert ×1, greedy ×3``: a table's bots and how many seats each holds."""
    return ", ".join(f"{bot} ×{table.count(bot)}" for bot in dict.fromkeys(table))


def cells(share: Share) -> tuple[str, ...]:
    low, high = share.interval
    fair = "—" if math.isnan(share.fair) else f"{share.fair:.1%}"
    return (table_name(share.table), share.bot, str(share.seats), str(share.games), str(share.won), f"{share.share:.1%}",
            f"{low:.1%} – {high:.1%}", fair)


def terminal(shares: list[Share], ratings: dict[str, float], title: str) -> tuple[Table, Table]:
    out = Table(title=title, title_justify="left")
    for i, header in enumerate(HEADERS):
        out.add_column(header, justify="left" if i < 2 else "right")
    for share in shares:
        out.add_row(*cells(share))
    rated = Table(title="ratings (mu - 3 sigma)", title_justify="left")
    rated.add_column("bot")
    rated.add_column("rating", justify="right")
    for bot, rating in sorted(ratings.items(), key=lambda kv: -kv[1]):
        rated.add_row(bot, f"{rating:.1f}")
    return out, rated


def markdown(shares: list[Share], ratings: dict[str, float]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|---|---" + "|--:" * (len(HEADERS) - 2) + "|"]
    lines += ["| " + " | ".join(cells(share)) + " |" for share in shares]
    lines += ["", "| bot | rating |", "|---|--:|"]
    lines += [f"| {bot} | {rating:.1f} |" for bot, rating in sorted(ratings.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


class ShareRow(msgspec.Struct):
    table: list[str]
    bot: str
    seats: int
    games: int
    won: int
    share: float
    interval: tuple[float, float]


class LeagueReport(msgspec.Struct):
    kind: str
    command: str
    seed: str
    games_per_table: int
    shares: list[ShareRow]
    ratings: dict[str, float]
    wins: dict[str, dict[str, int]]
    """``wins[a][b]``: how often ``a`` beat ``b``."""


def as_json(kind: str, command: str, seed: str, games: int, shares: list[Share], ratings: dict[str, float],
            wins: dict[tuple[str, str], int]) -> bytes:
    nested: dict[str, dict[str, int]] = {}
    for (a, b), n in sorted(wins.items()):
        nested.setdefault(a, {})[b] = n
    rows = [ShareRow(list(s.table), s.bot, s.seats, s.games, s.won, round(s.share, 6),
                     (round(s.interval[0], 6), round(s.interval[1], 6))) for s in shares]
    report = LeagueReport(kind, command, seed, games, rows, {b: round(r, 3) for b, r in ratings.items()}, nested)
    return msgspec.json.format(msgspec.json.encode(report), indent=2)


def plot(ratings: dict[str, float], path: Path, title: str) -> None:
    """A bar a bot, best first, from the model's starting rating (0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = sorted(ratings.items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(ranked) + 1.4))
    ax.barh([b for b, _ in ranked], [r for _, r in ranked], color="#2f6f4f")
    for i, (_, r) in enumerate(ranked):
        ax.annotate(f"{r:.1f}", (r, i), xytext=(4 if r >= 0 else -4, 0), textcoords="offset points",
                    ha="left" if r >= 0 else "right", va="center")
    ax.axvline(0, color="#888", linewidth=0.8)
    ax.set_xlabel("rating (OpenSkill Plackett-Luce, mu - 3 sigma; a new player shows 0)")
    ax.set_title(title)
    low, high = min(r for _, r in ranked), max(r for _, r in ranked)
    ax.set_xlim(min(low, 0) - 3, max(high, 0) + 3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
