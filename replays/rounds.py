"""A tournament over rounds' bundle checked offline (``python -m replays verify BUNDLE``): nothing in its manifest is
taken on trust. From the published server seed (against its commitment) and the entrants' client seeds the tournament's
seed is re-derived; from it, round by round, the draw of tables (with the standings before the round, recomputed from
the logs) and each table's deal (a duplicate round's one seed at every table, or the table's own); each table's log is
verified as a single game's, seated as drawn and dealt from that seed; and the standings — places' points or
matchpoints — are recomputed from the logs and compared. Any difference is named: the round, the table, the player.
"""

from __future__ import annotations

from collections import Counter

import msgspec

from service.rules import rounds as rules
from service.rules.rounds.bundle import Export, RoundsManifest
from service.rules.rounds.standings import Standing, TableResult, dealt

from .bundle import Progress, TableVerdict, verify_logs, where
from .seeds import seeding_of


class RoundsVerdict(msgspec.Struct, kw_only=True):
    tournament_id: str
    name: str
    rounds: int
    logs: list[TableVerdict] = []
    problems: list[str] = []
    notes: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.problems and all(t.verdict.ok for t in self.logs)

    def summary(self) -> str:
        who = f"tournament {self.tournament_id} ({self.name})"
        if self.ok:
            return (f"OK {who}: {self.rounds} rounds, {len(self.logs)} tables: every log verified; the seed, every draw, "
                    "every deal and the standings re-derived")
        verified = sum(t.verdict.ok for t in self.logs)
        return f"REJECTED {who}: {verified} of {len(self.logs)} logs verified, {len(self.problems)} problem(s)"

    def lines(self) -> list[str]:
        return [t.line() for t in self.logs] + self.notes + self.problems + [self.summary()]


def verify_rounds(manifest: RoundsManifest, exports: list[Export], *, progress: Progress | None = None,
                  jobs: int = 1) -> RoundsVerdict:
    verdict = RoundsVerdict(tournament_id=manifest.tournament_id, name=manifest.name, rounds=manifest.rounds)
    listed = [g for games in manifest.games for g in games]
    held = [header.game_id for header, _ in exports]
    for (header, _), v in zip(exports, verify_logs(exports, jobs, progress), strict=True):
        verdict.logs.append(TableVerdict(label=_label(manifest, header.game_id), verdict=v))
    if held != listed:
        verdict.problems.append(f"the bundle's logs are not the draws' tables in order: {len(held)} logs, "
                                f"{len(listed)} tables drawn")
        return verdict
    verdict.problems += _shape(manifest, exports)
    if verdict.problems:
        return verdict
    if not verdict.ok:
        verdict.problems.append("a table's log does not verify: no draw, deal or standing is re-derived from the logs")
        return verdict
    seed = _seed(manifest, verdict)
    if seed is None:
        return verdict
    logs = dict(zip(held, exports, strict=True))
    results: list[list[TableResult]] = []
    names = {e.player_id: e.name for e in manifest.entrants}
    entrants = sorted(names)
    for r, (draw, games) in enumerate(zip(manifest.draws, manifest.games, strict=True), 1):
        table = rules.standings(names, results, duplicate=manifest.duplicate)
        again = rules.draw_round(seed, r, entrants, manifest.table_size, rules.ranks_of(table) if r > 1 else None,
                                 rules.met_of(manifest.draws[:r - 1]))
        if again != draw:
            verdict.problems.append(f"round {r}: the draw is not the one the seed and the standings before it give "
                                    f"(tables {_seats(again)}, the manifest has {_seats(draw)})")
            return verdict
        deal = _deals(manifest, seed, r, draw, games, logs, verdict)
        done = [rules.table_result(r, t, g, logs[g][1]) for t, g in zip(draw.tables, games, strict=True)]
        if any(x is None for x in done):
            break
        results.append(done)  # type: ignore[arg-type]
        if manifest.duplicate and deal:
            verdict.notes.append(f"round {r}: every table dealt from the round's seed {deal[:16]}…")
    _standings(manifest, names, results, verdict)
    return verdict


def _shape(manifest: RoundsManifest, exports: list[Export]) -> list[str]:
    """What the manifest must be before anything is re-derived from it: a round's games for each round's draw, one
    to a table; each entrant listed once (else one line could show a client seed the seed was not made from); every
    log a game of the tournament's kind."""
    problems = []
    tables, games = [len(d.tables) for d in manifest.draws], [len(g) for g in manifest.games]
    if tables != games:
        problems.append(f"the manifest's draws and its games do not match: tables {tables}, games {games} by round")
    twice = sorted(p for p, n in Counter(e.player_id for e in manifest.entrants).items() if n > 1)
    if twice:
        problems.append(f"the manifest lists entrant(s) more than once: {', '.join(twice)}")
    problems += [f"{header.game_id} is a {header.kind} game, and the tournament's are {manifest.kind}"
                 for header, _ in exports if header.kind != manifest.kind]
    return problems


