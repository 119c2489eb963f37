"""The golden logs: games recorded under each rules version that must verify, from the file alone, on every run.

If one stops verifying, the rules changed what an old game did: bump the game's ``RULES_VERSION`` and
keep the old behaviour replayable — never re-record the golden to make it pass (``replays/golden/README.md``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from replays.golden import DIR, RECIPES
from replays.verify import verify
from service.events.envelope import NULL
from service.events.export import load
from service.rules.engine import Game, command_of
from service.rules.errors import RuleViolation
from service.rules.solitaire import CONFIG as SOLITAIRE_CONFIG

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(DIR.glob("*.ndjson"))
VERSIONS = {r.path: r.rules_version for r in RECIPES}


def _commands(envelopes):
    return [msgspec.json.decode(e.command)["type"] for e in envelopes if e.command != NULL]


def _log(path):
    return load(path.read_bytes())


def test_every_recipe_was_recorded():
    assert {r.path for r in RECIPES} <= set(FILES), "record the missing goldens: python -m service golden --write"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_golden_log_verifies_with_every_command_re_decided(path):
    header, envelopes = _log(path)
    assert header.seed is not None, "a golden is a finished game: its header carries the seed"
    assert header.rules_version == VERSIONS.get(path, 1)  # a golden with no recipe left was recorded under version 1
    verdict = verify(header, envelopes)
    assert verdict.ok, verdict.summary()
    assert verdict.redecided and verdict.secrets_unchecked == [], verdict.summary()
    assert verdict.secrets_checked == sum(e.secret_digest is not None for e in envelopes)
    assert verdict.secrets_checked > 0 or header.kind == "solitaire"  # a solitaire's board is face up: no secrets
    assert verdict.notes == [], "a golden ends with the game: " + verdict.summary()
    ends = {"free-parking": ["game_won"], "solitaire": ["game_won", "game_lost"], "monopoly": ["game_ended"]}
    assert envelopes[-2].type in ends[header.kind] and envelopes[-1].type == "seed_revealed"


def test_the_goldens_cover_several_tables_both_bots_and_server_timeouts():
    seats, bots, timeouts = set(), set(), 0
    for path in FILES:
        header, envelopes = _log(path)
        if header.kind != "free-parking":
            continue
        seats.add(msgspec.json.decode(header.config)["seats"])
        bots |= {msgspec.json.decode(e.public)["player"]["bot"] for e in envelopes if e.type == "seat_taken"}
        timeouts += _commands(envelopes).count("timeout")
    assert {2, 4, 5, 8} <= seats
    assert {"greedy", "random"} <= bots
    assert timeouts > 0


def test_the_goldens_cover_every_game_kind():
    from service.rules.engine import GAMES

    assert {_log(path)[0].kind for path in FILES} == set(GAMES)


def test_a_golden_verifies_from_the_file_alone():
    """Nothing that played the games — bots, simulation, the golden recipes — is needed to check them."""
    script = (
        "import sys\n"
        "for name in ('service.sim.games', 'service.bots', 'replays.golden'):\n"
        "    sys.modules[name] = None  # importing any of them now fails\n"
        "from replays.__main__ import main\n"
        f"sys.exit(main(['verify', '-q', {str(DIR)!r}]))\n"
    )
    command = [sys.executable, "-c", script]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(FILES)} of {len(FILES)} logs verified" in run.stdout


def test_writing_the_goldens_again_rewrites_none(monkeypatch):
    """``python -m service golden --write`` only adds: an existing golden is never played or written again."""
    from replays import golden

    before = {p: p.read_bytes() for p in FILES}
    assert all(not written for _, written in golden.write(lambda recipe: pytest.fail(f"{recipe.name} would be played")))
    assert {p: p.read_bytes() for p in FILES} == before


def test_the_golden_command_verifies_them_all(capsys):
    from replays.__main__ import main

    assert main(["golden"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{len(FILES)} of {len(FILES)} logs verified"
    assert sum(line.startswith("OK golden-") for line in out) == len(FILES)


def test_every_free_parking_rules_version_has_a_golden():
    from service.rules.free_parking import RULES_VERSIONS

    recorded = {_log(p)[0].rules_version for p in FILES if _log(p)[0].kind == "free-parking"}
    assert recorded == set(RULES_VERSIONS)


def test_the_version_2_golden_asks_the_drawer_and_swaps_without_handing_the_three_back():
    """Rules version 2: a trade's drawer is asked after the named player (and answers, talks out, or is answered for
    by the server), a named player talks out of one, and a swap three draws — through a reshuffle — before its three
    reach the discard pile, so none of them comes back."""
    [path] = [p for p in FILES if VERSIONS.get(p) == 2 and _log(p)[0].kind == "free-parking" and _log(p)[0].seeding is None]
    _, envelopes = _log(path)
    public = [msgspec.json.decode(e.public) for e in envelopes]
    drawer, named = set(), set()  # how each of the two answers of a trade was given: (event, by the server?)
    for i, p in enumerate(public):
        if envelopes[i].type == "response_awaited" and p["action"] == "trade_places":
            answer = (envelopes[i + 1].type, envelopes[i + 1].actor == "server")
            (drawer if p["seat"] == p["by"] else named).add(answer)
            if p["seat"] == p["by"]:  # the named player answered first
                assert envelopes[i - 1].type == "accepted" and public[i - 1]["seat"] != p["seat"]
    assert {("accepted", False), ("accepted", True), ("talked_out", False)} <= drawer
    assert ("talked_out", False) in named
    swaps = [i for i, e in enumerate(envelopes) if e.type == "three_swapped"]
    assert swaps and all(envelopes[i - 1].type == "cards_drawn" for i in swaps)
    assert any(envelopes[i - 2].type == "deck_reshuffled" for i in swaps)
    for i in swaps:
        drawn = msgspec.json.decode(envelopes[i - 1].secret)["cards"]
        assert not set(drawn) & set(public[i]["cards"])


def test_the_monopoly_golden_covers_auctions_building_mortgages_trades_jail_and_server_timeouts():
    """Its one secret is the deck order; every wait the server closed is re-decided from the file like any command."""
    header, envelopes = _log(DIR / "golden-mono-4-strategic-random.ndjson")
    assert header.rules_version == 1
    wanted = {"auction_closed", "bid_placed", "built", "mortgaged", "trade_offered", "sent_to_jail", "card_drawn"}
    assert wanted <= {e.type for e in envelopes}
    assert "timeout" in _commands(envelopes)
    assert [e.type for e in envelopes if e.secret_digest is not None] == ["game_started"]
    assert msgspec.json.decode(header.config)["max_rounds"] == 35


def test_every_kind_has_a_version_1_golden_and_the_solitaire_one_of_each_version():
    from service.rules.engine import GAMES

    versions = {(_log(p)[0].kind, _log(p)[0].rules_version) for p in FILES}
    assert {(kind, 1) for kind in GAMES} <= versions
    assert {("solitaire", v) for v in GAMES["solitaire"].RULES_VERSIONS} <= versions


def test_the_version_2_solitaire_golden_is_stuck_before_it_is_resigned_where_version_1_lost_it():
    """The golden pins the change of version 2: the move that left nothing to do leaves the game going (stuck: only
    undo and resign), and the bot resigns it. Its commands decided under version 1 end the game at that move."""
    [path] = [p for p in FILES if VERSIONS.get(p) == 2 and _log(p)[0].kind == "solitaire"]
    header, envelopes = _log(path)
    assert _commands(envelopes)[-1] == "resign"
    config = msgspec.json.decode(header.config, type=SOLITAIRE_CONFIG)
    game = Game.new("solitaire", header.game_id, config, bytes.fromhex(header.seed))
    resignation = max(i for i, e in enumerate(envelopes) if e.command != NULL)
    game.fold(envelopes[:resignation])
    assert game.state.rules_version == 2 and game.state.stuck
    assert [type(c).__name__ for c in game.rules.legal_commands(game.state, 0)] == ["Undo", "Resign"]
    old = Game.new("solitaire", header.game_id, config, bytes.fromhex(header.seed), rules_version=1)
    for env in envelopes:
        if env.command == NULL:
            continue
        command, seat = command_of(old, env)
        if old.state.phase == "lost":  # the batch before the resignation already lost it under version 1
            assert type(command).__name__ == "Resign" and old.state.lost_reason == "no_moves"
            with pytest.raises(RuleViolation, match="over"):
                old.play(command, seat, env.at)
            return
        old.play(command, seat, env.at)
    pytest.fail("version 1 decided the game as version 2 did")


def test_a_header_claiming_version_1_for_the_version_2_solitaire_is_refused():
    """The solitaire plays two versions: the version comes from the log's game_created, so a header naming the other
    one (to have the game re-decided under the old rules) does not verify."""
    [path] = [p for p in FILES if VERSIONS.get(p) == 2 and _log(p)[0].kind == "solitaire"]
    header, envelopes = _log(path)
    assert not verify(msgspec.structs.replace(header, rules_version=1), envelopes).ok


def test_a_monopoly_golden_of_rules_version_2_ends_in_bankruptcies_after_trades_and_building():
    """Four strategic bots with no round limit, a tenth of the waits left to the server: decided as version 2."""
    header, envelopes = _log(DIR / "golden-mono-4-v2-strategic.ndjson")
    assert header.rules_version == 2 and msgspec.json.decode(header.config).get("max_rounds") is None
    types = [e.type for e in envelopes]
    assert {"trade_accepted", "built", "building_sold", "debt_owed", "jail_roll_failed"} <= set(types)
    assert types.count("went_bankrupt") == 3 and msgspec.json.decode(envelopes[-2].public)["reason"] == "last_player"
    assert "timeout" in _commands(envelopes)


def test_the_combined_golden_draws_its_deal_from_the_seed_its_client_seeds_derive():
    """Client seeds (docs/rng.md): recorded in seat_taken, the game seed derived from them and the revealed server seed,
    and the deal drawn from it: pinned byte for byte, so a change of the derivation cannot pass unnoticed."""
    from replays.verify import verify
    from service.rules import rng
    from service.rules.free_parking import cards

    header, envelopes = _log(DIR / "golden-fp-v2-3-combined-seeds.ndjson")
    assert header.seeding == "combined"
    server = bytes.fromhex(header.seed)
    taken = [msgspec.json.decode(e.public) for e in envelopes if e.type == "seat_taken"]
    assert [t["client_seed_from"] for t in taken] == ["player", "server", "player"]
    assert taken[1]["client_seed"] == rng.client_seed_for(server, 1).hex()
    game_seed = rng.game_seed(server, [bytes.fromhex(t["client_seed"]) for t in taken])
    dealt = next(e for e in envelopes if e.type == "round_dealt")
    deck = rng.shuffle(game_seed, "deal:1:playing", [c.id for c in cards.playing_deck(1)])
    assert msgspec.json.decode(dealt.secret)["hands"][1] == deck[0:15:3]
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.game_seed == game_seed.hex()
    assert verdict.seeding == "combined: seats 0,2 brought client seeds, seat 1 derived (bot)"


def test_the_replays_bot_version_is_the_services():
    from replays import bots
    from service.bots import sight

    assert bots.SIGHTED == sight.SIGHTED


def test_the_version_3_golden_stops_the_turn_clock_for_waits_on_other_seats_and_restarts_it_with_the_time_left():
    """Rules version 3 (issue 31): each ``turn_clock_stopped`` records what the turn had left at that moment, and the
    ``turn_clock_restarted`` that ends it gives exactly that back, from the moment the wait ended — after a seat's
    own answer and after the server's alike."""
    [path] = [p for p in FILES if VERSIONS.get(p) == 3 and _log(p)[0].kind == "free-parking"]
    _, envelopes = _log(path)
    deadline, left, restarted_by = None, None, set()
    for env in envelopes:
        p = msgspec.json.decode(env.public)
        if env.type in ("turn_began",):
            deadline, left = p["deadline_at"], None
        elif env.type == "turn_clock_stopped":
            assert p["left_ms"] == max(0, deadline - env.at)
            deadline, left = None, p["left_ms"]
        elif env.type == "turn_clock_restarted":
            assert left is not None and p["deadline_at"] == env.at + left
            deadline, left = p["deadline_at"], None
            restarted_by.add(env.actor == "server")
    assert restarted_by == {True, False}
