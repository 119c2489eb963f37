"""Tampering with a finished game's export: every edit is rejected, naming the first bad seq.

Each kind of edit is tried twice where it makes sense: as is (the hash chain catches it) and
``rechain``-ed, i.e. sealed again by a forger who knows the seed, so that only re-deciding the
recorded commands can tell.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replays.verify import Verdict, verify
from service.events.envelope import NULL, has_secret, redacted, seed_commitment
from service.sim.games import simulate

from .forge import export_of, index_of, public, rechain, replace, truncated, with_command, with_public, with_secret


@pytest.fixture(scope="module")
def log(finished_game):
    return export_of(finished_game)


@pytest.fixture(scope="module")
def seed(log):
    return bytes.fromhex(log[0].seed)


def rejected(verdict: Verdict, seq: int, what: str) -> str:
    """Assert a rejection at ``seq`` about ``what``; the one-line summary, for further checks."""
    assert not verdict.ok, verdict.summary()
    d = verdict.divergence
    assert (d.seq, what in d.what) == (seq, True), verdict.summary()
    assert d.expected and d.found and d.expected != d.found
    line = verdict.summary()
    assert line.startswith(f"REJECTED {verdict.game_id}: ") and "\n" not in line
    assert f"{d.says[0]} {d.expected}, {d.says[1]} {d.found}" in line
    return line


def test_the_untouched_export_verifies_every_command_and_secret(log):
    header, envelopes = log
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert verdict.secrets_checked == sum(e.secret_digest is not None for e in envelopes) > 0
    assert verdict.secrets_unchecked == [] and verdict.notes == []
    assert verdict.summary().startswith(f"OK finished-game: {len(envelopes)} events, head {envelopes[-1].hash[:12]}")


def test_a_header_naming_rules_these_rules_do_not_play_is_refused(log):
    header, envelopes = log
    forged = msgspec.structs.replace(header, rules_version=99)
    rejected(verify(forged, envelopes), 0, "rules version")


def test_a_header_naming_another_version_than_the_game_was_played_under_is_refused(log, seed):
    """The version is decided as the log's ``game_created`` records it: a header that claims another one (to have
    the game re-decided under other rules) disagrees with re-deciding the game's creation."""
    header, envelopes = log
    other = next((v for v in range(1, 5) if v != header.rules_version), None)
    from service.rules.engine import rules_for

    if other not in rules_for(header.kind).RULES_VERSIONS:
        pytest.skip("these rules play one version only: the test above covers another version's header")
    assert not verify(msgspec.structs.replace(header, rules_version=other), envelopes).ok


# --- public fields ------------------------------------------------------------------------------------


def test_an_errands_value_edited_breaks_the_chain_there(log):
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    forged = envelopes[:i] + [with_public(envelopes[i], value=public(envelopes[i])["value"] + 10)] + envelopes[i + 1 :]
    line = rejected(verify(header, forged), i + 1, "hash")
    assert envelopes[i].hash in line


def test_an_errands_value_edited_and_resealed_is_caught_by_re_deciding(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    value = public(envelopes[i])["value"]
    edited = envelopes[:i] + [with_public(envelopes[i], value=value + 10)] + envelopes[i + 1 :]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "event")
    assert f"re-deciding its command gives errand_run with value={value}, the log has value={value + 10}" in line


def test_a_seat_edited_and_resealed_is_caught_by_re_deciding(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "meter_fed")
    seat = public(envelopes[i])["seat"]
    edited = envelopes[:i] + [with_public(envelopes[i], seat=(seat + 1) % 4)] + envelopes[i + 1 :]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "event")
    assert f"seat={seat}, the log has seat={(seat + 1) % 4}" in line


# --- secrets ------------------------------------------------------------------------------------------


def _first_difference(env):
    """How the rejection should name the edit: the first changed hand, or the drawn cards."""
    secret = msgspec.json.decode(env.secret)
    key, value = ("hands[0]", secret["hands"][0]) if "hands" in secret else ("cards[0]", secret["cards"][0])
    return f"gives {key}={msgspec.json.encode(value).decode()}"


def _dealt_hand_swapped(env):
    hands = msgspec.json.decode(env.secret)["hands"]
    hands[0], hands[1] = hands[1], hands[0]
    return with_secret(env, hands=hands)


def _drawn_card_replaced(env):
    return with_secret(env, cards=["P200-1"] + msgspec.json.decode(env.secret)["cards"][1:])


@pytest.mark.parametrize(("type_", "edit"), [("round_dealt", _dealt_hand_swapped), ("cards_drawn", _drawn_card_replaced)])
def test_a_secret_edited_does_not_match_its_digest(log, type_, edit):
    header, envelopes = log
    i = index_of(envelopes, type_)
    line = rejected(verify(header, envelopes[:i] + [edit(envelopes[i])] + envelopes[i + 1 :]), i + 1, "secret (does not match its digest)")
    assert envelopes[i].secret_digest[:16] in line


