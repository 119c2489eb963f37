"""``replays show`` and ``replays diff`` on Monopoly logs: the board (owner, buildings, mortgage of every property),
each player's cash, square, jail and jail cards, the bank's houses and hotels, whose turn and the dice, and every
wait — purchase, auction, shortage, debts, trades — as the table stood after the event asked for."""

from __future__ import annotations

import io
import random

import msgspec
import pytest
from rich.console import Console

from replays.__main__ import main
from replays.render import render
from service.events import monopoly as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.export import dumps
from service.rules.engine import Game, rules_for
from service.rules.monopoly.board import SQUARES
from service.rules.monopoly.state import Auction, Claim, Debt, Shortage, Trade
from service.sim.games import Simulation, play

from .forge import export_of, index_of

KIND = "monopoly"
SEED = bytes(range(32))
BOTS = ["strategic", "random", "strategic", "random"]
replace = msgspec.structs.replace


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


def _played(game_id: str, bots_seed: int) -> Simulation:
    rules = rules_for(KIND)
    sim = Simulation(Game.new(KIND, game_id, rules.CONFIG(seats=4, max_rounds=12), SEED))
    sim.send(Create(), None)
    for i, name in enumerate(BOTS):
        sim.send(TakeSeat(player=Player(name=f"{name}-{i}", bot=name)), None)
    for _ in play(sim, BOTS, random.Random(bots_seed), timeouts=0.05):
        pass
    return sim


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Two games on one seed whose bots choose differently: one to show, both to diff."""
    out = []
    for name, bots_seed in (("mono-a", 1), ("mono-b", 2)):
        header, envelopes = export_of(_played(name, bots_seed))
        path = tmp_path_factory.mktemp("show") / f"{name}.ndjson"
        path.write_bytes(dumps(header, envelopes))
        out.append((path, header, envelopes))
    return out


def folded(header, envelopes, n: int) -> Game:
    config = msgspec.json.decode(header.config, type=rules_for(KIND).CONFIG)
    game = Game.new(KIND, header.game_id, config, bytes(32))
    game.fold(envelopes[:n])
    return game


def run(capsys, *argv: str) -> list[str]:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def cells(lines: list[str], first: str) -> list[str]:
    """The cells of the one table row whose second cell is ``first``."""
    rows = [[c.strip() for c in line.split("│")] for line in lines if "│" in line]
    [row] = [r for r in rows if len(r) > 2 and r[2] == first]
    return row[1:-1] if row[-1] == "" else row[1:]


def test_show_gives_every_players_cash_square_jail_and_worth_and_every_propertys_owner(logs, capsys):
    path, header, envelopes = logs[0]
    n = index_of(envelopes, "property_bought", 3) + 1
    v = rules_for(KIND).view(folded(header, envelopes, n).state, None)
    lines = run(capsys, "show", str(path), "--at", str(n))
    assert lines[1].startswith(f"{n}  ")
    for p in v.seats:
        row = cells(lines, p.name + (f" [{p.bot}]" if p.bot else ""))
        assert row[0].endswith(str(p.seat)) and row[2:] == [
            f"${p.cash}", SQUARES[p.position].name, f"in jail (tries {p.jail_tries})" if p.in_jail else "-",
            " ".join(p.jail_cards) or "-", f"${p.worth}",
        ]  # fmt: skip
    owned = [site for site in v.board if site.owner is not None]
    assert len(owned) >= 4
    for site in owned:
        assert cells(lines, site.name)[3:] == [f"${site.price}", f"seat {site.owner}", "-", "-"]
    assert cells(lines, "Boardwalk")[3:] == ["$400", "bank", "-", "-"] or v.board[39].owner is not None
    assert f"bank: {v.houses} houses · {v.hotels} hotels" in lines
    turn = next(line for line in lines if line.startswith(f"round {v.round} of 12 · seat {v.turn_seat} "))
    assert f"dice {v.dice[0]}+{v.dice[1]}" in turn


def test_show_an_open_auction_and_whom_it_awaits(logs, capsys):
    path, header, envelopes = logs[0]
    n = index_of(envelopes, "bid_placed") + 1
    s = folded(header, envelopes, n).state
    a, p = s.auction, s.pending
    lines = run(capsys, "show", str(path), "--at", str(n))
    lot = SQUARES[a.lot].name if isinstance(a.lot, int) else a.lot
    [auction] = [line for line in lines if line.startswith("auction: ")]
    assert auction.startswith(
        f"auction: {lot} among seats {', '.join(map(str, a.bidders))} · high bid ${a.high_bid} by seat {a.high_seat}"
    )
    assert f"next bid at least ${a.high_bid + 1}" in auction
    assert any(
        line.startswith(
            f"pending: auction, awaiting seat{'s' if len(p.seats) > 1 else ''} {', '.join(map(str, p.seats))} by "
        )
        for line in lines
    )


def test_show_the_end_names_the_winner(logs, capsys):
    path, _, envelopes = logs[0]
    lines = run(capsys, "show", str(path))
    winner = msgspec.json.decode(envelopes[-2].public)["winner"]
    assert f"winner: seat {winner} (max_rounds)" in lines or f"winner: seat {winner} (last_player)" in lines
    assert "pending: nothing" in lines


def test_buildings_mortgages_jail_and_every_kind_of_wait_are_drawn(logs):
    """A table set up by hand: a hotel and houses, a mortgage, a player in jail with a card, and an auction, a
    shortage window, a debt and a trade open at once."""
    _, header, envelopes = logs[0]
    game = folded(header, envelopes, index_of(envelopes, "turn_began") + 1)
    s = game.state
    sites = list(s.sites)
    sites[37], sites[39] = replace(sites[37], owner=2, level=4), replace(sites[39], owner=2, level=5)
    sites[5] = replace(sites[5], owner=1, mortgaged=True)
    seats = list(s.seats)
    seats[3] = replace(seats[3], in_jail=True, jail_tries=2, jail_cards=("CC05",), position=10)
    game.state = replace(
        s,
        sites=tuple(sites),
        seats=tuple(seats),
        houses=28,
        hotels=11,
        auction=Auction(lot="house", bidders=(0, 2), deadline_at=0, passed=(0,), high_bid=40, high_seat=2),
        shortage=Shortage(
            kind="house", claims=(Claim(seat=2, sites=(37,)),), claimants=(0,), answered=(), deadline_at=0
        ),
        debts=(Debt(seat=1, creditor=None, amount=120, reason="tax", deadline_at=0),),
        trades=(Trade(id=44, seat=0, to=3, give=ev.Holdings(cash=100), get=ev.Holdings(squares=(5,)), deadline_at=0),),
    )
    out = io.StringIO()
    Console(file=out, width=200).print(render(game))
    lines = out.getvalue().splitlines()
    assert cells(lines, "Park Place")[4:] == ["seat 2", "4 houses", "-"]
    assert cells(lines, "Boardwalk")[4:] == ["seat 2", "hotel", "-"]
    assert cells(lines, "Reading Railroad")[4:] == ["seat 1", "-", "yes"]
    p3 = cells(lines, f"{s.seats[3].player.name} [{s.seats[3].player.bot}]")
    assert p3[3:6] == ["Jail / Just Visiting", "in jail (tries 2)", "CC05"]
    assert "bank: 28 houses · 11 hotels" in lines
    assert any(
        line.startswith("auction: house among seats 0, 2 · high bid $40 by seat 2 · next bid at least $41 · passed 0")
        for line in lines
    )
    assert any(
        line.startswith("shortage of houses: bank holds 28 · claims seat 2: Park Place · awaiting 0 by ")
        for line in lines
    )
    assert any(line.startswith("debt: seat 1 owes bank $120 (tax) by ") for line in lines)
    assert any(
        line.startswith("trade 44: seat 0 gives $100 to seat 3 for Reading Railroad, answer by ") for line in lines
    )
    assert any(line.startswith("pending: debt, awaiting seat 1 by ") for line in lines)


def test_diff_of_two_monopoly_games_names_where_they_part_and_shows_both_tables(logs, capsys):
    (a, _, _), (b, _, _) = logs
    code = main(["diff", str(a), str(b)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    # two games of different ids: diff says so (one game played two ways is the next test)
    assert lines[-1] == "different games: A is monopoly game mono-a, B is monopoly game mono-b"


def test_diff_of_one_seed_played_two_ways_parts_where_the_bots_chose_differently(logs, tmp_path, capsys):
    (_, header, one), (_, _, _) = logs
    other = _played("mono-a", 7)  # the same game id and seed, other choices
    header_b, two = export_of(other)
    part = next(i for i, (x, y) in enumerate(zip(one, two, strict=False)) if x.hash != y.hash)
    pa, pb = tmp_path / "a.ndjson", tmp_path / "b.ndjson"
    pa.write_bytes(dumps(header, one))
    pb.write_bytes(dumps(header_b, two))
    code = main(["diff", str(pa), str(pb)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert f"the logs part at seq {part + 1}: they agree on seqs 1–{part}" in lines
    assert f"A's table after seq {part + 1}:" in lines and f"B's table after seq {part + 1}:" in lines
    assert sum(line.startswith("monopoly · ") for line in lines) == 2
