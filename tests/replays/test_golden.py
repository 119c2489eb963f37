"""The golden logs: games recorded under their recipe's rules version that must verify, from the file alone, on
every run.

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

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(DIR.glob("*.ndjson"))
RECIPE_OF = {r.path: r for r in RECIPES}


def _commands(envelopes):
    return [msgspec.json.decode(e.command)["type"] for e in envelopes if e.command != NULL]


def _log(path):
    return load(path.read_bytes())


def test_every_recipe_was_recorded():
    assert {r.path for r in RECIPES} <= set(FILES), "record the missing goldens: python -m replays golden --write"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_golden_log_verifies_with_every_command_re_decided(path):
    header, envelopes = _log(path)
    assert header.seed is not None, "a golden is a finished game: its header carries the seed"
    assert header.rules_version == RECIPE_OF[path].rules_version
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
        "for name in ('service.simulate', 'service.bots', 'replays.golden'):\n"
        "    sys.modules[name] = None  # importing any of them now fails\n"
        "from replays.__main__ import main\n"
        f"sys.exit(main(['verify', '-q', {str(DIR)!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(FILES)} of {len(FILES)} logs verified" in run.stdout


def test_writing_the_goldens_again_rewrites_none(monkeypatch):
    """``python -m replays golden --write`` only adds: an existing golden is never played or written again."""
    from replays import golden

    monkeypatch.setattr(golden, "play", lambda recipe: pytest.fail(f"{recipe.name} would be played again"))
    before = {p: p.read_bytes() for p in FILES}
    assert all(not written for _, written in golden.write())
    assert {p: p.read_bytes() for p in FILES} == before


def test_the_golden_command_verifies_them_all(capsys):
    from replays.__main__ import main

    assert main(["golden"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{len(FILES)} of {len(FILES)} logs verified"
    assert sum(line.startswith("OK golden-") for line in out) == len(FILES)


def test_the_monopoly_golden_covers_auctions_building_mortgages_trades_jail_and_server_timeouts():
    """Its one secret is the deck order; every wait the server closed is re-decided from the file like any command."""
    header, envelopes = _log(DIR / "golden-mono-4-strategic-random.ndjson")
    assert header.rules_version == 1
    wanted = {"auction_closed", "bid_placed", "built", "mortgaged", "trade_offered", "sent_to_jail", "card_drawn"}
    assert wanted <= {e.type for e in envelopes}
    assert "timeout" in _commands(envelopes)
    assert [e.type for e in envelopes if e.secret_digest is not None] == ["game_started"]
    assert msgspec.json.decode(header.config)["max_rounds"] == 35


def test_a_monopoly_golden_of_rules_version_2_ends_in_bankruptcies_after_trades_and_building():
    """Four strategic bots with no round limit, a tenth of the waits left to the server: decided as version 2."""
    header, envelopes = _log(DIR / "golden-mono-4-v2-strategic.ndjson")
    assert header.rules_version == 2 and msgspec.json.decode(header.config).get("max_rounds") is None
    types = [e.type for e in envelopes]
    assert {"trade_accepted", "built", "building_sold", "debt_owed", "jail_roll_failed"} <= set(types)
    assert types.count("went_bankrupt") == 3 and msgspec.json.decode(envelopes[-2].public)["reason"] == "last_player"
    assert "timeout" in _commands(envelopes)
