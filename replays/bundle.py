"""A tournament bundle checked and told offline: ``python -m replays verify BUNDLE`` and ``python -m replays audit BUNDLE``.

Verifying a bundle trusts nothing in its manifest. Each table's log is verified as a single game's would be (chain,
secrets, every command re-decided); each manifest entry must say what its log says; the bundle must hold exactly the
manifest's tables, in order; and the standings and the ranking across tables, recomputed from the logs alone, must
equal the published ones (a bundle written before the ranking was published has none to compare). Every difference
names its table (index and game id), and for scores the player and the round.
"""

from __future__ import annotations

import multiprocessing
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

import msgspec

from service.events import free_parking as ev
from service.events.audit import iso
from service.events.common import SeatTaken
from service.events.envelope import Envelope
from service.events.export import ExportHeader
from service.rules.free_parking import CODEC, summary
from service.rules.free_parking.bundle import BundleTable, Export, Manifest, ranking_of, standing_of, table_of
from service.rules.free_parking.ranking import Ranked, ranking
from service.rules.free_parking.standings import PlayerStanding, RoundScore, TableStanding

from . import seeds
from .verify import Verdict, verify

Progress = Callable[[int], None]


def where(table: int, game_id: str) -> str:
    return f"table {table} (game {game_id})"


class TableVerdict(msgspec.Struct, kw_only=True):
    """One log of the bundle: where the manifest puts it (``label``) and its verdict as a single game."""

    label: str
    verdict: Verdict
    contributed: str = ""
    """Whether every person's seat brought its own client seed (``contributions``)."""

    def line(self) -> str:
        if not self.verdict.ok:
            return f"REJECTED {self.label}: {self.verdict.divergence}"
        text = f"OK {self.label}: {self.verdict.summary().split(': ', 1)[1]}"
        return f"{text}; {self.contributed}" if self.contributed else text


class BundleVerdict(msgspec.Struct, kw_only=True):
    tournament_id: str
    name: str
    tables: int
    events: int
    logs: list[TableVerdict] = []
    problems: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.problems and all(t.verdict.ok for t in self.logs)

    def summary(self) -> str:
        who = f"tournament {self.tournament_id} ({self.name})"
        if self.ok:
            return (
                f"OK {who}: {self.tables} tables, {self.events} events: every log verified, "
                "the manifest and its standings match the logs"
            )
        verified = sum(t.verdict.ok for t in self.logs)
        problems = f", {len(self.problems)} problem{'s' * (len(self.problems) != 1)} with the manifest" if self.problems else ""
        return f"REJECTED {who}: {verified} of {len(self.logs)} logs verified{problems}"

    def lines(self) -> list[str]:
        return [t.line() for t in self.logs] + self.problems + [self.summary()]


def verify_bundle(manifest: Manifest, exports: list[Export], *, progress: Progress | None = None,
                  jobs: int = 1) -> BundleVerdict:
    """Every check of a bundle; ``progress`` is told how many events (of all tables) are done so far. With ``jobs``
    above 1 the tables' logs are verified in that many processes at once (each table whole: ``progress`` moves a
    table at a time), and the verdict is the same."""
    verdict = BundleVerdict(
        tournament_id=manifest.tournament_id,
        name=manifest.name,
        tables=len(manifest.tables),
        events=sum(len(envelopes) for _, envelopes in exports),
    )
    index = {}
    for t in manifest.tables:
        index.setdefault(t.game_id, t.table)
    done = 0
    for j, ((header, envelopes), table_verdict) in enumerate(zip(exports, verify_logs(exports, jobs, progress), strict=True)):
        label = where(index[header.game_id], header.game_id) if header.game_id in index else f"log {j + 1} of the bundle (game {header.game_id})"
        verdict.logs.append(TableVerdict(label=label, verdict=table_verdict, contributed=contributions(envelopes)))
        done += len(envelopes)
        if progress is not None:
            progress(done)
    verdict.problems += _table_problems(manifest, exports)
    logs = _logs_by_game(exports, verdict.logs)
    verdict.problems += _entry_problems(manifest, logs)
    verdict.problems += _standings_problems(manifest, logs)
    verdict.problems += _ranking_problems(manifest, logs)
    return verdict


