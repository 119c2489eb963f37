"""Houses and hotels: building and selling evenly, the bank's 32 houses and 12 hotels, and shortages.

A build lists sites, one building each, in order. Each must leave its group even (no site more than one above
the lowest; the hotel only when every site has four houses), on a complete group with no site mortgaged. When
the bank holds fewer buildings of a kind than a build asks for, other owners of complete groups get a window to
claim theirs; if all the claims together exceed the bank's, the buildings are auctioned one at a time among the
claimants, else everyone gets what they asked. With none left, builders wait (``bank_empty``).
"""

from __future__ import annotations

from itertools import product
from typing import Literal, NamedTuple

from service.events import monopoly as ev

from ..errors import RuleViolation
from .auctions import open_auction
from .batch import Batch
from .board import GROUPS, HOTEL, SQUARES, STREET_GROUPS, group_of
from .state import Claim, State

Kind = Literal["house", "hotel"]


class Step(NamedTuple):
    """One building of a plan: the site, its level after, and whether it is a house or the hotel."""

    square: int
    level: int
    kind: Kind


def kind_after(level: int) -> Kind:
    return "hotel" if level == HOTEL - 1 else "house"


def check_group(s: State, seat: int, q: int) -> None:
    """The site may carry buildings of ``seat`` at all: a street of a complete group, none of it mortgaged."""
    sq = SQUARES[q]
    if sq.type != "street":
        raise RuleViolation("not_a_street", f"{sq.name} takes no buildings", square=q)
    if s.sites[q].owner != seat:
        raise RuleViolation("not_owner", f"You do not own {sq.name}", square=q)
    if any(s.sites[g].owner != seat for g in group_of(q)):
        raise RuleViolation(
            "group_incomplete",
            f"Build only on a complete group: you do not own all of {sq.group}",
            square=q,
        )
    if any(s.sites[g].mortgaged for g in group_of(q)):
        raise RuleViolation(
            "group_mortgaged",
            f"A site of {sq.group} is mortgaged: lift it before building",
            square=q,
        )


def plan(s: State, seat: int, sites: tuple[int, ...]) -> list[Step]:
    """The buildings ``sites`` asks for, checked one after another against the levels the ones before leave."""
    levels = {q: site.level for q, site in enumerate(s.sites)}
    steps = []
    for q in sites:
        check_group(s, seat, q)
        level = levels[q]
        if level >= HOTEL:
            raise RuleViolation("fully_built", f"{SQUARES[q].name} has its hotel", square=q)
        if level > min(levels[g] for g in group_of(q)):
            raise RuleViolation(
                "uneven_building",
                f"Build evenly: another site of {SQUARES[q].group} has fewer buildings",
                square=q,
            )
        levels[q] = level + 1
        steps.append(Step(q, level + 1, kind_after(level)))
    return steps


def cost(steps: list[Step]) -> int:
    return sum(SQUARES[st.square].house_cost for st in steps)


def supplied(s: State, steps: list[Step]) -> int:
    """How many of ``steps`` the bank can supply in order (a hotel gives its site's four houses back)."""
    houses, hotels = s.houses, s.hotels
    for i, st in enumerate(steps):
        if st.kind == "house":
            if houses == 0:
                return i
            houses -= 1
        else:
            if hotels == 0:
                return i
            hotels, houses = hotels - 1, houses + 4
    return len(steps)


def stock(s: State, kind: Kind) -> int:
    return s.houses if kind == "house" else s.hotels


def could_claim(s: State, seat: int, kind: Kind) -> bool:
    """Whether ``seat`` owns a complete, unmortgaged group whose next building is of ``kind``."""
    for g in STREET_GROUPS:
        squares = GROUPS[g]
        if all(s.sites[q].owner == seat and not s.sites[q].mortgaged for q in squares):
            low = min(s.sites[q].level for q in squares)
            if low < HOTEL and kind_after(low) == kind:
                return True
    return False


def check_build(s: State, seat: int, sites: tuple[int, ...]) -> tuple[list[Step], int]:
    """The plan and how many of it the bank can supply now; refuses what cannot be built or asked for at all."""
    if s.shortage is not None or scarce_lots(s):
        raise RuleViolation(
            "shortage_open",
            "Buildings are scarce and being shared out: wait until that is settled",
        )
    steps = plan(s, seat, sites)
    if cost(steps) > s.seats[seat].cash:
        raise RuleViolation(
            "cannot_afford",
            f"That costs ${cost(steps)}; you have ${s.seats[seat].cash}",
            cost=cost(steps),
        )
    n = supplied(s, steps)
    if n < len(steps):
        kind = steps[n].kind
        if any(st.kind != kind for st in steps):
            raise RuleViolation(
                "mixed_shortage",
                f"The bank is short of {kind}s: ask for houses and hotels apart",
            )
        if stock(s, kind) == 0:
            raise RuleViolation(
                "bank_empty",
                f"The bank has no {kind}s left: wait until some are sold back",
                kind=kind,
            )
    return steps, n


