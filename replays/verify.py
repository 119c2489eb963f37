"""Verify an exported log offline: the chain, the secrets, the seed, and every decision re-made.

1. The header names a game these rules replay; its seed (when the log has it) hashes to its commitment,
   and that commitment is the one you were shown (``commitment``), if you kept it.
2. Each envelope's hash chains to the one before; seqs run 1, 2, 3… without a gap; time never goes back.
   The header's ``version`` and ``head`` name the last envelope, and its commitment and config are the
   ones ``game_created`` records.
3. Each recorded secret matches its digest.
4. From ``initial(config, seed)``, every recorded command is decided again and must yield exactly the
   recorded events — public bytes equal, secret bytes (or, in a redacted log, the secret's digest) equal.
   The seed is the header's, or else the one ``seed_revealed`` published in the log itself.
5. The seeding (``replays/seeds.py``): in a ``combined`` game every derived client seed and the game seed are
   recomputed from the server seed and must be what the re-decided game drew from; each ``client_seeds`` claim (a
   seat's ``--client-seed``) must be what the seat's ``seat_taken`` records. The verdict says how the seed was made.

The first divergence is reported by seq (0 is the header), with what was expected and what was found.
A prefix of a game that ends between two commands, with a header naming its last event, is a valid
shorter log: it verifies, with a note that the game goes on past it.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

import msgspec

from service.events.envelope import (
    GENESIS,
    NULL,
    Envelope,
    body_of,
    canonical,
    chain_hash,
    has_secret,
    secret_digest,
    seed_commitment,
)
from service.events.export import ExportHeader
from service.events.receipt import Receipt
from service.rules.engine import Game, rules_for
from service.rules.rng import RNG_ID

from . import bots, seeds, signatures
from .receipts import Keys, signature_ok
from .redecide import decide_again, redecide
from .receipts import check as check_receipts
from .verdict import Divergence, Rejected, Verdict, contested_part, fail, receipts_part

__all__ = ["Divergence", "Verdict", "receipts_part", "verify"]


def verify(
    header: ExportHeader,
    envelopes: list[Envelope],
    *,
    commitment: str | None = None,
    client_seeds: dict[int, str] | None = None,
    progress: Callable[[int], None] | None = None,
    receipts: list[Receipt] | None = None,
    keys: Keys | None = None,
    player_keys: dict[int, str] | None = None,
) -> Verdict:
    """Check the log; ``commitment`` is the seed commitment a player was shown at the start, if they kept it, and
    ``client_seeds`` the client seed each of those seats says it sent (seat → 64 hex digits). ``receipts`` (and the
    ``keys`` that signed them) are what players were shown: the log must agree with each (replays/receipts.py), and
    the export's own receipt too, when it has one. ``player_keys``: the public key each of those seats says it joined
    with (seat → 64 hex digits): the log's ``seat_taken`` must record exactly that one (replays/signatures.py)."""
    verdict = _verify_log(header, envelopes, commitment, progress, client_seeds)
    if verdict.ok:
        _check_signatures(envelopes, verdict, player_keys)
    if verdict.ok and verdict.redecided:
        _check_bots(header, envelopes, verdict)
    if verdict.ok and (receipts is not None or keys is not None or header.receipt is not None):
        _check_receipts(header, envelopes, receipts, keys, verdict)
    return verdict


def _check_signatures(envelopes: list[Envelope], verdict: Verdict, claims: dict[int, str] | None = None) -> None:
    """Every command in a keyed player's name against their key (replays/signatures.py)."""
    try:
        verdict.signed = signatures.check(envelopes, claims).words()
    except Rejected as r:
        verdict.ok, verdict.divergence = False, r.divergence


def _check_bots(header: ExportHeader, envelopes: list[Envelope], verdict: Verdict) -> None:
    """Every server bot's move re-derived from its own seat's world (replays/bots.py), on a log re-decided already."""
    rules = rules_for(header.kind)
    config = msgspec.json.decode(header.config, type=rules.CONFIG)
    game = Game.new(header.kind, header.game_id, config, _server_seed(header, envelopes), header.rules_version)
    try:
        verdict.bots = bots.check(game, envelopes).words()
    except Rejected as r:
        verdict.ok, verdict.divergence = False, r.divergence


def receipts_verdict(header: ExportHeader, envelopes: list[Envelope], given: list[Receipt] | None,
                     keys: Keys | None) -> Verdict:
    """The log judged on the receipts alone — the one decision a single log and a bundle's table both take (the chain
    and the commands are checked apart): OK, REJECTED or CONTESTED, with the report."""
    head = envelopes[-1].hash if envelopes else GENESIS
    verdict = Verdict(game_id=header.game_id, events=len(envelopes), head=head)
    _check_receipts(header, envelopes, given, keys, verdict)
    return verdict