def verify_logs(exports: list[Export], jobs: int = 1, progress: Progress | None = None) -> Iterator[Verdict]:
    """Each log's verdict, in order: one after another, or in ``jobs`` processes (a verdict as each is needed).
    Forked processes find the logs where the parent left them, so only the verdicts cross between processes; where
    a platform cannot fork, each log is sent to its process."""
    if jobs <= 1 or len(exports) < 2:
        done = 0
        for header, envelopes in exports:
            yield verify(header, envelopes, progress=None if progress is None else (lambda i, base=done: progress(base + i)))
            done += len(envelopes)
        return
    global _SHARED
    forked = "fork" in multiprocessing.get_all_start_methods()
    _SHARED = exports
    try:
        context = multiprocessing.get_context("fork") if forked else None
        with ProcessPoolExecutor(max_workers=min(jobs, len(exports)), mp_context=context) as pool:
            futures = [pool.submit(_verify_shared, i) if forked else pool.submit(verify, *export)
                       for i, export in enumerate(exports)]
            for future in futures:
                yield future.result()
    finally:
        _SHARED = []


_SHARED: list[Export] = []
"""The logs a forked verifier reads (set by ``verify_logs`` before its processes start)."""


def _verify_shared(i: int) -> Verdict:
    return verify(*_SHARED[i])


def contributions(envelopes: list[Envelope]) -> str:
    """Whether every seat of a person at the table contributed its own client seed to the deal (``docs/rng.md``)."""
    seeding = seeds.seeding_of(envelopes)
    if seeding is None:
        return ""
    if seeding.mode != "combined":
        return f"no seat's client seed made the deal (seeding {seeding.mode})"
    people = [s for s in seeding.seats if not s.bot]
    missing = seeds.humans_without_seed(seeding)
    if not people:
        return "no person sat at this table: every client seed was derived"
    if not missing:
        return f"every person's seat brought its own client seed ({len(people)} of {len(seeding.seats)} seats)"
    named = ", ".join(f"seat {s.seat} ({s.name})" for s in missing)
    return f"not every person brought a client seed: {named} sent none, derived from the server's seed"


def _logs_by_game(exports: list[Export], verdicts: list[TableVerdict]) -> dict[str, Export]:
    """Each game's first verified log: only a log that verifies is compared with what the manifest says of it."""
    out: dict[str, Export] = {}
    for (header, envelopes), t in zip(exports, verdicts, strict=True):
        if t.verdict.ok:
            out.setdefault(header.game_id, (header, envelopes))
    return out


def _table_problems(manifest: Manifest, exports: list[Export]) -> list[str]:
    """The bundle holds exactly the manifest's tables: none missing, none extra, none twice, in order."""
    listed = [t.game_id for t in manifest.tables]
    held = [header.game_id for header, _ in exports]
    out = []
    for i, t in enumerate(manifest.tables):
        if t.table != i:
            out.append(f"{where(i, t.game_id)}: the manifest numbers it table {t.table}")
        if t.game_id in listed[:i]:
            out.append(f"{where(i, t.game_id)}: the manifest lists this game already as table {listed.index(t.game_id)}")
        if t.game_id not in held:
            out.append(f"{where(i, t.game_id)}: its log is missing from the bundle")
    for j, game_id in enumerate(held):
        if game_id not in listed:
            out.append(f"log {j + 1} of the bundle (game {game_id}): not a table of the manifest")
        elif game_id in held[:j]:
            out.append(f"{where(listed.index(game_id), game_id)}: its log is in the bundle twice (logs {held.index(game_id) + 1} and {j + 1})")
    if not out and held != listed:
        for i, (want, got) in enumerate(zip(listed, held, strict=True)):
            if want != got:
                out.append(f"{where(i, want)}: out of order: the bundle's log {i + 1} is game {got} (table {listed.index(got)})")
    return out


_ENTRY_FIELDS = ("seats", "seed", "seed_commitment", "events", "head", "status")


def _entry_problems(manifest: Manifest, logs: dict[str, Export]) -> list[str]:
    """Each manifest entry says of its table what the table's own log says."""
    out = []
    for t in manifest.tables:
        if t.game_id not in logs:
            continue
        header, envelopes = logs[t.game_id]
        from_log = table_of(t.table, header, envelopes)
        if header.kind != manifest.kind:
            out.append(f"{where(t.table, t.game_id)}: manifest says kind {manifest.kind}, the log says {header.kind}")
        if msgspec.json.decode(t.config) != msgspec.json.decode(from_log.config):
            out.append(f"{where(t.table, t.game_id)}: manifest says config {bytes(t.config).decode()}, the log says {bytes(header.config).decode()}")
        for name in _ENTRY_FIELDS:
            said, found = getattr(t, name), getattr(from_log, name)
            if said != found:
                out.append(f"{where(t.table, t.game_id)}: manifest says {name} {said}, the log says {found}")
    return out