def build(b: Batch, seat: int, sites: tuple[int, ...]) -> None:
    s = b.state
    steps, n = check_build(s, seat, sites)
    if n == len(steps):
        _erect(b, seat, steps)
        return
    kind = steps[n].kind
    claimants = tuple(o for o in s.opponents(seat) if could_claim(s, o, kind))
    if not claimants:
        _erect(b, seat, steps[:n])
        return
    b.emit(
        ev.ShortageDeclared(
            seat=seat,
            kind=kind,
            sites=sites,
            bank=stock(s, kind),
            claimants=claimants,
            deadline_at=b.deadline,
        )
    )


def _erect(b: Batch, seat: int, steps: list[Step]) -> None:
    for st in steps:
        b.emit(
            ev.Built(
                seat=seat,
                square=st.square,
                level=st.level,
                price=SQUARES[st.square].house_cost,
            )
        )


def check_claim(s: State, seat: int, sites: tuple[int, ...]) -> None:
    w = s.shortage
    if w is None:
        raise RuleViolation("no_shortage", "No shortage window is open")
    if seat not in w.awaited:
        raise RuleViolation("not_a_claimant", "This window does not await a claim from you")
    for st in plan(s, seat, sites):
        if st.kind != w.kind:
            raise RuleViolation("wrong_building", f"This window shares out {w.kind}s", square=st.square)


def claim(b: Batch, seat: int, sites: tuple[int, ...]) -> None:
    check_claim(b.state, seat, sites)
    b.emit(ev.BuildingsClaimed(seat=seat, sites=sites))


def resolve_shortage(b: Batch) -> None:
    """The window closes: an auction if the claims together exceed the bank and more than one owner claims."""
    w = b.state.shortage
    assert w is not None
    claims = tuple(c for c in w.claims if c.sites)
    if sum(len(c.sites) for c in claims) > stock(b.state, w.kind) and len(claims) > 1:
        b.emit(ev.ShortageResolved(auction=True))
    else:
        b.emit(ev.ShortageResolved(auction=False))
        _grant(b, claims, w.kind)


def first_placeable(s: State, claim: Claim, kind: Kind) -> int | None:
    """The first site of ``claim`` that can take a ``kind`` now (evenly, paid for, from the bank's stock)."""
    if stock(s, kind) == 0:
        return None
    for q in claim.sites:
        try:
            steps = plan(s, claim.seat, (q,))
        except RuleViolation:
            continue
        if steps[0].kind == kind and s.seats[claim.seat].cash >= SQUARES[q].house_cost:
            return q
    return None


def _grant(b: Batch, claims: tuple[Claim, ...], kind: Kind) -> None:
    """Each claim in order, each site as long as it can be placed and paid for."""
    for c in claims:
        for q in c.sites:
            if first_placeable(b.state, Claim(seat=c.seat, sites=(q,)), kind) is not None:
                level = b.state.sites[q].level + 1
                b.emit(ev.Built(seat=c.seat, square=q, level=level, price=SQUARES[q].house_cost))


def scarce_lots(s: State) -> bool:
    return bool(s.lots) and not isinstance(s.lots[0], int)


def scarce_round(b: Batch) -> None:
    """Between building lots: auction the next one while the claims still exceed the bank; else share out."""
    s = b.state
    kind: Kind = s.lots[0]  # type: ignore[assignment]
    wanting = tuple(c for c in s.lot_claims if first_placeable(s, c, kind) is not None)
    if sum(len(c.sites) for c in wanting) <= stock(s, kind) or len(wanting) <= 1:
        b.emit(ev.ShortageResolved(auction=False))
        _grant(b, wanting, kind)
        return
    open_auction(b, kind, tuple(c.seat for c in wanting))


def check_sell(s: State, seat: int, q: int) -> None:
    if s.sites[q].owner != seat:
        raise RuleViolation("not_owner", f"You do not own {SQUARES[q].name}", square=q)
    level = s.sites[q].level
    if level == 0:
        raise RuleViolation("no_building", f"{SQUARES[q].name} has no building to sell", square=q)
    if level < max(s.sites[g].level for g in group_of(q)):
        raise RuleViolation(
            "uneven_selling",
            f"Sell evenly: another site of {SQUARES[q].group} has more buildings",
            square=q,
        )


