"""Seeds nobody can choose (docs/rng.md, "The game's seed"): a combined game verifies, its derivation is checked from the
log alone, a player holds the log to the client seed they sent, and an operator who picked the server seed to deal a
favourite a known hand cannot get that deal once a player brings a client seed."""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replays.__main__ import main
from replays.verify import verify
from service.events.envelope import seed_commitment
from service.events.export import dumps
from service.rules import rng
from service.rules.free_parking import cards
from service.sim.games import new_game, play

from .forge import export_of, index_of, public, rechain, with_command, with_public, with_secret

SERVER_SEED = hashlib.sha256(b"the operator's server seed").digest()
ANN_SEED = bytes([0xA1]) * 32  # what seat 0's player sent
CAT_SEED = bytes(range(100, 132))  # what seat 2's player sent; seat 1 sent none


def finished(kind: str = "free-parking", seats: int = 3, seed: bytes = SERVER_SEED, *, seeding: str = "combined",
             client_seeds: dict[int, bytes] | None = None, bots: list[str] | None = None, options: dict | None = None,
             rnd_seed: int = 0):
    bots = bots or ["greedy"] * seats
    sim = new_game(kind, seats, seed, f"seeds-{kind}", bots, options, seeding=seeding, client_seeds=client_seeds)
    for _ in play(sim, bots, random.Random(rnd_seed)):
        pass
    return sim


@pytest.fixture(scope="module")
def combined():
    return finished(client_seeds={0: ANN_SEED, 2: CAT_SEED})


def seat_taken(envelopes, seat):
    return envelopes[index_of(envelopes, "seat_taken", where=lambda e: public(e)["seat"] == seat)]


def test_a_combined_game_verifies_and_says_who_brought_a_client_seed(combined):
    header, envelopes = export_of(combined)
    assert public(envelopes[0])["seeding"] == "combined" and header.seeding == "combined"
    assert [(public(seat_taken(envelopes, i))["client_seed"], public(seat_taken(envelopes, i))["client_seed_from"]) for i in range(3)] == [
        (ANN_SEED.hex(), "player"), (rng.client_seed_for(SERVER_SEED, 1).hex(), "server"), (CAT_SEED.hex(), "player")]
    verdict = verify(header, envelopes, commitment=seed_commitment(SERVER_SEED))
    assert verdict.ok and verdict.redecided, verdict.summary()
    assert verdict.seeding == "combined: seats 0,2 brought client seeds, seat 1 derived (bot)"
    assert verdict.seeding in verdict.summary()
    derived = rng.game_seed(SERVER_SEED, [ANN_SEED, rng.client_seed_for(SERVER_SEED, 1), CAT_SEED])
    assert verdict.game_seed == derived.hex() == combined.game.state.game_seed.hex()


def test_the_deal_is_drawn_from_the_derived_seed_and_the_server_seed_is_what_is_revealed(combined):
    _, envelopes = export_of(combined)
    derived = rng.game_seed(SERVER_SEED, [ANN_SEED, rng.client_seed_for(SERVER_SEED, 1), CAT_SEED])
    dealt = envelopes[index_of(envelopes, "round_dealt")]
    deck = rng.shuffle(derived, "deal:1:playing", [c.id for c in cards.playing_deck(1)])
    assert msgspec.json.decode(dealt.secret)["hands"][1] == [deck[0], deck[3], deck[6], deck[9], deck[12]]  # seat 1 first
    assert dealt.seq == seat_taken(envelopes, 2).seq + 1  # the same decision as the last seat, before anything else
    assert public(envelopes[-1]) == {"type": "seed_revealed", "seed": SERVER_SEED.hex()}


