"""``python -m replays show`` (the table after event N, ``--step``) and ``python -m replays diff``, and verify's
messages naming what was expected and what was found."""

from __future__ import annotations

import re

import msgspec
import pytest

from replays.__main__ import main
from replays.render import RENDERERS
from replays.verify import verify
from service.events.envelope import body_of, canonical, chain_hash
from service.events.export import dumps
from service.rules.engine import Game, audit_lines, rules_for
from service.rules.solitaire import layout as grid
from service.sim.games import simulate

from .forge import export_of, index_of, public, with_public

AUDIT = re.compile(r"^(\d+)  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  ")


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture(scope="module")
def card_log(finished_game, tmp_path_factory):
    header, envelopes = export_of(finished_game)
    path = tmp_path_factory.mktemp("show") / "card.ndjson"
    path.write_bytes(dumps(header, envelopes))
    return path, header, envelopes


@pytest.fixture(scope="module")
def solitaire_log(tmp_path_factory):
    sim = simulate("solitaire", 1, bytes(range(32)), "sol-1", ["greedy"])
    header, envelopes = export_of(sim)
    path = tmp_path_factory.mktemp("show") / "solitaire.ndjson"
    path.write_bytes(dumps(header, envelopes))
    return path, header, envelopes


def folded(header, envelopes, n: int) -> Game:
    config = msgspec.json.decode(header.config, type=rules_for(header.kind).CONFIG)
    game = Game.new(header.kind, header.game_id, config, bytes(32))
    game.fold(envelopes[:n])
    return game


