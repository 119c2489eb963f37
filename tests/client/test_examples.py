"""The example bots of ``examples/`` choose exactly what the server's own bots choose (issue 33): at every moment of
seeded games at which the greedy bot's player has a move, the example's answer on the player's view (the JSON the API
sends) is the server's bot's choice, asked as the server asks it — a command equal to the one the service would decode
from the example's, or both letting the moment pass. Pure: no service, no HTTP. ``make soak`` plays 200 games a kind
(the equivalence league of docs/bots.md); ``make test`` fewer, that still meet every decision each bot makes, the
rarest Monopoly waits (a building shortage, its auction, a lift right after a trade) on tables made up for them."""

from __future__ import annotations

import re
from collections import Counter

import msgspec
import pytest

from examples.greedy_free_parking import GreedyFreeParking
from examples.greedy_monopoly import GreedyMonopoly
from examples.greedy_solitaire import GreedySolitaire
from free_parking_client import Bot
from free_parking_client.__main__ import load_bot
from free_parking_client.models import view_of
from service.bots import bot, params_of
from service.bots.sight import decide
from service.events import monopoly as ev
from service.events.free_parking import FreeParkingClientCommand
from service.events.monopoly import MonopolyClientCommand
from service.events.solitaire import SolitaireClientCommand
from service.rules.engine import rules_for
from service.rules.monopoly.view import view as monopoly_view
from tests.client.greedy_games import GREEDY, Moment, moments
from tests.client.play import ROOT
from tests.depth import count
from tests.rules.monopoly_table import table

EXAMPLES: dict[str, type[Bot]] = {"free-parking": GreedyFreeParking, "monopoly": GreedyMonopoly,
                                  "solitaire": GreedySolitaire}
COMMANDS = {"free-parking": FreeParkingClientCommand, "monopoly": MonopolyClientCommand,
            "solitaire": SolitaireClientCommand}
GAMES = {kind: count("FREE_PARKING_EXAMPLE_GAMES", quick, 200)
         for kind, quick in (("free-parking", 12), ("monopoly", 5), ("solitaire", 4))}
"""Seeded games a kind: ``make test`` counts that meet every decision of ``DECISIONS`` (some 13 s of CPU in all)."""

DECISIONS = {
    "free-parking": {("card", "choose"), ("position", "choose"), ("target", "choose"), ("respond", "accept"),
                     ("respond", "talk_out"), (None, "officer_jones"), (None, "free_parking"), (None, "run_errand"),
                     (None, "time_expires"), (None, "feed_meter"), (None, "discard"), (None, "draw_second_chance"),
                     (None, "end_turn"), (None, None)},
    "monopoly": {("buy", "buy"), ("buy", "decline"), ("tax", "choose_tax"), ("auction", "bid"), ("auction", "pass_bid"),
                 ("debt", "mortgage"), ("debt", "sell_building"), ("debt", "declare_bankruptcy"),
                 ("trade", "accept_trade"), ("trade", "reject_trade"), (None, "offer_trade"), (None, "build"),
                 (None, "lift_mortgage"), (None, "pay_fine"), (None, "roll"), (None, None), ("trade", "roll"),
                 *((wait, None) for wait in ("buy", "tax", "auction", "debt", "trade"))},
    "solitaire": {(None, "move"), (None, "redeal"), (None, "resign")},
}
"""What the game waits on, and what the server's bot chose there (``None``: it let the moment pass): every decision
the 200 seeded games of ``make soak`` meet, but Monopoly's jail card (``made_up``)."""


def same(kind: str, mine: dict | None, server: msgspec.Struct | None) -> bool:
    """The example's command is the server's bot's, as the service decodes it (or both choose nothing)."""
    if mine is None or server is None:
        return mine is None and server is None
    return msgspec.convert(mine, COMMANDS[kind]) == server


def decision(m: Moment) -> tuple[str | None, str | None]:
    return m.pending, msgspec.to_builtins(m.server)["type"] if m.server is not None else None


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_each_example_chooses_what_the_servers_bot_chooses_at_every_moment_of_seeded_games(kind):
    bots: dict[tuple[int, object], Bot] = {}  # one example a player and game, as the kit makes them
    seen: Counter[tuple[str | None, str | None]] = Counter()
    for m in moments(kind, list(range(GAMES[kind]))):
        mine = bots.setdefault((m.game, m.player), EXAMPLES[kind]()).act(m.view)
        assert same(kind, mine, m.server), f"game {m.game} version {m.view.version}: {mine} but the server's {m.server}"
        seen[decision(m)] += 1
    assert DECISIONS[kind] <= set(seen), DECISIONS[kind] - set(seen)


