"""Bots for Monopoly. Both act only through ``legal_commands``. Where a command is open-ended, the listed one is
an example and ``legal_forms`` gives its bounds: the strategic bot bids any amount from the listed (least) bid
up to its cash; an ``offer_trade`` a bot builds itself is first put to the real decider and made only if it
would be accepted (the random bot leaves the listed example, a $1 gift, alone).

- ``random`` plays any legal command, but in a way that still ends: it answers every wait, rolls on its own
  turn more often than not, acts out of turn only rarely, passes most auctions and answers trades by a coin.
- ``strategic`` plays like a careful player: it buys what it can afford keeping a cash reserve, bids in $10
  raises up to what a property is worth to it (a scarce house from its deed price up to twice that), builds
  evenly on complete groups with spare cash, lifts mortgages when rich, raises a debt by mortgaging idle
  property, then selling buildings, then mortgaging the rest before it gives up, answers Income Tax with the
  cheaper choice (its worth computed first), and trades by the valuation of ``monopoly_trading``: it accepts
  what leaves it a tenth ahead, and offers swaps that complete a group for both sides, cash for the site that
  completes its own, or cash for a site of a group split among several, each at what the owner would take.

Both take a jail policy: ``leave`` (use a card or pay at once), ``stay`` (roll for doubles). The strategic bot
by default leaves early in the game, while property is still for sale, and stays later, when rent is the risk.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

import msgspec

from service.events import monopoly as ev
from service.rules.errors import RuleViolation
from service.rules.monopoly import decide
from service.rules.monopoly.board import (
    GROUPS,
    PROPERTIES,
    RAILROAD_RENT,
    SQUARES,
    STREET_GROUPS,
    UTILITY_TIMES,
    group_of,
)
from service.rules.monopoly.mortgages import lift_cost
from service.rules.monopoly.state import State
from service.rules.monopoly.worth import tax_worth
from service.rules.resign import playing_on

from . import monopoly_trading as trading

JailPolicy = Literal["leave", "stay", "auto"]
Command = msgspec.Struct


def by_type(legal: list[Command]) -> dict[type, list[Command]]:
    out: dict[type, list[Command]] = {}
    for c in legal:
        out.setdefault(type(c), []).append(c)
    return out


def jail_move(options: dict[type, list[Command]], leave: bool) -> Command | None:
    """In jail before rolling: a card, else the fine, when leaving; else the roll for doubles."""
    if leave:
        for kind in (ev.UseJailCard, ev.PayFine):
            if kind in options:
                return options[kind][0]
    return options[ev.Roll][0] if ev.Roll in options else None


def accepted_by_rules(s: State, command: Command, seat: int) -> bool:
    """Whether the decider would take ``command`` from ``seat`` now: how a bot checks an offer it built itself.
    The clock does not matter to an offer's validity, so any instant before every deadline will do."""
    try:
        decide(s, command, seat, 0)
    except RuleViolation:
        return False
    return True


def tradeable(s: State, seat: int, square: int) -> bool:
    """A property ``seat`` owns that may change hands: nothing built anywhere on its group."""
    site = s.sites[square]
    return site.owner == seat and all(s.sites[q].level == 0 for q in group_of(square))


# --- the random bot ---------------------------------------------------------------------------------


