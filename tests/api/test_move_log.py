"""GET /games/{id}/log (docs/log.md): the move log in plain words, players by name as they sat at each event,
redacted for the caller as /events is (no line ever tells a hidden card), with notices for what happened to them."""

from __future__ import annotations

import re

import pytest

from service.rules.engine import Game, audit_lines, log_lines
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import assert_error, drive, seeded_game, trade_places, trade_places_seed, view

STORES = pytest.mark.parametrize("store_kind", ["embedded", "redis"])


async def move_log(api, game_id, token=None, after=0, **headers) -> dict:
    r = await api.get(f"/games/{game_id}/log", params={"after": after}, headers=bearer(token) if token else headers)
    assert r.status_code == 200, r.text
    return r.json()


@STORES
async def test_a_trade_of_places_moves_the_names_and_tells_both_players(api, store_kind):
    """Player 1 draws Trade Places on Player 0; both accept: from the trade on, seat 0 is Player 1 and seat 1 is
    Player 0, and the log says so; each of them gets a notice on the trade's line, a spectator none."""
    game_id, tokens = await seeded_game(api, 2, trade_places_seed())
    await trade_places(api, game_id, tokens)
    page = await move_log(api, game_id, tokens[0])
    lines = [x["line"] for x in page["lines"]]
    assert page["version"] == len(lines) and [x["seq"] for x in page["lines"]] == list(range(1, len(lines) + 1))
    assert "Player 0 takes seat 0" in lines and "Player 1 takes seat 1" in lines
    assert any(re.fullmatch(r"Player 1 draws a Second Chance card: “trade places with another player”", x) for x in lines), lines
    assert "Player 0 accepts Second Chance “trade places” from Player 1" in lines
    assert "Player 1 accepts their own Second Chance “trade places”" in lines
    traded = next(x for x in page["lines"] if "trade places:" in x["line"])
    assert traded["line"] == "Player 1 and Player 0 trade places: Player 1 now sits at seat 0, Player 0 at seat 1"
    assert traded["notice"] == "You traded places with Player 1: you now sit at seat 1"
    later = [x["line"] for x in page["lines"] if x["seq"] > traded["seq"]]
    assert "Player 1 ends the turn" in later  # the drawer's turn ends, though Player 0 sits at that seat now
    assert any(x.startswith("turn 2: Player 0's turn") for x in later), later  # Player 0 plays next, from seat 1
    other = await move_log(api, game_id, tokens[1])
    assert [x["line"] for x in other["lines"]] == lines
    assert next(x for x in other["lines"] if x["seq"] == traded["seq"])["notice"] == "You traded places with Player 0: you now sit at seat 0"
    spectator = await move_log(api, game_id)
    assert [x["line"] for x in spectator["lines"]] == lines and not any("notice" in x for x in spectator["lines"])
    tail = await move_log(api, game_id, tokens[0], after=traded["seq"] - 1)
    assert tail["lines"][0] == traded and tail["version"] == page["version"]
    # the audit log is unchanged: seats, not names
    r = await api.get(f"/games/{game_id}/audit", headers=bearer(tokens[0]))
    assert "the players at seats 1 and 0 trade places" in r.text and "Player 1 and Player 0" not in r.text


@STORES
async def test_no_line_tells_a_hidden_card_to_any_seat(api, store_kind):
    """A game played part way by bots' moves: each seat's log, the spectator's and the admin's are the same words
    (written from public parts only); no line on a draw or the deal names a card; and no answer mentions a card
    that only another seat's hand holds (an id, or its words where no copy of it was ever shown)."""
    game_id, tokens = await seeded_game(api, 3, trade_places_seed())
    game = await drive(api.app, game_id, until=lambda g: g.version >= 60)
    assert game.rules.status_of(game.state) == "playing"
    pages = [await move_log(api, game_id, t) for t in tokens]
    admin = await move_log(api, game_id, **ADMIN_HEADERS)
    spectator = await move_log(api, game_id)
    words = [x["line"] for x in spectator["lines"]]
    assert all([x["line"] for x in p["lines"]] == words for p in (*pages, admin))
    events = (await api.get(f"/games/{game_id}/events", params={"limit": 5000}, headers=ADMIN_HEADERS)).json()["events"]
    for event, line in zip(events, spectator["lines"], strict=True):
        if event["type"] == "cards_drawn":
            assert re.fullmatch(r".+ draws \d+ cards? (to fill the hand|for the swap|by Second Chance)", line["line"]), line
        if event["type"] == "round_dealt":
            assert re.fullmatch(r"round \d+: .+ deals \d+ cards each", line["line"]), line
    for seat, token in enumerate(tokens):
        mine = await view(api, game_id, token)
        text = str(pages[seat])
        for other in range(3):
            if other == seat:
                continue
            hand = game.state.seats[other].hand
            assert not any(card in text for card in hand), (seat, other)
        assert mine["you"]["hand"]  # the seat's own hand is in its view, never in its log
        assert not any(c["id"] in text for c in mine["you"]["hand"])


@STORES
async def test_a_bad_after_is_refused_and_an_unknown_game_is_404(api, store_kind):
    game_id, _ = await seeded_game(api, 2, trade_places_seed())
    assert_error(await api.get(f"/games/{game_id}/log", params={"after": "x"}), 400, "invalid_request")
    assert_error(await api.get("/games/g_nope/log"), 404)
    assert (await move_log(api, game_id, after=10_000))["lines"] == []


def test_the_named_lines_come_from_one_place_and_leave_the_audit_as_it_was():
    """log_lines over a recorded game names the players; audit_lines over the same envelopes still says seats."""
    import hashlib

    from service.events import free_parking as ev
    from service.events.base import Player
    from service.events.common import Create, TakeSeat
    from service.rules.engine import rules_for

    game = Game.new("free-parking", "g_log", rules_for("free-parking").CONFIG(seats=2), hashlib.sha256(b"log").digest())
    envelopes = game.play(Create(), None, 1)
    for name, bot in (("Ann", None), ("Greedy Gus", "greedy")):
        envelopes += game.play(TakeSeat(player=Player(name=name, player_id=f"g_{name}", bot=bot)), None, 1)
    envelopes += game.play(ev.Discard(card=game.state.seats[1].hand[0]), 1, 1)
    named = [words for _, _, words, _ in log_lines(game.rules, envelopes)]
    audit = audit_lines(game.rules, envelopes)
    assert named[2] == "Greedy Gus (greedy bot) takes seat 1" and "seat 1 taken by bot greedy" in audit[2]
    assert named[-1].startswith("Greedy Gus discards ") and " seat 1 discards " in audit[-1]