def _standings_problems(manifest: Manifest, logs: dict[str, Export]) -> list[str]:
    """The published standings equal the ones recomputed from each verified log."""
    published: dict[str, TableStanding] = {}
    out = []
    tables = {t.game_id: t.table for t in manifest.tables}
    for i, s in enumerate(manifest.standings):
        if s.game_id not in tables:
            out.append(f"standings entry {i} is of game {s.game_id}, not a table of the manifest")
        elif s.game_id in published:
            out.append(f"{where(tables[s.game_id], s.game_id)}: the manifest gives its standings twice")
        published.setdefault(s.game_id, s)
    for t in manifest.tables:
        if t.game_id not in logs:
            continue
        said = published.get(t.game_id)
        if said is None:
            out.append(f"{where(t.table, t.game_id)}: the manifest gives no standings for it")
            continue
        out += [f"{where(t.table, t.game_id)}: {d}" for d in compare_standings(said, standing_of(*logs[t.game_id]))]
    return out


def compare_standings(said: TableStanding, found: TableStanding) -> list[str]:
    """Where the manifest's standings of a table differ from its log's, per player and round, in words."""
    out = [f"manifest says {f} {getattr(said, f)}, the log says {getattr(found, f)}" for f in ("finished", "rounds", "version") if getattr(said, f) != getattr(found, f)]
    theirs = {_key(p): p for p in found.players}
    ours = {_key(p): p for p in said.players}
    for key, p in ours.items():
        q = theirs.get(key)
        if q is None:
            out.append(f"player {_named(p)}: manifest lists them, the log has no such player")
        else:
            out += [f"player {_named(p)}{d}" for d in _player_differences(p, q)]
    out += [f"player {_named(q)}: the log has them, the manifest does not" for key, q in theirs.items() if key not in ours]
    return out


def _key(p: PlayerStanding) -> str:
    return p.player_id or p.name


def _named(p: PlayerStanding) -> str:
    """The player's name and, where they have one, their id: two bots at a table share a name."""
    return f"{p.name} ({p.player_id})" if p.player_id else p.name


def _player_differences(said: PlayerStanding, found: PlayerStanding) -> Iterator[str]:
    rounds = {r.round: r for r in said.rounds}
    logged = {r.round: r for r in found.rounds}
    for n in sorted(rounds.keys() | logged.keys()):
        a, b = rounds.get(n), logged.get(n)
        if a is None or b is None:
            yield f" round {n}: manifest says {_round(a)}, the log says {_round(b)}"
            continue
        for f in ("score", "bonus", "total", "seat"):
            if getattr(a, f) != getattr(b, f):
                yield f" round {n}: manifest says {f} {getattr(a, f)}, the log says {getattr(b, f)}"
    if said.total != found.total:
        yield f": manifest says total {said.total}, the log says {found.total}"
    if said.winner != found.winner:
        yield f": manifest says {_won(said.winner)}, the log says {_won(found.winner)}"


def _ranking_problems(manifest: Manifest, logs: dict[str, Export]) -> list[str]:
    """The published ranking equals the one recomputed from the logs, line by line. Only once every table's log
    verified: a table without one is a problem said already, and a ranking without it would differ everywhere."""
    if manifest.ranking is None or any(t.game_id not in logs for t in manifest.tables):
        return []
    found = ranking_of(manifest.tables, [standing_of(*logs[t.game_id]) for t in manifest.tables])
    out = []
    for n in range(max(len(manifest.ranking), len(found))):
        said = manifest.ranking[n] if n < len(manifest.ranking) else None
        logged = found[n] if n < len(found) else None
        if said != logged:
            out.append(f"ranking line {n + 1}: manifest says {_placed(said)}, the logs say {_placed(logged)}")
    return out


def _placed(r: Ranked | None) -> str:
    if r is None:
        return "no such line"
    who = f"{r.name} ({r.player_id})" if r.player_id else r.name
    won = ", winner" if r.winner else ""
    return f"{r.rank}. {who} of table {r.table}: total {r.total}, {r.rounds} rounds, {r.rounds_won} won{won}"


def _round(r: RoundScore | None) -> str:
    return "no such round" if r is None else f"score {r.score}, bonus {r.bonus}, total {r.total}"


def _won(winner: bool) -> str:
    return "winner" if winner else "not the winner"


# --- the audit report ---------------------------------------------------------------------------

SPECIALS = {
    ev.OfficerJonesPlayed: "Officer Jones",
    ev.TimeExpiresPlayed: "Time Expires",
    ev.TalkedOut: "Talk Your Way Out of It",
}