class RandomBot:
    """Random legal play that still ends (see the module's docstring). ``jail``: ``None`` picks at random."""

    name = "random"
    OUT_OF_TURN = 0.02
    ROLL = 0.6
    BID = 0.15
    TRADE = 0.02

    def __init__(self, jail: Literal["leave", "stay"] | None = None) -> None:
        self.jail = jail
        self._awake: tuple[object, int] = (None, -1)

    def quiet(self, s: State, seat: int, rnd: random.Random) -> bool:
        """Whether this bot lets a moment that is not its own pass, decided before its options are listed (so
        a fast driver need not list them): mostly yes."""
        if rnd.random() >= self.OUT_OF_TURN:
            return True
        self._awake = (s, seat)
        return False

    def choose(self, s: State, seat: int, legal: list[Command], rnd: random.Random) -> Command | None:
        legal = playing_on(legal)  # bots never resign (RULES.md §4)
        if not legal:
            return None
        options = by_type(legal)
        p = s.pending
        if p is not None and seat in p.seats:
            return self._answer(p.kind, options, rnd)
        if seat != s.turn_seat or s.blocked:
            woken = self._awake[0] is s and self._awake[1] == seat
            if not woken and self.quiet(s, seat, rnd):
                return None
            chores = [c for c in legal if not isinstance(c, (ev.Roll, ev.OfferTrade))]
            return rnd.choice(chores) if chores else None
        me = s.seats[seat]
        if me.in_jail and s.step == "roll" and self.jail is not None:
            move = jail_move(options, self.jail == "leave")
            if move is not None:
                return move
        if ev.Roll in options and rnd.random() < self.ROLL:
            return options[ev.Roll][0]
        if rnd.random() < self.TRADE:
            offer = random_offer(s, seat, rnd)
            if offer is not None and accepted_by_rules(s, offer, seat):
                return offer
        kinds = [k for k in options if k is not ev.OfferTrade] or list(options)
        return rnd.choice(options[rnd.choice(kinds)])

    def _answer(self, kind: str, options: dict[type, list[Command]], rnd: random.Random) -> Command:
        if kind == "auction":
            if ev.Bid in options and rnd.random() < self.BID:
                return options[ev.Bid][0]
            if ev.PassBid in options:
                return options[ev.PassBid][0]
        if kind == "debt":
            raising = [c for k in (ev.SellBuilding, ev.Mortgage) for c in options.get(k, [])]
            if raising and rnd.random() < 0.95:
                return rnd.choice(raising)
        if kind == "trade":
            answers = [c for k in (ev.AcceptTrade, ev.RejectTrade) for c in options.get(k, [])]
            if answers:
                return rnd.choice(answers)
        waits = {
            "buy": (ev.Buy, ev.Decline),
            "tax": (ev.ChooseTax,),
            "auction": (ev.Bid, ev.PassBid),
            "shortage": (ev.ClaimBuildings,),
            "debt": (ev.SellBuilding, ev.Mortgage, ev.DeclareBankruptcy),
            "trade": (ev.AcceptTrade, ev.RejectTrade),
        }.get(kind, ())
        answers = [c for k in waits for c in options.get(k, [])]
        return rnd.choice(answers or [c for cs in options.values() for c in cs])


def random_offer(s: State, seat: int, rnd: random.Random) -> ev.OfferTrade | None:
    """A simple offer to another player still in: one tradeable property each way, or one for some cash."""
    others = s.opponents(seat)
    if not others:
        return None
    to = rnd.choice(others)
    mine = [q for q in s.owned_by(seat) if tradeable(s, seat, q)]
    theirs = [q for q in s.owned_by(to) if tradeable(s, to, q)]
    give = ev.Holdings(squares=(rnd.choice(mine),)) if mine and rnd.random() < 0.7 else ev.Holdings()
    get = ev.Holdings(squares=(rnd.choice(theirs),)) if theirs and rnd.random() < 0.7 else ev.Holdings()
    if not give.squares and not get.squares:
        return None
    if not get.squares:
        get = ev.Holdings(cash=min(s.seats[to].cash, rnd.randint(1, 300)))
    elif not give.squares:
        give = ev.Holdings(cash=min(s.seats[seat].cash, rnd.randint(1, 300)))
    return ev.OfferTrade(to=to, give=give, get=get)


# --- the strategic bot ------------------------------------------------------------------------------


def owners(s: State, group: str) -> list[int | None]:
    return [s.sites[q].owner for q in GROUPS[group]]


def completes(s: State, seat: int, square: int) -> bool:
    """Whether owning ``square`` would give ``seat`` its whole group (a street group: the one that builds)."""
    group = SQUARES[square].group
    return group in STREET_GROUPS and all(s.sites[q].owner == seat for q in GROUPS[group] if q != square)


def rent_now(s: State, square: int) -> int:
    """The rent a landing on ``square`` costs as it stands (utilities at an average throw of 7)."""
    site, sq = s.sites[square], SQUARES[square]
    if site.owner is None or site.mortgaged:
        return 0
    held = sum(s.sites[q].owner == site.owner for q in group_of(square))
    if sq.type == "railroad":
        return RAILROAD_RENT[held]
    if sq.type == "utility":
        return 7 * UTILITY_TIMES[held]
    whole = held == len(group_of(square))
    return sq.rent[site.level] * (2 if whole and site.level == 0 else 1)


def threat(s: State, seat: int) -> int:
    """The dearest rent an opponent could charge ``seat`` on its next landing."""
    sites = s.sites
    return max(
        (
            rent_now(s, q)
            for q in PROPERTIES
            if sites[q].owner is not None and sites[q].owner != seat and not sites[q].mortgaged
        ),
        default=0,
    )