def test_a_player_client_seed_changed_in_the_log_and_resealed_fails_at_the_deal_it_derives(combined):
    """A forger who knows the server seed rewrites seat 2's client seed — in its seat_taken and in the take_seat command
    recorded with it, so that re-deciding that command agrees — and seals the whole chain again: the deal the log holds
    is not the one the new client seed derives, and verification says so at the deal."""
    header, envelopes = export_of(combined)
    i = index_of(envelopes, "seat_taken", where=lambda e: public(e)["seat"] == 2)
    other = bytes([0x55]) * 32
    envelopes = list(envelopes)
    envelopes[i] = with_command(with_public(envelopes[i], client_seed=other.hex()), client_seed=other.hex())
    header, envelopes = rechain(header, envelopes, seed=SERVER_SEED)
    verdict = verify(header, envelopes)
    assert not verdict.ok
    assert verdict.divergence.seq == envelopes[i].seq + 1 and verdict.divergence.what == "secret", verdict.summary()
    assert "re-deciding the command of seq" in verdict.summary()


def test_a_derived_client_seed_changed_in_the_log_and_resealed_fails_at_its_seat(combined):
    header, envelopes = export_of(combined)
    i = index_of(envelopes, "seat_taken", where=lambda e: public(e)["seat"] == 1)
    envelopes = list(envelopes)
    envelopes[i] = with_public(envelopes[i], client_seed="ee" * 32)
    verdict = verify(*rechain(header, envelopes, seed=SERVER_SEED))
    assert not verdict.ok and verdict.divergence.seq == envelopes[i].seq, verdict.summary()
    assert rng.client_seed_for(SERVER_SEED, 1).hex() in verdict.summary() and "ee" * 32 in verdict.summary()


def test_the_seeds_module_recomputes_the_derivation_from_the_log_alone(combined):
    from replays import seeds

    _, envelopes = export_of(combined)
    seeding = seeds.seeding_of(envelopes)
    assert seeding.mode == "combined" and seeding.complete
    game_seed, wrong = seeds.check(seeding, SERVER_SEED)
    assert wrong is None and game_seed == combined.game.state.game_seed
    # a server seed other than the committed one derives other client seeds: seat 1's is then wrong
    _, wrong = seeds.check(seeding, bytes(32))
    assert wrong is not None and wrong.seq == seat_taken(envelopes, 1).seq and "seat 1" in wrong.what


def test_client_seed_claims_hold_the_log_to_what_the_player_sent(combined, tmp_path, capsys):
    header, envelopes = export_of(combined)
    path = tmp_path / "game.ndjson"
    path.write_bytes(dumps(header, envelopes))
    assert main(["verify", str(path), "--client-seed", f"0:{ANN_SEED.hex()}", "--client-seed", f"2:{CAT_SEED.hex().upper()}"]) == 0
    assert "combined: seats 0,2 brought client seeds" in capsys.readouterr().out
    mine = bytes([0xB2]) * 32
    assert main(["verify", str(path), "--client-seed", f"0:{ANN_SEED.hex()}", "--client-seed", f"2:{mine.hex()}"]) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "client seed of seat 2" in out and mine.hex() in out and CAT_SEED.hex() in out
    assert f"seq {seat_taken(envelopes, 2).seq}:" in out
    # a seat whose client seed was derived: the player says they sent one, the log says they sent none
    verdict = verify(header, envelopes, client_seeds={1: mine.hex()})
    assert not verdict.ok and "client seed of seat 1" in verdict.summary() and "the log says you sent none" in verdict.summary()
    with pytest.raises(SystemExit):
        main(["verify", str(path), "--client-seed", "2:not-hex"])


def _favoured(seed: bytes) -> list[str]:
    """Seat 1's opening hand (dealt first, dealer 0) if the deal were drawn from ``seed`` alone."""
    deck = rng.shuffle(seed, "deal:1:playing", [c.id for c in cards.playing_deck(1)])
    return [deck[k] for k in range(0, 15, 3)]