@pytest.mark.parametrize(("type_", "edit"), [("round_dealt", _dealt_hand_swapped), ("cards_drawn", _drawn_card_replaced)])
def test_a_secret_edited_with_a_new_digest_is_caught_by_re_deciding(log, seed, type_, edit):
    header, envelopes = log
    i = index_of(envelopes, type_)
    forged = rechain(header, envelopes[:i] + [edit(envelopes[i])] + envelopes[i + 1 :], seed=seed)
    line = rejected(verify(*forged), i + 1, "secret")
    assert f"seq {i + 1}: secret: re-deciding the command of seq " in line and _first_difference(envelopes[i]) in line


def test_a_withheld_secret_with_an_edited_digest_is_caught_by_re_deciding(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "cards_drawn")
    edited = replace(redacted(envelopes[i]), secret_digest="0" * 64)
    rejected(verify(*rechain(header, envelopes[:i] + [edited] + envelopes[i + 1 :])), i + 1, "secret digest")


# --- events dropped, swapped, inserted ------------------------------------------------------------------


def test_a_dropped_event_leaves_a_gap_in_the_seqs(log):
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    line = rejected(verify(header, envelopes[:i] + envelopes[i + 1 :]), i + 1, "seq")
    assert f"expected {i + 1}, found {i + 2}" in line


def test_a_dropped_event_renumbered_and_resealed_is_caught_by_re_deciding(log, seed):
    """Without the errand, the turn's next command comes before any main play: the rules refuse it."""
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    forged = rechain(header, envelopes[:i] + envelopes[i + 1 :], seed=seed, renumber=True)
    line = rejected(verify(*forged), i + 1, "command (the rules refuse it)")
    assert "main_play_required" in line


def test_two_swapped_events_are_out_of_order(log):
    header, envelopes = log
    i = index_of(envelopes, "turn_ended")
    swapped = envelopes[:i] + [envelopes[i + 1], envelopes[i]] + envelopes[i + 2 :]
    line = rejected(verify(header, swapped), i + 1, "seq")
    assert f"expected {i + 1}, found {i + 2}" in line


def test_two_swapped_events_renumbered_and_resealed_are_caught_by_re_deciding(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "turn_ended")
    swapped = envelopes[:i] + [envelopes[i + 1], envelopes[i]] + envelopes[i + 2 :]
    line = rejected(verify(*rechain(header, swapped, seed=seed, renumber=True)), i + 1, "event")
    assert "gives turn_ended" in line and "the log has turn_began" in line


def _forged_end_turn(envelopes, i):
    """An ``end_turn`` from a seat whose turn it is not, sealed in as the event at index ``i``."""
    turn = envelopes[index_of(envelopes, "turn_began")]
    not_theirs = (public(turn)["seat"] + 1) % 4
    return replace(
        envelopes[i],
        type="turn_ended",
        public=msgspec.Raw(b'{"seat":%d,"type":"turn_ended"}' % not_theirs),
        actor=f"seat:{not_theirs}",
        command=msgspec.Raw(b'{"type":"end_turn"}'),
        command_id=None,
        secret_digest=None,
        secret=NULL,
    )


def test_a_forged_command_sealed_onto_the_chain_is_named_itself(log, seed):
    """The chain breaks only at the event after it, but the forged command is the first bad seq."""
    header, envelopes = log
    i = index_of(envelopes, "turn_began") + 2  # just after the first turn's draw: the first main play
    forged = _forged_end_turn(envelopes, i)
    prefix = rechain(header, envelopes[:i] + [replace(forged, seq=i + 1)])[1]
    line = rejected(verify(header, prefix + envelopes[i:]), i + 1, "command (the rules refuse it)")
    assert "not_your_turn" in line and '{"type":"end_turn"}' in line


def test_a_forged_command_inserted_and_resealed_is_refused_by_the_rules(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "turn_began") + 2
    inserted = envelopes[:i] + [_forged_end_turn(envelopes, i)] + envelopes[i:]
    rejected(verify(*rechain(header, inserted, seed=seed, renumber=True)), i + 1, "command (the rules refuse it)")


# --- commands, time, actors ----------------------------------------------------------------------------


def test_a_commands_body_altered_breaks_the_chain(log):
    header, envelopes = log
    i = index_of(envelopes, "meter_fed")
    rejected(verify(header, envelopes[:i] + [with_command(envelopes[i], card="M10-1")] + envelopes[i + 1 :]), i + 1, "hash")


def test_a_commands_body_altered_and_resealed_is_refused_by_the_rules(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "meter_fed")
    edited = envelopes[:i] + [with_command(envelopes[i], card="P200-1")] + envelopes[i + 1 :]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "command (the rules refuse it)")
    assert '"card":"P200-1"' in line