def run(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().out.splitlines()


# --- show -----------------------------------------------------------------------------------------------


def test_show_a_card_game_at_n_gives_every_seats_meter_points_and_hand(card_log, capsys):
    path, header, envelopes = card_log
    n = index_of(envelopes, "errand_run", 3) + 1
    state = folded(header, envelopes, n).state
    code, lines = run(capsys, "show", str(path), "--at", str(n))
    assert code == 0
    assert AUDIT.match(lines[1]) and lines[1].startswith(f"{n}  ")  # the event, then the table after it
    assert any(f"version {n}" in line for line in lines)
    for i, seat in enumerate(state.seats):
        [row] = [line for line in lines if f" {seat.player.name} " in line]
        cells = [c.strip() for c in row.split("│")]
        assert cells[1].endswith(str(i)) and cells[3] == str(seat.meter) and cells[4] == str(seat.score)
        assert cells[5] == (" ".join(seat.points) or "-")
        assert cells[6] == " ".join(seat.hand)
    assert any(f"seat {state.turn_seat} to play" in line for line in lines)
    assert any(line.startswith(f"decks: playing {len(state.deck)} · discard {len(state.discard)}") for line in lines)
    assert any(line.startswith("pending: ") for line in lines)


def test_show_a_pending_answer(card_log, capsys):
    path, header, envelopes = card_log
    n = next(k for k in range(1, len(envelopes) + 1) if folded(header, envelopes, k).state.pending is not None)
    pending = folded(header, envelopes, n).state.pending
    code, lines = run(capsys, "show", str(path), "--at", str(n))
    assert code == 0
    assert any(line.startswith(f"pending: seat {pending.seat} to ") for line in lines)


def test_show_a_solitaire_at_n_gives_the_folded_layout(solitaire_log, capsys):
    path, header, envelopes = solitaire_log
    n = index_of(envelopes, "card_moved", 5) + 1
    state = folded(header, envelopes, n).state
    code, lines = run(capsys, "show", str(path), "--at", str(n))
    assert code == 0
    header_row = next(i for i, line in enumerate(lines) if line.split()[:2] == ["row", "1"])
    assert lines[header_row].split() == ["row", *map(str, range(1, 14))]
    for r, row in enumerate(state.layout):
        assert lines[header_row + 1 + r].split() == [str(r), *(c or "··" for c in row)]
    assert any(f"redeals left {state.redeals_left}" in line and "playing" in line for line in lines)
    runs = ", ".join(f"row {r} {n}" for r, n in enumerate(grid.runs(state.layout)))
    assert f"runs (from slot 1, highlighted): {runs}" in lines


def test_show_without_at_is_the_end_of_the_game(solitaire_log, capsys):
    path, _, envelopes = solitaire_log
    code, lines = run(capsys, "show", str(path))
    assert code == 0 and lines[1].startswith(f"{len(envelopes)}  ")
    assert any("finished" in line and "redeals left" in line for line in lines)


def test_step_prints_one_audit_line_per_event_and_a_table_after_each(solitaire_log, capsys):
    path, header, envelopes = solitaire_log
    code, lines = run(capsys, "show", str(path), "--step", "--at", "3", "--to", "9")
    assert code == 0
    audit = [line for line in lines if AUDIT.match(line)]
    assert audit == audit_lines(rules_for(header.kind), envelopes[2:9], reveal=True)
    assert sum("redeals left" in line for line in lines) == 7


def test_step_from_the_start(card_log, capsys):
    path, _, _ = card_log
    code, lines = run(capsys, "show", str(path), "--step", "--to", "6")
    assert code == 0
    assert [int(AUDIT.match(line)[1]) for line in lines if AUDIT.match(line)] == [1, 2, 3, 4, 5, 6]


def test_show_out_of_range_or_unreadable_exits_2(card_log, tmp_path, capsys):
    path, _, envelopes = card_log
    assert run(capsys, "show", str(path), "--at", str(len(envelopes) + 1))[0] == 2
    assert run(capsys, "show", str(path), "--step", "--at", "9", "--to", "3")[0] == 2
    (tmp_path / "bad.ndjson").write_text("not json\n")
    assert run(capsys, "show", str(tmp_path / "bad.ndjson"))[0] == 2


def test_each_kind_has_a_renderer():
    from service.rules.engine import GAMES

    assert set(GAMES) <= set(RENDERERS)


# --- diff -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tampered(card_log):
    path, header, envelopes = card_log
    i = index_of(envelopes, "errand_run")
    value = public(envelopes[i])["value"]
    forged = envelopes[:i] + [with_public(envelopes[i], value=value + 10)] + envelopes[i + 1 :]
    out = path.with_name("tampered.ndjson")
    out.write_bytes(dumps(header, forged))
    return out, i + 1, value, forged


def test_diff_of_a_log_and_a_tampered_copy_names_the_seq_and_both_events(card_log, tampered, capsys):
    path, header, envelopes = card_log
    forged_path, seq, value, forged = tampered
    code, lines = run(capsys, "diff", str(path), str(forged_path))
    assert code == 1
    assert f"the logs part at seq {seq}: they agree on seqs 1–{seq - 1}" in lines
    rules = rules_for(header.kind)
    assert f"A: {audit_lines(rules, [envelopes[seq - 1]], reveal=True)[0]}" in lines
    assert f"B: {audit_lines(rules, [forged[seq - 1]], reveal=True)[0]}" in lines
    assert f"  public.value: {value} ≠ {value + 10}" in lines
    assert f"A's table after seq {seq}:" in lines and f"B's table after seq {seq}:" in lines
    assert sum(line.startswith("free-parking · ") for line in lines) == 2


def test_diff_of_identical_logs_exits_0(card_log, tmp_path, capsys):
    path, _, envelopes = card_log
    copy = tmp_path / "copy.ndjson"
    copy.write_bytes(path.read_bytes())
    code, lines = run(capsys, "diff", str(path), str(copy))
    assert code == 0
    assert lines[-1] == f"identical: {len(envelopes)} events, head {envelopes[-1].hash[:12]}"


def test_a_prefix_is_reported_as_such(card_log, tmp_path, capsys):
    path, header, envelopes = card_log
    short = tmp_path / "short.ndjson"
    short.write_bytes(dumps(header, envelopes[:50]))
    code, lines = run(capsys, "diff", str(short), str(path))
    assert code == 1
    assert f"A is a prefix of B: they agree on seqs 1–50; B goes on to seq {len(envelopes)}" in lines
    assert lines[-1].startswith("51  ")
    code, lines = run(capsys, "diff", str(path), str(short))
    assert code == 1 and "B is a prefix of A" in lines[2]


def test_different_games_and_unreadable_logs(card_log, solitaire_log, tmp_path, capsys):
    code, lines = run(capsys, "diff", str(card_log[0]), str(solitaire_log[0]))
    assert code == 1 and lines[-1] == "different games: A is free-parking game finished-game, B is solitaire game sol-1"
    assert run(capsys, "diff", str(card_log[0]), str(tmp_path / "missing.ndjson"))[0] == 2


# --- verify's messages ----------------------------------------------------------------------------------


def test_verify_names_the_expected_and_the_found_hash_and_what_re_deciding_gives(card_log, tampered):
    _, header, envelopes = card_log
    _, seq, value, forged = tampered
    altered = forged[seq - 1]
    recomputed = chain_hash(altered.prev_hash, canonical(body_of(altered)))
    line = verify(header, forged).summary()
    assert line.startswith(f"REJECTED finished-game: seq {seq}: hash")
    assert f"expected {recomputed}, found {envelopes[seq - 1].hash}" in line
    assert f"re-deciding its command gives errand_run with value={value}, the log has value={value + 10}" in line


def test_a_redacted_copy_differs_only_by_its_withheld_secrets(card_log, tmp_path, capsys):
    from service.events.envelope import redacted

    path, header, envelopes = card_log
    hidden = tmp_path / "redacted.ndjson"
    hidden.write_bytes(dumps(msgspec.structs.replace(header, seed=None), [redacted(e) for e in envelopes]))
    code, lines = run(capsys, "diff", str(path), str(hidden))
    assert code == 0 and "(B withholds the secrets; their digests are the same)" in lines
    code, lines = run(capsys, "show", str(hidden), "--at", "10")
    assert code == 0 and lines[1].startswith("(this log is redacted")