def audit(manifest: Manifest, exports: list[Export], verdict: BundleVerdict, *, progress: Progress | None = None) -> list[str]:
    """The tournament told for a person: each table's rounds and scores, every special with its seq, the winners."""
    tables = f"{len(manifest.tables)} tables, {manifest.status}, created {iso(manifest.created_at)}"
    out = [
        f"Tournament {manifest.name} ({manifest.tournament_id}): {manifest.kind}, {tables}",
        f"Verification: {verdict.summary()}",
    ]
    out += [f"  {p}" for p in verdict.problems]
    out += [f"  {t.line()}" for t in verdict.logs if not t.verdict.ok]
    standings = []
    done = 0
    for j, (header, envelopes) in enumerate(exports):
        entry = manifest_entry(manifest, header.game_id)
        label = where(entry.table, header.game_id) if entry else f"log {j + 1} of the bundle (game {header.game_id})"
        standing = standing_of(header, envelopes)
        standings.append((label, entry.table if entry else j, standing))
        out += [""] + _table_report(label, header, envelopes, standing)
        done += len(envelopes)
        if progress is not None:
            progress(done)
    out += ["", "Final standings"] + [line for label, table, s in standings for line in _final(label, table, s)]
    out += ["", "Ranking across tables (table winners first, then points; level players share a rank)"]
    out += [f"  {_line(r)}" for r in ranking((table, s) for _, table, s in standings)]
    return out


def _table_report(label: str, header: ExportHeader, envelopes: list[Envelope], standing: TableStanding) -> list[str]:
    """A table round by round: its specials in order, how the round ended, and who scored what."""
    config = msgspec.json.decode(header.config)
    status = "finished" if standing.finished else "not finished"
    out = [f"{_title(label)}: {config.get('seats')} seats, {config.get('mode', 'standard')}, {status}, {len(envelopes)} events"]
    names: dict[int, str] = {}
    scored: dict[int, list[tuple[PlayerStanding, RoundScore]]] = defaultdict(list)
    for p in standing.players:
        for r in p.rounds:
            scored[r.round].append((p, r))
    for env in envelopes:
        event = CODEC.join(env.public)
        if isinstance(event, SeatTaken):
            names[event.seat] = event.player.name
        elif isinstance(event, ev.PlacesTraded):
            names[event.seat], names[event.other] = names.get(event.other, "?"), names.get(event.seat, "?")
        elif isinstance(event, ev.RoundDealt):
            out.append(f"  Round {event.round}")
        elif type(event) in SPECIALS:
            out.append(f"    seq {env.seq}  {SPECIALS[type(event)]}: {summary(event)} ({_who(event, names)})")
        elif isinstance(event, ev.RoundEnded):
            out.append(f"    seq {env.seq}  round {event.round} ends: {names.get(event.seat, '?')} (seat {event.seat}) reached 150, +25 bonus")
            out += _scores(scored.pop(event.round, []))
        elif isinstance(event, ev.GameWon):
            out += _scores([pr for n in sorted(scored) for pr in scored.pop(n)])  # a standard game scores at the win
            out.append(f"  seq {env.seq}  winner: {event.player.name} (seat {event.seat}) with {event.points} points")
    if not standing.finished:
        out.append("  no winner yet: the game goes on past this log")
    return out


def _who(event: msgspec.Struct, names: dict[int, str]) -> str:
    seat = names.get(event.seat, "?")
    target = getattr(event, "target", None)
    return seat if target is None else f"{seat} against {names.get(target, '?')}"


def _scores(rows: list[tuple[PlayerStanding, RoundScore]]) -> list[str]:
    """Who scored what in a round, in seat order."""
    rows = sorted(rows, key=lambda pr: (pr[1].round, pr[1].seat))
    return [f"      {p.name}: seat {r.seat}, score {r.score} (bonus {r.bonus}), total {r.total}" for p, r in rows]


def _final(label: str, table: int, s: TableStanding) -> list[str]:
    """A table's players ranked as the API ranks them: level players share a rank."""
    winner = s.winner
    head = f"  {_title(label)}: " + (f"winner {winner.name} with {winner.total}" if winner else "no winner yet")
    return [head] + [f"    {r.rank}. {r.name} {r.total}" + (" (winner)" if r.winner else "") for r in ranking([(table, s)])]


def _line(r: Ranked) -> str:
    """``3. Cy 120``, then where and how: the table, the rounds won, whether they won their table."""
    won = ", winner of the table" if r.winner else ""
    return f"{r.rank}. {r.name} {r.total} (table {r.table}, {r.rounds_won} of {r.rounds} rounds won{won})"


def _title(label: str) -> str:
    return label[:1].upper() + label[1:]


def manifest_entry(manifest: Manifest, game_id: str) -> BundleTable | None:
    """The manifest's first entry for ``game_id``, if it lists the game."""
    return next((t for t in manifest.tables if t.game_id == game_id), None)
