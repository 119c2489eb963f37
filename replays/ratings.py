"""``python -m replays ratings DIR_OR_FILE …``: every kind's ratings recomputed from exported games, with no store.

Each file is an exported log or a tournament bundle (every table's log); a folder is read for its ``*.ndjson``. The
games are handed to ``service.rules.ratings`` — which games are rated, each one's order of finish, the fold in the
order games finished — the very module the service's ratings read model runs, so the table printed here equals
``GET /ratings`` to the last digit when it is given every rated game the service holds. A game given twice (its own
export and a bundle's table, say) counts once, its longest log kept. This recomputes; ``python -m replays verify``
checks the logs themselves (their hash chains, seeds and receipts).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from service.events.envelope import Envelope
from service.events.export import ExportError, load
from service.rules.free_parking.bundle import is_bundle, load_bundle
from service.rules.ratings import RATED_KINDS, RatedGame, Ratings, fold, rated_game


class Unreadable(Exception):
    """A file that is neither an export nor a bundle (or a folder with neither in it)."""


def files(paths: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.glob("*.ndjson")) if p.is_dir() else [p]
    return out


def logs(paths: Iterable[str]) -> list[list[Envelope]]:
    """Every game's log in the files, each game once (its longest log)."""
    games: dict[str, list[Envelope]] = {}
    found = files(paths)
    if not found:
        raise Unreadable("no exported logs found")
    for path in found:
        try:
            data = path.read_bytes()
            exports = load_bundle(data)[1] if is_bundle(data) else [load(data)]
        except (OSError, ExportError) as e:
            raise Unreadable(f"{path}: {e}") from None
        for header, envelopes in exports:
            if len(envelopes) > len(games.get(header.game_id, [])):
                games[header.game_id] = envelopes
    return list(games.values())


def recompute(paths: Iterable[str]) -> tuple[Ratings, list[RatedGame]]:
    """The ratings of the games in ``paths`` and the rated games they came from."""
    rated = [g for g in map(rated_game, logs(paths)) if g is not None]
    return fold(rated), rated


def as_json(ratings: Ratings, kind: str, limit: int | None = None) -> bytes:
    """One kind's table exactly as ``GET /ratings?kind=`` answers it."""
    return msgspec.json.encode({"kind": kind, "players": ratings.ranked(kind, limit)})


def lines(ratings: Ratings, rated: list[RatedGame]) -> list[str]:
    """Every kind's table for a person: rank, rating (μ − 3σ), μ, σ, games, who."""
    out = [f"{len(rated)} rated games"]
    for kind in sorted(RATED_KINDS):
        rows = ratings.ranked(kind)
        if not rows:
            continue
        out.append(f"{kind}: {len(rows)} rated players")
        for r in rows:
            out.append(f"{r.rank:>4}  {r.rating:>8.3f}  mu {r.mu:.3f}  sigma {r.sigma:.3f}  {r.games:>4} games  "
                       f"{r.player_id}  {r.name}")
    return out
