"""Views of seeded bot games, for the page's label tests: every seat's view, at every version of a game, that holds two
commands or more — the views whose buttons could read alike. Played in memory with the rules and the sim's bots, the
views cut down to what the tables' button labels read, and each distinct one kept once (a game repeats many)."""

from __future__ import annotations

import hashlib
import json
import random

import msgspec

from service.sim.games import new_game, play

FP_PLAYER = ("seat", "name", "meter", "point_cards")
MONO_SEAT = ("seat", "name", "bot", "cash", "in_jail", "bankrupt")


def _cut(view: dict) -> dict:
    """The parts of a view a table's button labels read (free-parking.js and monopoly-words.js `label`)."""
    out = {"kind": view["kind"], "seat": view["seat"], "legal": view["legal"], "status": view["status"]}
    if view["kind"] == "free-parking":
        out["players"] = [{k: p[k] for k in FP_PLAYER} for p in view["players"]]
        out["you"] = {"hand": view["you"]["hand"]} if view.get("you") else None
        out["pending"] = {"seat": view["pending"]["seat"]} if view.get("pending") else None
    else:
        out["seats"] = [{k: p[k] for k in MONO_SEAT} for p in view["seats"]]
        out["board"] = [[sq["owner"], sq["level"]] for sq in view["board"]]  # the names and prices: BOARD, once
        for key in ("offer", "trades", "auction", "shortage", "debts"):
            out[key] = view.get(key)
    return out


def _game(kind: str, i: int) -> tuple[int, list[str], dict | None]:
    """Game ``i``'s seats, bots and options: a mix of table sizes and of bots that play well and that play anything.
    Monopoly stops at 12 rounds: 25 made 66,000 distinct views (85 MB handed to the page, a minute to make) where 12
    still meet hundreds of trade offers, auctions and debts."""
    rnd = random.Random(f"{kind}:{i}")
    if kind == "free-parking":
        seats = rnd.randint(2, 6)
        return seats, [rnd.choice(["greedy", "random", "random"]) for _ in range(seats)], None
    seats = rnd.randint(2, 4)
    return seats, [rnd.choice(["strategic", "random"]) for _ in range(seats)], {"max_rounds": 12}


def seeded_views(kind: str, games: int) -> list[dict]:
    """The distinct cut views of ``games`` seeded games of ``kind`` with two legal commands or more."""
    seen: dict[bytes, dict] = {}
    asked: set[bytes] = set()
    for i in range(games):
        seats, bots, options = _game(kind, i)
        sim = new_game(kind, seats, hashlib.sha256(b"labels:%s:%d" % (kind.encode(), i)).digest(), f"g_labels{i}", bots,
                       options=options)
        rules = sim.game.rules
        for _ in play(sim, bots, random.Random(i)):
            for seat in range(seats):
                legal = rules.legal_commands(sim.game.state, seat)
                # what a label reads besides the commands changes less often than the version: ask the view only for
                # a new set of commands in a new setting (the pending wait, the offer, the trades, the seat's jail),
                # in any game (a seat's bot, whose name the labels read, is the only other difference between games)
                s = sim.game.state
                key = msgspec.json.encode([seat, bots[seat], legal, getattr(s, "pending", None), getattr(s, "offer", None),
                                           getattr(s, "trades", None), getattr(s.seats[seat], "in_jail", None)])
                if len(legal) < 2 or key in asked:
                    continue
                asked.add(key)
                cut = _cut(msgspec.to_builtins(sim.game.view(seat)))
                seen.setdefault(json.dumps(cut, sort_keys=True).encode(), cut)
    return list(seen.values())


def board() -> list[dict]:
    """Monopoly's squares as a view names them: what a cut view's ``board`` (owner and level) is read with."""
    sim = new_game("monopoly", 2, bytes(32), "g_board", ["random", "random"])
    return [{k: sq[k] for k in ("square", "name", "type", "price", "group", "mortgaged")}
            for sq in msgspec.to_builtins(sim.game.view(None))["board"]]