ORANGE, LIGHT_BLUE = (16, 18, 19), (6, 8, 9)


def made_up() -> list[tuple[str, object, int]]:
    """Monopoly tables set up for the waits seeded games seldom reach: ``(what, table, seat asked)``."""
    shortage = table(3, own={0: LIGHT_BLUE, 1: ORANGE}, houses=2).play(ev.Build(sites=LIGHT_BLUE), 0)
    auction = table(3, own={0: LIGHT_BLUE, 1: ORANGE}, houses=2).play(ev.Build(sites=LIGHT_BLUE), 0)
    auction.play(ev.ClaimBuildings(sites=(16, 18)), 1)
    outbid = table(3, own={0: LIGHT_BLUE, 1: ORANGE}, houses=2).play(ev.Build(sites=LIGHT_BLUE), 0)
    outbid.play(ev.ClaimBuildings(sites=(16, 18)), 1).play(ev.Bid(amount=120), 0)
    lifts = []  # seat 1 is given a mortgaged Boardwalk on its turn: its 10% paid, a lift costs the bare $200, not $220
    for spare in (195, 205, 230):
        t = table(2, own={0: (39,)}, mortgaged=[39], turn=1, cash={1: 30 + 100 + 300 + spare})
        t.play(ev.OfferTrade(to=1, give=ev.Holdings(squares=(39,)), get=ev.Holdings(cash=10)), 0)
        t.play(ev.AcceptTrade(trade=t.state.trades[0].id), 1)
        lifts.append((f"a lift after a trade, {spare} to spare", t, 1))
    jailed = table(2, jailed=[0], jail_cards={0: ("CC05",)})
    return [("a shortage's claim", shortage, 1), ("a building's auction", auction, 0),
            ("a building's auction", auction, 1), ("outbid in a building's auction", outbid, 1), *lifts,
            ("in jail with a card", jailed, 0)]


@pytest.mark.parametrize("t, seat", [pytest.param(t, seat, id=f"{what}, seat {seat}") for what, t, seat in made_up()])
def test_the_monopoly_example_chooses_as_the_server_on_tables_made_up_for_the_rare_waits(t, seat):
    rules = rules_for("monopoly")
    shown = monopoly_view(t.state, seat)
    shown.game_id = "g_made_up"
    mine = GreedyMonopoly().act(view_of(msgspec.json.decode(msgspec.json.encode(shown))))
    server = decide(bot("monopoly", GREEDY["monopoly"], params_of("monopoly", "strategic")), rules, t.state, seat,
                    "g_made_up")
    assert server is not None and same("monopoly", mine, server), (mine, server)


def test_the_made_up_tables_reach_what_they_are_for():
    """Each is the decision it is named for (the test above would pass on a table where both bots only roll)."""
    chosen, strategic = {}, bot("monopoly", "strategic", params_of("monopoly", "strategic"))
    for what, t, seat in made_up():
        server = decide(strategic, rules_for("monopoly"), t.state, seat, "g_made_up")
        chosen.setdefault(what, []).append(msgspec.json.decode(msgspec.json.encode(server)))
    assert chosen["a shortage's claim"] == [{"type": "claim_buildings", "sites": [16]}]
    assert [c["type"] for c in chosen["a building's auction"]] == ["bid", "bid"]
    assert chosen["outbid in a building's auction"] == [{"type": "bid", "amount": 130}]  # a $100 house: up to $200
    assert [c["type"] for c in chosen["a lift after a trade, 195 to spare"]] == ["roll"]
    assert chosen["a lift after a trade, 205 to spare"] == [{"type": "lift_mortgage", "square": 39}]  # short of $220
    assert chosen["in jail with a card"] == [{"type": "use_jail_card"}]


def test_the_readmes_bot_commands_name_the_examples_for_their_kinds():
    """Each ``play`` line of the README's "Bring your own bot" loads its example, for the kind it names."""
    readme = (ROOT / "README.md").read_text()
    lines = re.findall(r"free_parking_client play (\S+) --kind (\S+)", readme)
    assert sorted(kind for _, kind in lines) == sorted(EXAMPLES)
    for spec, kind in lines:
        made = load_bot(str(ROOT / spec))
        assert issubclass(made, Bot) and made.__name__ == EXAMPLES[kind].__name__