def _seed(manifest: RoundsManifest, verdict: RoundsVerdict) -> bytes | None:
    """The tournament's seed, re-derived from the published server seed and every entrant's client seed."""
    if manifest.server_seed is None or manifest.seed is None:
        verdict.problems.append("the bundle publishes no seed (the tournament is not over): its draws and deals cannot "
                                "be re-derived yet")
        return None
    server = bytes.fromhex(manifest.server_seed)
    if rules.commitment(server) != manifest.seed_commitment:
        verdict.problems.append("the server seed is not the one committed to at the tournament's creation")
        return None
    for e in manifest.entrants:
        if e.seed_from == "server" and rules.entrant_seed(server, e.player_id).hex() != e.client_seed:
            verdict.problems.append(f"entrant {e.player_id} ({e.name}): the client seed said derived from the server "
                                    "seed is not the one it derives")
    seed = rules.tournament_seed(server, {e.player_id: bytes.fromhex(e.client_seed) for e in manifest.entrants})
    if seed.hex() != manifest.seed:
        verdict.problems.append("the tournament's seed is not the one its server seed and entrants' client seeds give")
        return None
    return seed


def _deals(manifest: RoundsManifest, seed: bytes, r: int, draw: rules.Draw, games: list[str], logs: dict[str, Export],
           verdict: RoundsVerdict) -> str:
    """Each table of round ``r`` dealt from its derived seed and seated as drawn; the round's seed (hex) if duplicate."""
    deal = rules.round_seed(seed, r).hex() if manifest.duplicate else ""
    mode = "duplicate" if manifest.duplicate else "tournament"
    for table, game_id in zip(draw.tables, games, strict=True):
        header, envelopes = logs[game_id]
        wanted = deal or rules.table_seed(seed, r, table.table).hex()
        seeding = seeding_of(envelopes)
        if header.seed != wanted or seeding is None or seeding.mode != mode:
            verdict.problems.append(f"round {r}, {where(table.table, game_id)}: not dealt from the seed the tournament's "
                                    f"gives ({mode} {wanted[:16]}…)")
        sat = {s.seat: s for s in (seeding.seats if seeding else ())}
        for seat, player_id in enumerate(table.seats):
            got = sat.get(seat)
            if got is None or (player_id is None) != got.bot:
                verdict.problems.append(f"round {r}, {where(table.table, game_id)}: seat {seat} is not seated as drawn")
        taken = {seat: player.player_id for seat, player in dealt(envelopes).items()}
        for seat, player_id in enumerate(table.seats):
            if player_id is not None and taken.get(seat) != player_id:
                verdict.problems.append(f"round {r}, {where(table.table, game_id)}: seat {seat} was drawn for "
                                        f"{player_id}, the log seats {taken.get(seat)}")
    return deal


def _standings(manifest: RoundsManifest, names: dict[str, str], results: list[list[TableResult]],
               verdict: RoundsVerdict) -> None:
    again = rules.standings(names, results, duplicate=manifest.duplicate)
    if len(results) != manifest.rounds_finished:
        verdict.problems.append(f"the manifest says {manifest.rounds_finished} round(s) finished, the logs {len(results)}")
    if len(results) != manifest.rounds:  # its seeds are published once every round has finished
        verdict.problems.append(f"the manifest says the tournament has {manifest.rounds} round(s), its logs finish "
                                f"{len(results)}")
    if again != manifest.standings:
        padded = max(len(again), len(manifest.standings))
        logs, said = (next((a, b) for a, b in zip(again + [None] * padded, manifest.standings + [None] * padded)
                           if a != b))
        verdict.problems.append(f"the standings are not the logs': {_standing(logs)} (the manifest: {_standing(said)})")


def _standing(standing: Standing | None) -> str:
    return f"{standing.player_id} ranks {standing.rank} with {standing.points} points" if standing else "nobody"


def _label(manifest: RoundsManifest, game_id: str) -> str:
    for r, games in enumerate(manifest.games, 1):
        if game_id in games:
            return f"round {r}, {where(games.index(game_id), game_id)}"
    return f"game {game_id} (drawn in no round)"


def _seats(draw: rules.Draw) -> str:
    return "; ".join(",".join(p or "bot" for p in t.seats) for t in draw.tables)