def reserve(s: State, seat: int) -> int:
    """Cash kept back: a floor of $100, more as opponents' rents grow (half the dearest, up to $600)."""
    return min(600, max(100, threat(s, seat) // 2))


def value_to(s: State, seat: int, square: int) -> int:
    """What ``square`` is worth to ``seat``: its price, half again if it completes one of ``seat``'s groups,
    a quarter more if it keeps an opponent from completing theirs."""
    price = SQUARES[square].price
    if completes(s, seat, square):
        return price * 3 // 2
    rivals = {o for o in owners(s, SQUARES[square].group or "") if o not in (None, seat)}
    if any(completes(s, r, square) for r in rivals):
        return price * 5 // 4
    return price


def breaks_a_group(s: State, seat: int, squares: tuple[int, ...]) -> bool:
    """Whether giving ``squares`` away breaks up a street group ``seat`` owns whole."""
    return any(completes(s, seat, q) and s.sites[q].owner == seat for q in squares)


class StrategicBot:
    """A careful player (see the module's docstring)."""

    name = "strategic"
    OFFER = 0.1
    """Chance, each turn before rolling, of looking for a trade to offer (``_offer``)."""
    RAISE = 10
    """Dollars over the high bid a raise adds (the last raise may add less, to stop at the limit)."""

    def __init__(self, jail: JailPolicy = "auto") -> None:
        self.jail = jail
        self._kept: tuple[object, int, int] = ((), -1, 0)

    def _reserve(self, s: State, seat: int) -> int:
        """``reserve``, worked out again only when the board changed (the sites tuple is replaced then)."""
        sites, who, amount = self._kept
        if sites is not s.sites or who != seat:
            amount = reserve(s, seat)
            self._kept = (s.sites, seat, amount)
        return amount

    def choose(self, s: State, seat: int, legal: list[Command], rnd: random.Random) -> Command | None:
        legal = playing_on(legal)  # bots never resign (RULES.md §4)
        if not legal:
            return None
        options = by_type(legal)
        p = s.pending
        if p is not None and seat in p.seats:
            answer: Callable[[State, int, dict[type, list[Command]]], Command] = getattr(self, f"_{p.kind}")
            return answer(s, seat, options)
        if seat != s.turn_seat or s.blocked or s.step != "roll":
            return None
        me = s.seats[seat]
        if me.in_jail:
            move = jail_move(options, self._leaves_jail(s))
            if move is not None:
                return move
        chore = self._lift(s, seat, options) or self._build(s, seat, options)
        if chore is not None:
            return chore
        if not me.in_jail and rnd.random() < self.OFFER:
            offer = self._offer(s, seat)
            if offer is not None:
                return offer
        return options[ev.Roll][0] if ev.Roll in options else None

    def quiet(self, s: State, seat: int, rnd: random.Random) -> bool:
        """It never acts out of turn (it builds and lifts mortgages before its own roll)."""
        return True

    def _leaves_jail(self, s: State) -> bool:
        if self.jail != "auto":
            return self.jail == "leave"
        unowned = sum(s.sites[q].owner is None for q in PROPERTIES)
        return unowned * 2 > len(PROPERTIES)

    # -- waits ---------------------------------------------------------------------------------------

    def _buy(self, s: State, seat: int, options: dict) -> Command:
        assert s.offer is not None
        price, cash = SQUARES[s.offer.square].price, s.seats[seat].cash
        keep = 50 if completes(s, seat, s.offer.square) else self._reserve(s, seat)
        if ev.Buy in options and cash - price >= keep:
            return options[ev.Buy][0]
        return options[ev.Decline][0]

    def _tax(self, s: State, seat: int, options: dict) -> Command:
        percent = tax_worth(s, seat) // 10
        choice = "percent" if percent < 200 else "flat"
        wanted = next((c for c in options[ev.ChooseTax] if c.choice == choice), None)
        return wanted or options[ev.ChooseTax][0]

    def _auction(self, s: State, seat: int, options: dict) -> Command:
        """Open at ``_opening``, then raise by ``RAISE`` up to the limit (the listed bid is the least allowed; any
        amount from it up to the bidder's cash is the same command, ``legal_forms`` says)."""
        if ev.Bid in options:
            least, limit = options[ev.Bid][0].amount, self._limit(s, seat)
            if least <= limit:
                assert s.auction is not None
                return ev.Bid(amount=min(limit, max(least, self._opening(s, seat, limit), s.auction.high_bid + self.RAISE)))
        return options[ev.PassBid][0]

    def _opening(self, s: State, seat: int, limit: int) -> int:
        """A property opens at half the limit; a scarce house or hotel at its deed price, what it is worth at the
        least (the bank sells it for that when it is not scarce), so it never goes for $1 to a careful player."""
        assert s.auction is not None
        wanted = self._wanted(s, seat)
        return min(SQUARES[q].house_cost for q in wanted) if wanted else limit // 2

    def _wanted(self, s: State, seat: int) -> list[int]:
        """The sites this seat claimed for the scarce building under the hammer (none for a property)."""
        assert s.auction is not None
        if isinstance(s.auction.lot, int):
            return []
        return [q for c in s.lot_claims if c.seat == seat for q in c.sites]

    def _limit(self, s: State, seat: int) -> int:
        """The most this seat bids for the lot under the hammer: a property's ``value_to``, a scarce building
        up to twice its deed price (it adds the next level's rent and keeps it from a rival)."""
        assert s.auction is not None
        lot, cash = s.auction.lot, s.seats[seat].cash
        if isinstance(lot, int):
            return min(value_to(s, seat, lot), cash - self._reserve(s, seat) // 2)
        wanted = self._wanted(s, seat)
        if not wanted:
            return 0
        return min(max(SQUARES[q].house_cost for q in wanted) * 2, cash - self._reserve(s, seat))

    def _shortage(self, s: State, seat: int, options: dict) -> Command:
        claims = options[ev.ClaimBuildings]
        cash = s.seats[seat].cash - self._reserve(s, seat)
        affordable = [c for c in claims if sum(SQUARES[q].house_cost for q in c.sites) <= cash]
        return max(affordable or claims[:1], key=lambda c: len(c.sites))

    def _debt(self, s: State, seat: int, options: dict) -> Command:
        """Raise the cash (the debt is paid as soon as it is there): idle property first, then buildings, then
        the rest; bankruptcy only when nothing is left to sell or mortgage."""
        mortgages = options.get(ev.Mortgage, [])
        idle = [c for c in mortgages if not self._whole(s, seat, c.square)]
        if idle:
            return min(idle, key=lambda c: rent_now(s, c.square))
        sales = options.get(ev.SellBuilding, [])
        if sales:
            return min(sales, key=lambda c: (SQUARES[c.square].house_cost, -s.sites[c.square].level))
        if mortgages:
            return min(mortgages, key=lambda c: rent_now(s, c.square))
        return options[ev.DeclareBankruptcy][0]

    def _trade(self, s: State, seat: int, options: dict) -> Command:
        """Accept an offer only if it gains a tenth on what it costs and hands no group to the other side
        unless it completes one of this seat's own."""
        for accept in options.get(ev.AcceptTrade, []):
            trade = next(t for t in s.trades if t.id == accept.trade)
            if self._good(s, seat, trade.seat, got=trade.give, gave=trade.get):
                return accept
        rejects = options.get(ev.RejectTrade, [])
        return rejects[0] if rejects else next(iter(options.values()))[0]

    def _good(self, s: State, seat: int, other: int, got: ev.Holdings, gave: ev.Holdings) -> bool:
        """Worth accepting by the valuation of ``monopoly_trading`` (a tenth ahead, a rival's monopoly priced in),
        never breaking up a group of its own, and never paying cash into half its reserve."""
        if breaks_a_group(s, seat, gave.squares):
            return False
        if gave.cash > self._spare_for_trades(s, seat):
            return False
        return trading.worth_accepting(s, seat, other, got, gave)

    def _spare_for_trades(self, s: State, seat: int) -> int:
        return s.seats[seat].cash - self._reserve(s, seat) // 2

    # -- chores before rolling ----------------------------------------------------------------------

    def _whole(self, s: State, seat: int, square: int) -> bool:
        return SQUARES[square].group in STREET_GROUPS and all(s.sites[q].owner == seat for q in group_of(square))

    def _lift(self, s: State, seat: int, options: dict) -> Command | None:
        """Lift a mortgage when the cost leaves $300 over the reserve: complete groups first."""
        spare = s.seats[seat].cash - self._reserve(s, seat) - 300
        lifts = [c for c in options.get(ev.LiftMortgage, []) if lift_cost(s, c.square) <= spare]
        if not lifts:
            return None
        return max(lifts, key=lambda c: (self._whole(s, seat, c.square), SQUARES[c.square].price))

    def _build(self, s: State, seat: int, options: dict) -> Command | None:
        """One building on the group with the best rent, when its cost leaves the reserve."""
        spare = s.seats[seat].cash - self._reserve(s, seat)
        builds = [c for c in options.get(ev.Build, []) if sum(SQUARES[q].house_cost for q in c.sites) <= spare]
        if not builds:
            return None
        return max(builds, key=lambda c: (SQUARES[c.sites[0]].rent[min(5, s.sites[c.sites[0]].level + 1)], -c.sites[0]))

    def _offer(self, s: State, seat: int) -> ev.OfferTrade | None:
        """A trade that completes or gathers a street group, cash evened out so the other side should take it
        (``monopoly_trading.best_offer``), made only if the decider would take it."""
        if any(t.seat == seat for t in s.trades):
            return None
        spare = s.seats[seat].cash - self._reserve(s, seat)
        offer = trading.best_offer(s, seat, spare, lambda o: self._spare_for_trades(s, o))
        if offer is None or not self._good(s, offer.to, seat, got=offer.give, gave=offer.get):
            return None
        return offer if accepted_by_rules(s, offer, seat) else None


BOTS: dict[str, type] = {"random": RandomBot, "strategic": StrategicBot}