def test_time_going_back_is_named(log):
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    earlier = envelopes[i - 1].at - 1
    line = rejected(verify(header, envelopes[:i] + [replace(envelopes[i], at=earlier)] + envelopes[i + 1 :]), i + 1, "time")
    assert f"expected at ≥ {envelopes[i - 1].at}, found {earlier}" in line


def test_time_going_back_resealed_is_still_named(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "errand_run")
    edited = envelopes[:i] + [replace(envelopes[i], at=envelopes[i - 1].at - 1)] + envelopes[i + 1 :]
    rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "time")


def test_an_actor_changed_breaks_the_chain(log):
    header, envelopes = log
    i = index_of(envelopes, "meter_fed")
    rejected(verify(header, envelopes[:i] + [replace(envelopes[i], actor="seat:0")] + envelopes[i + 1 :]), i + 1, "hash")


@pytest.mark.parametrize("actor", ["other seat", "server", "seat:9", "seat:x"])
def test_an_actor_changed_and_resealed_is_refused(log, seed, actor):
    header, envelopes = log
    i = index_of(envelopes, "meter_fed")
    seat = public(envelopes[i])["seat"]
    actor = f"seat:{(seat + 1) % 4}" if actor == "other seat" else actor
    edited = envelopes[:i] + [replace(envelopes[i], actor=actor)] + envelopes[i + 1 :]
    line = rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "")
    assert actor in line


def test_an_actor_changed_inside_a_batch_is_caught(log, seed):
    header, envelopes = log
    i = index_of(envelopes, "turn_began", 1)  # decided by end_turn, not its batch's first event
    assert envelopes[i].command == NULL
    edited = envelopes[:i] + [replace(envelopes[i], actor="server")] + envelopes[i + 1 :]
    rejected(verify(*rechain(header, edited, seed=seed)), i + 1, "actor and time")


# --- the header: seed, commitment, truncation ----------------------------------------------------------


def test_a_changed_seed_in_the_header_does_not_match_the_commitment(log):
    header, envelopes = log
    other = bytes(32)
    line = rejected(verify(replace(header, seed=other.hex()), envelopes), 0, "seed")
    assert line.startswith("REJECTED finished-game: header: seed:")
    assert header.seed_commitment in line and seed_commitment(other) in line


def test_a_changed_commitment_in_the_header_is_rejected(log):
    header, envelopes = log
    rejected(verify(replace(header, seed_commitment="ab" * 32), envelopes), 0, "seed")


def test_a_changed_commitment_in_a_header_without_seed_disagrees_with_game_created(log):
    header, envelopes = log
    line = rejected(verify(replace(header, seed=None, seed_commitment="ab" * 32), envelopes), 0, "seed commitment in the header")
    assert f"expected {header.seed_commitment} (as game_created records it), found {'ab' * 32}" in line


def test_a_changed_config_in_the_header_disagrees_with_game_created(log):
    header, envelopes = log
    rejected(verify(replace(header, config=msgspec.Raw(b'{"seats":5}')), envelopes), 0, "config in the header")


def test_a_whole_game_forged_from_another_seed_verifies_alone_but_not_against_the_commitment_shown(log):
    """Only the commitment a player kept from the start tells a complete forgery from the game they played."""
    header, envelopes = log
    forged_header, forged = export_of(simulate("free-parking", 4, bytes(32), header.game_id, ["greedy"] * 4))
    assert verify(forged_header, forged).ok
    line = rejected(verify(forged_header, forged, commitment=header.seed_commitment), 0, "seed commitment")
    assert f"expected {header.seed_commitment} (the one you were shown), found {forged_header.seed_commitment}" in line
    assert verify(header, envelopes, commitment=header.seed_commitment).ok


def _batch_end(envelopes, type_="turn_ended"):
    """A length at which the log ends between two commands (the next event carries a command)."""
    i = index_of(envelopes, type_, 3)
    while envelopes[i + 1].command == NULL:
        i += 1
    return i + 1


def test_a_truncated_log_under_its_old_header_ends_early(log):
    header, envelopes = log
    n = _batch_end(envelopes)
    line = rejected(verify(*truncated(header, envelopes, n, adjust_header=False)), n + 1, "the log ends early")
    assert f"{header.version} events ending at head {header.head[:12]}" in line
    assert f"the log ends after {n} events, at head {envelopes[n - 1].hash[:12]}" in line


def test_a_truncated_log_with_a_matching_header_is_a_valid_prefix(log):
    """A game's log cut between two commands is the game as it stood then: it re-decides, and says it goes on."""
    header, envelopes = log
    n = _batch_end(envelopes)
    verdict = verify(*truncated(header, envelopes, n, adjust_header=True))
    assert verdict.ok and verdict.redecided and verdict.events == n, verdict.summary()
    assert verdict.secrets_unchecked == []
    assert f"the game goes on after version {n}: this log is a prefix of it" in verdict.summary()


