"""Monopoly's strategic bot, written against the view: it buys what it can afford keeping a cash reserve, bids up to
what a property is worth to it, builds on complete groups, raises debts by mortgaging idle property first, and
trades to complete colour groups.

Monopoly has no ``greedy`` bot: this is the server's weakest bot that is not random, ``strategic``
(service/bots/monopoly.py and monopoly_trading.py), rewritten for the bot kit. On every view it chooses exactly
what the server's strategic bot chooses at that moment (tests/client/test_examples.py checks it on seeded games).
Run it against a local service (``max_rounds`` keeps a game short):

    python -m free_parking_client play examples/greedy_monopoly.py:GreedyMonopoly \\
        --url http://127.0.0.1:8000 --kind monopoly --games 20 --options '{"max_rounds": 20}'

The view (docs/rules-monopoly.md): ``board`` (each square's ``group``, ``price``, ``house_cost``, ``rent``,
``owner``, ``level`` 0–5 and ``mortgaged``), ``seats`` (``cash``, ``in_jail``, ``jail_cards``, ``bankrupt``),
``turn_seat`` and ``step``, the waits (``offer``, ``auction``, ``shortage``, ``debts``, ``trades``) and
``pending``, the one the game waits on now, with the ``seats`` it awaits. ``legal`` lists every command you may send
now; a bid, a build order, a claim and a trade offer may be any that ``legal_forms`` admits.
"""

from __future__ import annotations

import math
import random

from free_parking_client import Bot, NotLegal, command_body
from free_parking_client.commands import check

RAILROAD_RENT = (0, 25, 50, 100, 200)  # by railroads owned
UTILITY_TIMES = (0, 4, 10)  # the dice times this, by utilities owned
OFFER = 0.1  # the chance, each turn before rolling, of looking for a trade to offer
RAISE = 10  # dollars a raise adds over the high bid
# How a trade is valued (the server's monopoly_trading.py): a whole colour group at its prices times MONOPOLY, part of
# one at the prices and PART more for each further site; a Get Out of Jail Free card at CARD; the other side's gain
# from a group it completes counts RIVAL against; an offer is accepted when it comes out MARGIN of its stake ahead.
MONOPOLY, PART, RIVAL, MARGIN, CARD, STEP = 2.5, 0.15, 0.5, 0.1, 30, 10


def holdings(cash: int = 0, squares: tuple = ()) -> dict:
    return {"cash": cash, "squares": list(squares), "jail_cards": []}


def side(h: dict) -> tuple[int, list, list]:
    """A trade side's cash, squares and jail cards (a view leaves out what is empty)."""
    return h.get("cash", 0), h.get("squares", []), h.get("jail_cards", [])