def _check_receipts(header: ExportHeader, envelopes: list[Envelope], given: list[Receipt] | None, keys: Keys | None,
                    verdict: Verdict) -> None:
    """The players' receipts (``given``) and the export's own against the log. The export's own is checked even with
    no key (a file whose header receipt names another head than its log contradicts itself); the players' must hold
    at least one receipt of this game that counts, or they are no check of it at all."""
    own = [header.receipt] if header.receipt is not None else []
    report = check_receipts(header.game_id, envelopes, [*(given or []), *own], keys)
    verdict.receipts = report
    mine = [r for r in given or [] if r.game_id == header.game_id]
    # a receipt signed after its key's not_after is still the key's own signature: it counts, and contests if it disagrees
    counted = [r for r in mine if keys is None or signature_ok(r, keys, in_window=False)]
    if given is not None and not mine:
        detail = f"{len(given)} receipts, none of game {header.game_id}"
        verdict.ok, verdict.divergence = False, Divergence(0, "receipts", f"receipts of game {header.game_id}", detail)
    elif given is not None and not counted:
        detail = f"{len(mine)} receipts of game {header.game_id}, none signed by a key given"
        verdict.ok, verdict.divergence = False, Divergence(0, "receipts", "a receipt signed by the service", detail)
    elif (d := report.disagreement) is not None:
        says = (f"the receipt of version {d.version}, signed by the service, says", "the log has")
        if keys is None:
            says = (f"the receipt of version {d.version} (its signature not checked) says", "the log has")
        divergence = Divergence(d.version, f"receipt: {d.what}", d.receipt, d.log, says, detail=report.back_dated)
        verdict.ok, verdict.divergence = False, divergence
    elif report.contested:  # the service's own signature against the log: never set aside in silence
        verdict.ok, verdict.contested = False, contested_part(report)


def _verify_log(
    header: ExportHeader,
    envelopes: list[Envelope],
    commitment: str | None,
    progress: Callable[[int], None] | None,
    client_seeds: dict[int, str] | None,
) -> Verdict:
    fast = _verify_exact(header, envelopes, commitment, progress)
    if fast is not None:
        return _with_seeding(header, envelopes, fast, client_seeds)
    verdict = Verdict(game_id=header.game_id, events=len(envelopes), head=envelopes[-1].hash if envelopes else GENESIS)
    try:
        seed = _check_header(header, commitment)
        _check_chain_first(header, envelopes, seed, verdict)
        if seed is None:
            seed = _revealed_seed(header, envelopes, verdict)
        if seed is None:
            verdict.notes.append("the seed is not in this log; it is revealed when the game ends")
        else:
            game = redecide(header, envelopes, seed, progress)
            verdict.redecided = True
            verdict.game_seed = _drawn_from(game)
            # Re-deciding reproduced every withheld secret and matched it to its digest.
            verdict.secrets_checked += len(verdict.secrets_unchecked)
            verdict.secrets_unchecked = []
            if game.rules.status_of(game.state) != "finished":
                verdict.notes.append(f"the game goes on after version {game.version}: this log is a prefix of it")
    except Rejected as r:
        verdict.ok, verdict.divergence = False, r.divergence
    return _with_seeding(header, envelopes, verdict, client_seeds) if verdict.ok else verdict


def _drawn_from(game: Game) -> str | None:
    state = game.state
    return state.game_seed.hex() if getattr(state, "game_seed", None) is not None else None


def _with_seeding(header: ExportHeader, envelopes: list[Envelope], verdict: Verdict, claims: dict[int, str] | None) -> Verdict:
    """The seeding checks (``replays/seeds.py``) on a log that verified otherwise, and the verdict's word on it."""
    seeding = seeds.seeding_of(envelopes)
    if seeding is None:
        return verdict
    verdict.seeding = seeds.describe(seeding)
    try:
        created = msgspec.json.decode(envelopes[0].public)
        _mismatch(seeds.check_legacy(seeding, key_id=isinstance(created, dict) and created.get("key_id") is not None))
        if claims:
            _mismatch(seeds.check_claims(seeding, claims))
        if verdict.redecided and seeding.mode == "combined" and seeding.complete:
            server_seed = _server_seed(header, envelopes)
            game_seed, wrong = seeds.check(seeding, server_seed)
            _mismatch(wrong)
            assert game_seed is not None
            if verdict.game_seed != game_seed.hex():
                fail(seeding.last_seq, "game seed (the deal was not drawn from the seed the client seeds derive)",
                      f"{game_seed.hex()} (HMAC-SHA256 of the server seed over every seat's client seed)",
                      f"a game drawn from {verdict.game_seed}")
    except Rejected as r:
        verdict.ok, verdict.divergence = False, r.divergence
    return verdict