def test_a_log_cut_inside_a_commands_batch_is_rejected_even_with_a_matching_header(log):
    """Events of one command are appended together: no version ever ended half way through a batch."""
    header, envelopes = log
    # just after the first event of the tenth batch of several events
    n = [i for i in range(len(envelopes) - 1) if envelopes[i].command != NULL and envelopes[i + 1].command == NULL][9] + 1
    line = rejected(verify(*truncated(header, envelopes, n, adjust_header=True)), n + 1, "inside a command's batch")
    assert f"expected {envelopes[n].type}" in line and "found the log ends" in line


def test_events_appended_beyond_the_header_are_rejected(log):
    header, envelopes = log
    n = _batch_end(envelopes)
    short_header = truncated(header, envelopes, n, adjust_header=True)[0]
    rejected(verify(short_header, envelopes), n + 1, "beyond the header's version")


def test_a_wrong_head_in_the_header_is_named(log):
    header, envelopes = log
    rejected(verify(replace(header, head="f" * 64), envelopes), len(envelopes), "head named in the header")


# --- redacted logs ------------------------------------------------------------------------------------


def test_a_redacted_log_with_the_seed_checks_every_secret_by_re_deciding(log):
    header, envelopes = log
    hidden = [redacted(e) for e in envelopes]
    assert not any(has_secret(e) for e in hidden)
    verdict = verify(header, hidden)
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert verdict.secrets_checked == sum(e.secret_digest is not None for e in envelopes)
    assert verdict.secrets_unchecked == []


def test_a_redacted_prefix_without_the_seed_verifies_its_chain_and_names_the_secrets_it_could_not_check(log):
    header, envelopes = log
    n = _batch_end(envelopes)
    prefix_header, prefix = truncated(replace(header, seed=None), [redacted(e) for e in envelopes], n, adjust_header=True)
    verdict = verify(prefix_header, prefix)
    assert verdict.ok and not verdict.redecided, verdict.summary()
    digested = [e.seq for e in prefix if e.secret_digest is not None]
    assert verdict.secrets_unchecked == digested and verdict.secrets_checked == 0
    line = verdict.summary()
    assert "chain only" in line and f"{len(digested)} secrets not checked, the seed is needed (seqs 6, 8" in line
    assert "the seed is not in this log" in line


def test_a_finished_log_without_the_seed_in_its_header_uses_the_revealed_seed(log):
    header, envelopes = log
    verdict = verify(replace(header, seed=None), [redacted(e) for e in envelopes])
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert f"seed taken from seed_revealed at seq {len(envelopes)}" in verdict.summary()


def test_a_forged_seed_revealed_does_not_match_the_commitment(log):
    header, envelopes = log
    last = with_public(envelopes[-1], seed="00" * 32)
    forged_header, forged = rechain(replace(header, seed=None), envelopes[:-1] + [last])
    rejected(verify(forged_header, forged), len(envelopes), "seed revealed")


# --- any edit, anywhere -------------------------------------------------------------------------------

_examples = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, value[0] if value else 0]
    return 0 if value is None else None


@_examples
@given(data=st.data())
def test_any_public_field_changed_and_resealed_is_rejected_at_its_seq(log, seed, data):
    header, envelopes = log
    i = data.draw(st.integers(0, len(envelopes) - 1), label="index")
    fields = public(envelopes[i])
    key = data.draw(st.sampled_from(sorted(k for k in fields if k != "type")), label="field")
    edited = envelopes[:i] + [with_public(envelopes[i], **{key: _changed(fields[key])})] + envelopes[i + 1 :]
    verdict = verify(*rechain(header, edited, seed=seed))
    header_field = i == 0 and key in ("config", "seed_commitment")  # game_created's, checked against the header
    assert not verdict.ok and verdict.divergence.seq == (0 if header_field else i + 1), verdict.summary()


@_examples
@given(data=st.data())
def test_any_command_sent_by_another_actor_is_rejected_at_its_seq(log, seed, data):
    header, envelopes = log
    firsts = [i for i, e in enumerate(envelopes) if e.command != NULL]
    i = data.draw(st.sampled_from(firsts), label="index")
    actors = ["server", *(f"seat:{n}" for n in range(8))]
    actor = data.draw(st.sampled_from([a for a in actors if a != envelopes[i].actor]), label="actor")
    edited = envelopes[:i] + [replace(envelopes[i], actor=actor)] + envelopes[i + 1 :]
    verdict = verify(*rechain(header, edited, seed=seed))
    assert not verdict.ok and verdict.divergence.seq == i + 1, verdict.summary()