def sell(b: Batch, seat: int, q: int, levels: tuple[int, ...] = ()) -> None:
    """Half the cost back. A hotel goes back to four houses; when the bank has fewer than four, the group comes
    down as far as the bank's houses require: under version 1 to one level for the whole group, from version 2
    only as far as evenness needs too (``break_downs``; ``levels``: the owner's choice among them)."""
    s = b.state
    check_sell(s, seat, q)
    if levels and s.rules_version < 2:
        raise RuleViolation("not_in_rules_version", "Choosing the levels a sale leaves came with rules version 2")
    level = s.sites[q].level
    if level == HOTEL and s.houses < HOTEL - 1:
        after = _break_down(s, q) if s.rules_version < 2 else dict(zip(group_of(q), _chosen(s, q, levels), strict=True))
        sell_off(b, seat, after)
        return
    if levels and levels != tuple(level - 1 if g == q else s.sites[g].level for g in group_of(q)):
        raise RuleViolation("not_a_break_down", "This sale leaves only the site sold from one lower", square=q)
    b.emit(ev.BuildingSold(seat=seat, square=q, level=level - 1, refund=SQUARES[q].house_cost // 2))


def sell_off(b: Batch, seat: int, targets: dict[int, int]) -> None:
    """Bring sites down to ``targets`` in one event, at half the cost of what goes."""
    s = b.state
    changed = {q: after for q, after in targets.items() if s.sites[q].level != after}
    if changed:
        refund = sum(SQUARES[q].house_cost * (s.sites[q].level - after) // 2 for q, after in changed.items())
        squares = tuple(changed)
        b.emit(ev.BuildingsSoldOff(seat=seat, squares=squares, levels=tuple(changed.values()), refund=refund))


def _break_down(s: State, q: int) -> dict[int, int]:
    """The group's levels after selling the hotel on ``q`` with the bank short of houses: every site at most
    ``top``, the highest level whose houses (on former hotel sites, less those freed elsewhere) the bank holds."""
    group = group_of(q)
    for top in range(HOTEL - 2, -1, -1):
        after = {g: min(s.sites[g].level, top) for g in group}
        hotels = [g for g in group if s.sites[g].level == HOTEL]
        wanted = sum(after[g] for g in hotels) - sum(s.sites[g].level - after[g] for g in group if g not in hotels)
        if wanted <= s.houses:
            return after
    return {g: 0 for g in group}


def break_downs(s: State, q: int) -> list[tuple[int, ...]]:
    """The arrangements (the group's levels in board order) a hotel sold on ``q`` short of houses may leave,
    the server's default first: even, no site higher than it stands, ``q`` without its hotel, the houses put
    back within the bank's, and as few buildings sold as that allows (RULES.md: hotel,4,4 with 2 houses in the
    bank becomes 3,4,3 or an equal arrangement, never 3,3,3). The default brings ``q`` down furthest, then the
    group's last site, then the one before it (so hotel,4,4 becomes 3,4,3)."""
    group = group_of(q)
    before = tuple(s.sites[g].level for g in group)
    at = group.index(q)
    fits = [
        after
        for after in product(*(range(v + 1) for v in before))
        if after[at] < HOTEL and max(after) - min(after) <= 1 and _houses_put_back(before, after) <= s.houses
    ]
    most = max(sum(after) for after in fits)
    fewest_sold = [after for after in fits if sum(after) == most]
    return sorted(fewest_sold, key=lambda after: (after[at], *(after[i] for i in reversed(range(len(group))))))


def _houses_put_back(before: tuple[int, ...], after: tuple[int, ...]) -> int:
    """Houses the bank must supply to go from ``before`` to ``after`` (a hotel returned needs none)."""
    return sum(v for v in after if v < HOTEL) - sum(v for v in before if v < HOTEL)


def _chosen(s: State, q: int, levels: tuple[int, ...]) -> tuple[int, ...]:
    """The owner's ``levels`` if it is one of ``break_downs``; none given, the default."""
    allowed = break_downs(s, q)
    if not levels:
        return allowed[0]
    if levels not in allowed:
        raise RuleViolation(
            "not_a_break_down",
            "Sell only as far as evenness and the bank's houses require: choose one of the allowed levels",
            square=q,
            allowed=[list(a) for a in allowed],
        )
    return levels