def _mismatch(m: seeds.Mismatch | None) -> None:
    if m is not None:
        fail(m.seq, m.what, m.expected, m.found, m.says)


def _server_seed(header: ExportHeader, envelopes: list[Envelope]) -> bytes:
    """The server seed of a log that verified: the header's, else the one ``seed_revealed`` published."""
    if header.seed is not None:
        return bytes.fromhex(header.seed)
    revealed = next(env for env in reversed(envelopes) if env.type == "seed_revealed")
    return bytes.fromhex(msgspec.json.decode(revealed.public)["seed"])


def _verify_exact(
    header: ExportHeader, envelopes: list[Envelope], commitment: str | None, progress: Callable[[int], None] | None
) -> Verdict | None:
    """The verdict on a log whose every envelope is exactly the one re-deciding its commands produces — the usual
    case — in one pass; ``None`` at the first doubt, and then the full checks run and name the divergence.

    Re-deciding seals each event again: the same body (game id, seq, type, public part, time, previous hash, command,
    actor, command id, secret digest), hash and secret as the recorded envelope means the recorded hash is the one its
    body chains to, seqs run on, time never goes back, and each secret matches its digest. What the full path checks
    envelope by envelope is then implied, so it is not done twice.
    """
    if not envelopes:
        return None
    verdict = Verdict(game_id=header.game_id, events=len(envelopes), head=envelopes[-1].hash)
    try:
        seed = _check_header(header, commitment)
        _check_created(header, envelopes[0])
        _check_end(header, envelopes)
        if seed is None:
            seed = _revealed_seed(header, envelopes, verdict)
        if seed is None:
            return None
        rules = rules_for(header.kind)
        game = Game.new(header.kind, header.game_id, msgspec.json.decode(header.config, type=rules.CONFIG), seed, header.rules_version)
        i = 0
        while i < len(envelopes):
            produced, state = decide_again(game, envelopes[i])
            if i + len(produced) > len(envelopes):
                return None
            for want in produced:
                got = envelopes[i]
                if want != got and not (got.secret == NULL and msgspec.structs.replace(want, secret=NULL) == got):
                    return None
                i += 1
            game.commit(produced, state)
            if progress is not None:
                progress(i)
    except (Rejected, msgspec.ValidationError):
        return None
    verdict.redecided = True
    verdict.game_seed = _drawn_from(game)
    verdict.secrets_checked = sum(env.secret_digest is not None for env in envelopes)
    if game.rules.status_of(game.state) != "finished":
        verdict.notes.append(f"the game goes on after version {game.version}: this log is a prefix of it")
    return verdict


def _check_header(header: ExportHeader, commitment: str | None) -> bytes | None:
    """What the header alone can show; the seed, if the header has it."""
    try:
        rules = rules_for(header.kind)
    except ValueError as e:
        fail(0, "game kind", "a known game kind", str(e))
    if header.rules_version not in rules.RULES_VERSIONS:
        known = ", ".join(map(str, rules.RULES_VERSIONS))
        fail(0, "rules version", f"one of {known} (the versions these rules replay)", header.rules_version)
    if header.rng != RNG_ID:
        fail(0, "rng", RNG_ID, header.rng)
    if commitment is not None and commitment.strip().lower() != header.seed_commitment:
        fail(0, "seed commitment", f"{commitment} (the one you were shown)", header.seed_commitment)
    if header.seed is None:
        return None
    return _seed(0, header.seed, header.seed_commitment, "seed")