def test_an_operator_who_picks_the_server_seed_cannot_deal_the_favourite_a_chosen_hand(tmp_path):
    """The operator tries server seeds until one would deal seat 1 (their favourite, a bot) three Free Parking cards,
    and commits to it. A player at seat 0 brings a client seed after the commitment: the deal is then drawn from the
    derived seed, not the chosen one; and a log sealed to claim the chosen deal anyway does not verify."""
    chosen = next(s for s in (hashlib.sha256(b"try %d" % i).digest() for i in range(100_000))
                  if sum(c.startswith("FP-") for c in _favoured(s)) >= 3)
    fixed = finished(seed=chosen, seeding="fixed")  # what the chosen seed alone deals: the favourite's hand
    header_f, envelopes_f = export_of(fixed)
    chosen_deal = envelopes_f[index_of(envelopes_f, "round_dealt")]
    assert msgspec.json.decode(chosen_deal.secret)["hands"][1] == _favoured(chosen)
    assert verify(header_f, envelopes_f).seeding == "fixed seed (chosen by the admin): the deal was not drawn fairly"

    honest = finished(seed=chosen, client_seeds={0: ANN_SEED})
    header, envelopes = export_of(honest)
    i = index_of(envelopes, "round_dealt")
    dealt = msgspec.json.decode(envelopes[i].secret)
    assert dealt["hands"][1] != _favoured(chosen) and sum(c.startswith("FP-") for c in dealt["hands"][1]) < 3
    assert verify(header, envelopes).ok

    # the operator's log claiming the chosen deal: the chosen seed's deal put in, every digest and hash sealed again
    forged = list(envelopes[: i + 1])
    forged[i] = with_secret(forged[i], **msgspec.json.decode(chosen_deal.secret))
    header_x, forged = rechain(header, forged, seed=chosen)
    verdict = verify(msgspec.structs.replace(header_x, seed=chosen.hex()), forged)
    assert not verdict.ok and verdict.divergence.seq == i + 1 and verdict.divergence.what == "secret", verdict.summary()


def test_a_solitaire_on_a_seed_the_player_chose_says_fixed_and_deals_what_the_seed_deals():
    from service.rules.solitaire.layout import deal

    seed = hashlib.sha256(b"deal 7").digest()
    sim = finished("solitaire", 1, seed, seeding="fixed", client_seeds={0: ANN_SEED}, options={"seed_chosen": True})
    header, envelopes = export_of(sim)
    assert public(envelopes[1])["client_seed"] == ANN_SEED.hex()  # recorded, as sent, and changes nothing
    assert public(envelopes[2])["layout"] == [list(row) for row in deal(seed)]
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.seeding == "fixed seed (chosen by the player): the deal was not drawn fairly"
    assert verdict.game_seed is None


def test_a_legacy_log_says_the_server_seed_alone_made_the_deal():
    sim = finished(seeding="legacy")
    header, envelopes = export_of(sim)
    assert "seeding" not in public(envelopes[0]) and header.seeding is None
    assert "client_seed" not in public(seat_taken(envelopes, 0))
    assert verify(header, envelopes).seeding.startswith("legacy seeding")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["free-parking", "solitaire", "monopoly"]),
    seats=st.integers(2, 4),
    server=st.binary(min_size=32, max_size=32),
    brought=st.lists(st.one_of(st.none(), st.binary(min_size=32, max_size=32)), min_size=4, max_size=4),
    rnd_seed=st.integers(0, 1000),
)
def test_for_any_client_seeds_replay_reproduces_every_event_and_hash(kind, seats, server, brought, rnd_seed):
    seats = 1 if kind == "solitaire" else seats
    bots = {"free-parking": ["random"], "solitaire": ["greedy"], "monopoly": ["strategic"]}[kind] * seats
    options = {"max_rounds": 15} if kind == "monopoly" else None
    client_seeds = {i: s for i, s in enumerate(brought[:seats]) if s is not None}
    a = finished(kind, seats, server, client_seeds=client_seeds, bots=bots, options=options, rnd_seed=rnd_seed)
    b = finished(kind, seats, server, client_seeds=client_seeds, bots=bots, options=options, rnd_seed=rnd_seed)
    assert a.envelopes == b.envelopes  # every event, secret and hash
    header, envelopes = export_of(a)
    verdict = verify(header, envelopes, client_seeds={i: s.hex() for i, s in client_seeds.items()})
    assert verdict.ok and verdict.redecided, verdict.summary()
    expected = [client_seeds.get(i, rng.client_seed_for(server, i)) for i in range(seats)]
    assert verdict.game_seed == rng.game_seed(server, expected).hex()