class Table:
    """The view, with the board's facts the bot asks about."""

    def __init__(self, v: dict) -> None:
        self.v, self.sites, self.seats = v, v["board"], v["seats"]
        self.groups: dict[str, list[int]] = {}  # group -> its squares, in board order
        for site in self.sites:
            if site["group"] is not None:
                self.groups.setdefault(site["group"], []).append(site["square"])
        self.streets = [g for g in self.groups if g not in ("railroad", "utility")]
        self.properties = [site["square"] for site in self.sites if site["price"] > 0]

    def owner(self, q: int) -> int | None:
        return self.sites[q]["owner"]

    def price(self, q: int) -> int:
        return self.sites[q]["price"]

    def house(self, q: int) -> int:
        return self.sites[q]["house_cost"]

    def group_of(self, q: int) -> list[int]:
        return self.groups[self.sites[q]["group"]]

    def cash(self, seat: int) -> int:
        return self.seats[seat]["cash"]

    def whole(self, seat: int, q: int) -> bool:
        """``seat`` owns all of ``q``'s colour group (the only kind it can build on)."""
        return self.sites[q]["group"] in self.streets and all(self.owner(g) == seat for g in self.group_of(q))

    def completes(self, seat: int, q: int) -> bool:
        """Owning ``q`` would give ``seat`` its whole colour group."""
        return self.sites[q]["group"] in self.streets and all(self.owner(g) == seat for g in self.group_of(q) if g != q)

    def rent_now(self, q: int) -> int:
        """What landing on ``q`` costs as it stands (a utility at an average throw of 7)."""
        site = self.sites[q]
        if site["owner"] is None or site["mortgaged"]:
            return 0
        held = sum(self.owner(g) == site["owner"] for g in self.group_of(q))
        if site["type"] == "railroad":
            return RAILROAD_RENT[held]
        if site["type"] == "utility":
            return 7 * UTILITY_TIMES[held]
        whole = held == len(self.group_of(q))
        return site["rent"][site["level"]] * (2 if whole and site["level"] == 0 else 1)

    def reserve(self, seat: int) -> int:
        """Cash kept back: $100, more as the opponents' rents grow (half the dearest, up to $600)."""
        threat = max((self.rent_now(q) for q in self.properties
                      if self.owner(q) is not None and self.owner(q) != seat and not self.sites[q]["mortgaged"]),
                     default=0)  # fmt: skip
        return min(600, max(100, threat // 2))

    def value_to(self, seat: int, q: int) -> int:
        """Its price; half again if it completes a group of ``seat``'s, a quarter more if it stops a rival's."""
        if self.completes(seat, q):
            return self.price(q) * 3 // 2
        rivals = {self.owner(g) for g in self.group_of(q)} - {None, seat}
        return self.price(q) * 5 // 4 if any(self.completes(r, q) for r in rivals) else self.price(q)

    def lift_cost(self, q: int) -> int:
        """The mortgage (half the price) and 10% rounded up; the bare mortgage if the 10% was just paid."""
        mortgage = self.price(q) // 2
        return mortgage if q in self.v["interest_paid"] else mortgage - (-mortgage // 10)

    def tradeable(self, q: int) -> bool:
        return self.owner(q) is not None and all(self.sites[g]["level"] == 0 for g in self.group_of(q))


class GreedyMonopoly(Bot):
    def act(self, view):
        legal = view.playable  # ``legal`` less resign: this bot never resigns
        if not legal:
            return None
        v = view.raw
        t, seat = Table(v), v["seat"]
        self.t, self.seat, self.view = t, seat, view
        options: dict[str, list[dict]] = {}
        for command in legal:
            options.setdefault(command["type"], []).append(command)
        pending = v["pending"]
        if pending is not None and seat in pending["seats"]:  # a wait is on this seat: answer it
            return getattr(self, pending["kind"])(options)
        blocked = v["offer"] or v["auction"] or v["shortage"] or v["debts"]
        if seat != v["turn_seat"] or blocked or v["step"] != "roll":
            return None  # it acts on its own turn only, before it rolls
        me = t.seats[seat]
        if me["in_jail"]:
            unowned = sum(t.owner(q) is None for q in t.properties)
            move = jail_move(options, leave=unowned * 2 > len(t.properties))  # leave early, while there is to buy
            if move is not None:
                return move
        chore = self.lift(options) or self.build(options)
        if chore is not None:
            return chore
        if not me["in_jail"] and self.coin(v) < OFFER:
            offer = self.offer()
            if offer is not None:
                return offer
        return options["roll"][0] if "roll" in options else None

    def coin(self, v: dict) -> float:
        """The server's bot draws from randomness of its seat's own, public: ``random.Random("bot:<game>:<version>:
        <seat>")``, after 64 bits for the world it is asked on (docs/bots.md, "What a bot sees"). The same draw makes
        this bot look for a trade exactly when the server's would; a bot of your own may use any randomness."""
        rnd = random.Random(f"bot:{v['game_id']}:{v['version']}:{v['seat']}")
        rnd.getrandbits(64)
        return rnd.random()

    # -- the waits (``pending.kind``) ------------------------------------------------------------------------------

    def buy(self, options: dict) -> dict:
        """Buy if the reserve is left ($50 when it completes a group)."""
        t, q = self.t, self.view.raw["offer"]["square"]
        keep = 50 if t.completes(self.seat, q) else t.reserve(self.seat)
        if "buy" in options and t.cash(self.seat) - t.price(q) >= keep:
            return options["buy"][0]
        return options["decline"][0]

    def tax(self, options: dict) -> dict:
        """Income Tax: 10% of its worth (cash, printed prices, buildings at cost) when that is under $200."""
        t = self.t
        owned = [q for q in range(len(t.sites)) if t.owner(q) == self.seat]
        worth = t.cash(self.seat) + sum(t.price(q) + t.house(q) * t.sites[q]["level"] for q in owned)
        choice = "percent" if worth // 10 < 200 else "flat"
        return next((c for c in options["choose_tax"] if c["choice"] == choice), options["choose_tax"][0])

    def auction(self, options: dict) -> dict:
        """Open at half the limit (a scarce building at its deed price), then raise by $10 up to the limit."""
        if "bid" in options:
            least, limit = options["bid"][0]["amount"], self.limit()
            if least <= limit:
                wanted = self.wanted()
                opening = min(self.t.house(q) for q in wanted) if wanted else limit // 2
                high = self.view.raw["auction"]["high_bid"]
                return {"type": "bid", "amount": min(limit, max(least, opening, high + RAISE))}
        return options["pass_bid"][0]

    def wanted(self) -> list[int]:
        """The sites this seat still claims in an auction of a scarce building (none for a property)."""
        return [q for c in self.view.raw["auction"]["claims"] if c["seat"] == self.seat for q in c["sites"]]

    def limit(self) -> int:
        """A property: its ``value_to``; a scarce building: up to twice its deed price."""
        t, lot, cash = self.t, self.view.raw["auction"]["lot"], self.t.cash(self.seat)
        if isinstance(lot, int):
            return min(t.value_to(self.seat, lot), cash - t.reserve(self.seat) // 2)
        wanted = self.wanted()
        return min(max(t.house(q) for q in wanted) * 2, cash - t.reserve(self.seat)) if wanted else 0

    def shortage(self, options: dict) -> dict:
        """Claim the most sites it can pay for."""
        claims, spare = options["claim_buildings"], self.t.cash(self.seat) - self.t.reserve(self.seat)
        affordable = [c for c in claims if sum(self.t.house(q) for q in c["sites"]) <= spare]
        return max(affordable or claims[:1], key=lambda c: len(c["sites"]))

    def debt(self, options: dict) -> dict:
        """Mortgage idle property first, then sell buildings, then mortgage the rest; bankrupt only when nothing is
        left."""
        t, mortgages = self.t, options.get("mortgage", [])
        idle = [c for c in mortgages if not t.whole(self.seat, c["square"])]
        if idle:
            return min(idle, key=lambda c: t.rent_now(c["square"]))
        sales = options.get("sell_building", [])
        if sales:
            return min(sales, key=lambda c: (t.house(c["square"]), -t.sites[c["square"]]["level"]))
        if mortgages:
            return min(mortgages, key=lambda c: t.rent_now(c["square"]))
        return options["declare_bankruptcy"][0]

    def trade(self, options: dict) -> dict:
        """Accept an offer worth it (``good``), else reject it."""
        for accept in options.get("accept_trade", []):
            offer = next(o for o in self.view.raw["trades"] if o["trade"] == accept["trade"])
            if self.good(self.seat, offer["seat"], got=offer["give"], gave=offer["get"]):
                return accept
        rejects = options.get("reject_trade", [])
        return rejects[0] if rejects else next(iter(options.values()))[0]

    # -- chores before rolling ---------------------------------------------------------------------------------------

    def lift(self, options: dict) -> dict | None:
        """Lift a mortgage when it leaves $300 over the reserve: on complete groups first, then the dearest."""
        t = self.t
        spare = t.cash(self.seat) - t.reserve(self.seat) - 300
        lifts = [c for c in options.get("lift_mortgage", []) if t.lift_cost(c["square"]) <= spare]
        return max(lifts, key=lambda c: (t.whole(self.seat, c["square"]), t.price(c["square"]))) if lifts else None

    def build(self, options: dict) -> dict | None:
        """One building where the next level's rent is best, if the reserve is left."""
        t = self.t
        spare = t.cash(self.seat) - t.reserve(self.seat)
        builds = [c for c in options.get("build", []) if sum(t.house(q) for q in c["sites"]) <= spare]
        if not builds:
            return None
        return max(builds, key=lambda c: (t.sites[c["sites"][0]]["rent"][min(5, t.sites[c["sites"][0]]["level"] + 1)],
                                          -c["sites"][0]))

    # -- trades (the server's monopoly_trading.py) -------------------------------------------------------------------

    def spare_for_trades(self, seat: int) -> int:
        return self.t.cash(seat) - self.t.reserve(seat) // 2

    def good(self, seat: int, other: int, got: dict, gave: dict) -> bool:
        """Worth accepting for ``seat``: a tenth ahead, never breaking up a group of its own nor paying cash into
        half its reserve."""
        gave_cash, gave_squares, _ = side(gave)
        if any(self.t.completes(seat, q) and self.t.owner(q) == seat for q in gave_squares):
            return False
        if gave_cash > self.spare_for_trades(seat):
            return False
        value, stake = Sides(self.t, seat, gave, other, got).net(seat)
        return value >= MARGIN * stake

    def offer(self) -> dict | None:
        """The trade worth most to this seat that the other side should accept, if the rules take it."""
        t, seat = self.t, self.seat
        if any(o["seat"] == seat for o in self.view.raw["trades"]):
            return None  # one open offer at a time
        spare = t.cash(seat) - t.reserve(seat)
        best = None
        for other, give, get in proposals(t, seat):
            offer = balanced(t, seat, other, give, get, spare, self.spare_for_trades(other))
            if offer is not None:
                value, _ = Sides(t, seat, offer["give"], other, offer["get"]).net(seat)
                if best is None or value > best[0]:
                    best = (value, offer)
        if best is None or not self.good(best[1]["to"], seat, got=best[1]["give"], gave=best[1]["get"]):
            return None
        view = self.view
        try:  # the rules' bounds on an offer: legal_forms (what the server's bot asks of the rules themselves)
            check("monopoly", view.version, view.legal, view.legal_forms, command_body("monopoly", best[1]))
        except NotLegal:
            return None
        return best[1]


def jail_move(options: dict, leave: bool) -> dict | None:
    """In jail before rolling: a card, else the fine, when leaving; else the roll for doubles."""
    if leave:
        for kind in ("use_jail_card", "pay_fine"):
            if kind in options:
                return options[kind][0]
    return options["roll"][0] if "roll" in options else None


def holding_value(t: Table, group: str, held: list[int]) -> float:
    """What holding ``held`` (squares of ``group``) is worth to its holder."""
    if not held:
        return 0.0
    prices = sum(t.price(q) for q in held)
    if group in t.streets and len(held) == len(t.groups[group]):
        return prices * MONOPOLY
    return prices * (1 + PART * (len(held) - 1))


class Sides:
    """A trade seen from both sides: ``a`` gives ``a_gives`` to ``b`` and gets ``b_gives``."""

    def __init__(self, t: Table, a: int, a_gives: dict, b: int, b_gives: dict) -> None:
        self.t, self.a, self.a_gives, self.b, self.b_gives = t, a, a_gives, b, b_gives

    def property_gain(self, seat: int) -> tuple[float, float]:
        """``seat``'s gain in holdings, and of that the part from groups it completes."""
        t = self.t
        gets, gives = (self.b_gives, self.a_gives) if seat == self.a else (self.a_gives, self.b_gives)
        gets_q, gives_q = side(gets)[1], side(gives)[1]
        gain = completed = 0.0
        for group in dict.fromkeys(t.sites[q]["group"] for q in (*gives_q, *gets_q)):
            before = [q for q in t.groups[group] if t.owner(q) == seat]
            after = [q for q in before if q not in gives_q] + [q for q in gets_q if q in t.groups[group]]
            delta = holding_value(t, group, after) - holding_value(t, group, before)
            gain += delta
            if group in t.streets and len(after) == len(t.groups[group]):
                completed += delta
        mortgage = lambda q: t.price(q) // 2  # noqa: E731
        gain -= sum(mortgage(q) * 1.1 + mortgage(q) * 0.1 for q in gets_q if t.sites[q]["mortgaged"])
        gain += sum(mortgage(q) * 1.1 for q in gives_q if t.sites[q]["mortgaged"])
        return gain, completed

    def net(self, seat: int) -> tuple[float, float]:
        """What the trade is worth to ``seat``, and its stake (what it gives, at face value and printed price)."""
        other = self.b if seat == self.a else self.a
        gets, gives = (self.b_gives, self.a_gives) if seat == self.a else (self.a_gives, self.b_gives)
        (get_cash, _, get_cards), (give_cash, give_q, give_cards) = side(gets), side(gives)
        gain, _ = self.property_gain(seat)
        _, rival = self.property_gain(other)
        cash = get_cash - give_cash + CARD * (len(get_cards) - len(give_cards))
        stake = give_cash + CARD * len(give_cards) + sum(self.t.price(q) for q in give_q)
        return gain + cash - RIVAL * max(rival, 0.0), stake


def balanced(t: Table, seat: int, other: int, give: tuple, get: tuple, spare: int, their_spare: int) -> dict | None:
    """``give`` for ``get``, with the least cash that makes it worth ``other``'s while (at most ``spare``), or asking
    half of what ``other`` gains (at most ``their_spare``); ``None`` when no cash makes it good for both."""
    bare = Sides(t, seat, holdings(squares=give), other, holdings(squares=get))
    theirs, their_stake = bare.net(other)
    mine, _ = bare.net(seat)
    short = MARGIN * their_stake - theirs
    if short > 0:
        cash = max(0, math.ceil(short / STEP) * STEP)
        if cash > spare or mine - cash <= 0:
            return None
        return {"type": "offer_trade", "to": other, "give": holdings(cash, give), "get": holdings(squares=get)}
    ask = max(0, min(their_spare, int((-short) / (1 + MARGIN) / 2) // STEP * STEP))
    if mine + ask <= 0:
        return None
    return {"type": "offer_trade", "to": other, "give": holdings(squares=give), "get": holdings(ask, get)}


def proposals(t: Table, seat: int):
    """``(other, give, get)``: trades of colour-group sites that complete or gather a group of ``seat``'s."""
    for group in t.streets:
        squares = t.groups[group]
        mine = [q for q in squares if t.owner(q) == seat]
        missing = [q for q in squares if t.owner(q) != seat]
        if not mine or not missing or not all(t.tradeable(q) for q in squares):
            continue
        holders = {t.owner(q) for q in missing}
        if None in holders:
            continue  # the bank's site may still be landed on and bought
        if len(holders) == 1:
            (other,) = holders
            want = tuple(missing)
            yield other, (), want  # buy what completes the group
            for theirs in t.streets:  # or swap it for what completes one of theirs
                held = [q for q in t.groups[theirs] if t.owner(q) == other]
                need = [q for q in t.groups[theirs] if t.owner(q) != other]
                if theirs != group and held and need and all(t.owner(q) == seat and t.tradeable(q) for q in need):
                    yield other, tuple(need), want
        else:
            for other in sorted(holders):  # a group split among several: buy from one holding no more than this seat
                theirs = [q for q in missing if t.owner(q) == other]
                if len(theirs) <= len(mine):
                    yield other, (), (theirs[0],)