def _seed(seq: int, text: str, commitment: str, what: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        fail(seq, what, "hex digits", text)
    if seed_commitment(seed) != commitment:
        expected = f"a seed whose sha256 is the commitment {commitment}"
        fail(seq, what, expected, f"{text}, whose sha256 is {seed_commitment(seed)}")
    return seed


def _check_chain_first(header: ExportHeader, envelopes: list[Envelope], seed: bytes | None, verdict: Verdict) -> None:
    """The chain; where it breaks at seq *k* and the seed is known, the commands up to *k* are re-decided too,
    so that a forged event sealed onto the chain (caught by the chain only at the next seq) is named itself,
    and a break at *k* says what re-deciding *k* gives against what the log has there."""
    try:
        _check_chain(header, envelopes, seed, verdict)
    except Rejected as broken:
        seq = broken.divergence.seq
        if seed is not None and seq >= 1:
            try:
                redecide(header, envelopes[: min(seq, len(envelopes))], seed, None)
            except Rejected as earlier:
                if earlier.divergence.seq < seq:
                    raise earlier from None
                if earlier.divergence.seq == seq and not earlier.divergence.what.startswith("hash"):
                    d = earlier.divergence
                    detail = f"{d.what}: {d.says[0]} {d.expected}, {d.says[1]} {d.found}"
                    raise Rejected(msgspec.structs.replace(broken.divergence, detail=detail)) from None
        raise


def _check_chain(header: ExportHeader, envelopes: list[Envelope], seed: bytes | None, verdict: Verdict) -> None:
    prev, last_at = GENESIS, 0
    for i, env in enumerate(envelopes):
        seq = i + 1
        if env.seq != seq:
            fail(seq, "seq", seq, env.seq)
        if env.game_id != header.game_id:
            fail(seq, "game id", header.game_id, env.game_id)
        if env.prev_hash != prev:
            fail(seq, "prev_hash (the previous event is not the one this one was chained to)", prev, env.prev_hash)
        if env.at < last_at:
            fail(seq, "time (it went back)", f"at ≥ {last_at}", env.at)
        actual = chain_hash(prev, canonical(body_of(env)))
        if env.hash != actual:
            fail(seq, "hash (the envelope was altered after it was sealed)", actual, env.hash)
        if seq == 1:
            _check_created(header, env)
        _check_secret(env, seed, verdict)
        prev, last_at = env.hash, env.at
    _check_end(header, envelopes)


def _check_end(header: ExportHeader, envelopes: list[Envelope]) -> None:
    """The header's ``version`` and ``head`` must name the log's last envelope."""
    n, v = len(envelopes), header.version
    head = envelopes[-1].hash if envelopes else GENESIS
    if v > n:
        fail(
            n + 1,
            "event (the log ends early)",
            f"{v} events ending at head {header.head[:12]} (as the header says)",
            f"the log ends after {n} events, at head {head[:12]}",
        )
    if v < n:
        expected = f"the log to end at version {v} (as the header says)"
        fail(max(v + 1, 0), "event (beyond the header's version)", expected, f"{n} events")
    if header.head != head:
        fail(n, "head named in the header", header.head, head)


def _check_created(header: ExportHeader, first: Envelope) -> None:
    """``game_created`` is what the players were shown at the start; the header must agree with it."""
    created = msgspec.json.decode(first.public)
    if not isinstance(created, dict) or first.type != "game_created":
        fail(1, "event", "game_created", f"{first.type} {bytes(first.public).decode()}")
    recorded = created.get("seed_commitment")
    if recorded != header.seed_commitment:
        fail(0, "seed commitment in the header", f"{recorded} (as game_created records it)", header.seed_commitment)
    seeding = created.get("seeding", "legacy")
    if header.seeding is not None and header.seeding != seeding:
        fail(0, "seeding in the header", f"{seeding} (as game_created records it)", header.seeding)
    config = created.get("config")
    if config != msgspec.json.decode(header.config):
        expected = f"{canonical(config).decode()} (as game_created records it)"
        fail(0, "config in the header", expected, bytes(header.config))


def _revealed_seed(header: ExportHeader, envelopes: list[Envelope], verdict: Verdict) -> bytes | None:
    """A finished game published its seed in ``seed_revealed``: with it, anyone can re-decide the game."""
    for env in reversed(envelopes):
        if env.type == "seed_revealed":
            revealed = msgspec.json.decode(env.public)
            text = revealed.get("seed") if isinstance(revealed, dict) else None
            seed = _seed(env.seq, str(text), header.seed_commitment, "seed revealed")
            verdict.notes.append(f"seed taken from seed_revealed at seq {env.seq}")
            return seed  # re-deciding checks every secret, present or withheld, against it
    return None


def _check_secret(env: Envelope, seed: bytes | None, verdict: Verdict) -> None:
    if env.secret_digest is None:
        if has_secret(env):
            fail(env.seq, "secret", "no secret (the event has no digest)", bytes(env.secret))
        return
    if not has_secret(env) or seed is None:
        verdict.secrets_unchecked.append(env.seq)
        return
    actual = secret_digest(seed, env.seq, bytes(env.secret))
    if not hmac.compare_digest(actual, env.secret_digest):
        fail(
            env.seq,
            "secret (does not match its digest)",
            f"a secret whose digest is {env.secret_digest[:16]}…",
            f"{bytes(env.secret).decode()}, whose digest is {actual[:16]}…",
        )
    verdict.secrets_checked += 1
