"""Monopoly over HTTP, on every store: four server bots play a game to a winner whose export verifies offline; every
bad input is a 422 with the rule's code that appends nothing; players act out of turn — a bid, a build, a mortgage,
a trade and its answer — through the one commands endpoint without disturbing the player whose turn it is; and waits
nobody answers (an auction, a trade offer) are closed by the server at their deadline.

To reach a position the test plays the game first in memory (``Local``), with the seed the admin then gives the
service, and sends the same commands over HTTP: the dice come from the seed, so both tables stay the same, which
each answer's events are checked against.
"""

from __future__ import annotations

import asyncio
import hashlib
import time

import msgspec
import pytest

from replays.verify import verify
from service.events import monopoly as ev
from service.events.base import Player
from service.events.common import Create, TakeSeat
from service.events.export import load
from service.rules.engine import Game, rules_for
from service.rules.errors import RuleViolation
from service.rules.monopoly.board import GROUPS, SQUARES, STREET_GROUPS
from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import assert_error, log_of, plain_monopoly_move

SEATS = 4
SEED = hashlib.sha256(b"monopoly-api-test-0").digest()
"""Seat 0's first roll lands on Vermont Avenue, for sale; some seven rounds later a street group is all owned."""


class Local:
    """The game played in memory with the service's seed: where to find a position, and what each command yields."""

    def __init__(self, seed: bytes, **options) -> None:
        rules = rules_for("monopoly")
        self.game = Game.new("monopoly", "g_local", rules.CONFIG(seats=SEATS, **options), seed)
        self.game.play(Create(), None, 1)
        for i in range(SEATS):
            self.game.play(TakeSeat(player=Player(name=f"Player {i}")), None, 1)

    @property
    def s(self):
        return self.game.state

    def play(self, seat: int, command: msgspec.Struct) -> list[str]:
        return [env.type for env in self.game.play(command, seat, self.game.last_at)]

    def refusal(self, seat: int, command: msgspec.Struct) -> str:
        with pytest.raises(RuleViolation) as refused:
            self.game.decide(command, seat, self.game.last_at)
        return refused.value.code


def buy_everything(s) -> tuple[int, msgspec.Struct]:
    seat = s.pending.seats[0] if s.pending is not None else s.turn_seat
    legal = rules_for("monopoly").legal_commands(s, seat)
    return seat, plain_monopoly_move(legal)


def street_group_owned(s) -> bool:
    """Between turns, with some street group owned whole by two or more players, none of it mortgaged."""
    return s.pending is None and s.step == "roll" and any(_shared_group(s, g) for g in STREET_GROUPS)


def _shared_group(s, group: str) -> bool:
    sites = [s.sites[q] for q in GROUPS[group]]
    return (
        all(site.owner is not None and not site.mortgaged for site in sites) and len({site.owner for site in sites}) > 1
    )


class Table:
    """One seeded Monopoly game over HTTP with a guest in every seat, mirrored by a ``Local`` game."""

    def __init__(self, api, game_id: str, tokens: list[str], local: Local) -> None:
        self.api, self.game_id, self.tokens, self.local = api, game_id, tokens, local

    @classmethod
    async def open(cls, api, seed: bytes = SEED, **options) -> Table:
        body = {"kind": "monopoly", "seats": SEATS, "seed": seed.hex(), "options": options}
        r = await api.post("/games", json=body, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        tokens = []
        for i in range(SEATS):
            r = await api.post(f"/games/{game_id}/seats", json={"name": f"Player {i}"})
            assert r.status_code == 201 and r.json()["seat"] == i, r.text
            tokens.append(r.json()["token"])
        return cls(api, game_id, tokens, Local(seed, **options))

    async def view(self, seat: int | None = None) -> dict:
        r = await self.api.get(f"/games/{self.game_id}", headers=bearer(self.tokens[seat]) if seat is not None else {})
        assert r.status_code == 200, r.text
        return r.json()

    async def post(self, seat: int, body: dict):
        return await self.api.post(f"/games/{self.game_id}/commands", json=body, headers=bearer(self.tokens[seat]))

    async def send(self, seat: int, command: msgspec.Struct) -> dict:
        """``command`` from ``seat``: accepted over HTTP with the very events it yields in memory."""
        version = self.local.s.version
        expected = self.local.play(seat, command)
        r = await self.post(seat, dict(msgspec.to_builtins(command), expected_version=version))
        assert r.status_code == 200, f"{command} from seat {seat} → {r.status_code} {r.text}"
        answer = r.json()
        assert [e["type"] for e in answer["events"]] == expected
        return answer

    async def refused(self, seat: int, command: msgspec.Struct | dict, code: str, status: int = 422) -> dict:
        """``command`` from ``seat`` is refused with ``code`` and the log does not move."""
        if isinstance(command, msgspec.Struct):
            assert self.local.refusal(seat, command) == code
            command = msgspec.to_builtins(command)
        before = await log_of(self.api, self.game_id)
        error = assert_error(await self.post(seat, command), status, code)
        assert await log_of(self.api, self.game_id) == before, f"{command} was refused but the log changed"
        return error

    async def play_until(self, done, policy=buy_everything, limit: int = 400) -> None:
        for _ in range(limit):
            if done(self.local.s):
                return
            await self.send(*policy(self.local.s))
        raise AssertionError(f"the position was not reached within {limit} commands")

    async def gather(self, group: str) -> int:
        """The owner of the group's first site buys the rest from their owners for $1 each; that owner."""
        s = self.local.s
        taker = s.sites[GROUPS[group][0]].owner
        for q in GROUPS[group]:
            owner = self.local.s.sites[q].owner
            if owner == taker:
                continue
            offer = await self.send(
                taker, ev.OfferTrade(to=owner, give=ev.Holdings(cash=1), get=ev.Holdings(squares=(q,)))
            )
            trade = offer["events"][0]["public"]["trade"]
            await self.send(owner, ev.AcceptTrade(trade=trade))
        assert all(self.local.s.sites[q].owner == taker for q in GROUPS[group])
        return taker


def _group_to_gather(s) -> str:
    return next(g for g in STREET_GROUPS if _shared_group(s, g))


# --- a whole game, server bots in every seat ---------------------------------------------------------------


async def _finished(api, game_id: str, seconds: float) -> dict:
    end = time.monotonic() + seconds
    while True:
        r = await api.get(f"/games/{game_id}")
        v = r.json()
        if v["status"] == "finished":
            return v
        assert time.monotonic() < end, f"the bots did not finish within {seconds}s: round {v['round']}"
        await asyncio.sleep(0.1)


async def _bot_game(api, bots: tuple[str, ...], **options) -> dict:
    r = await api.post("/games", json={"kind": "monopoly", "seats": len(bots), "options": options})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    for name in bots:
        r = await api.post(f"/games/{game_id}/seats", json={"bot": name})
        assert r.status_code == 201, r.text
    return await _finished(api, game_id, 120)


async def test_four_server_bots_play_monopoly_to_a_winner_and_the_export_verifies(api):
    v = await _bot_game(api, ("strategic", "random", "random", "strategic"), max_rounds=12)
    game_id = v["game_id"]
    assert v["winner"] is not None and v["end_reason"] in ("max_rounds", "last_player") and v["legal"] == []
    assert v["round"] <= 12
    r = await api.get(f"/games/{game_id}/export")
    assert r.status_code == 200, r.text
    header, envelopes = load(r.content)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided and verdict.secrets_checked == 1, verdict.summary()
    assert [e.type for e in envelopes[-2:]] == ["game_ended", "seed_revealed"]
    ended = msgspec.json.decode(envelopes[-2].public)
    assert ended["winner"] == v["winner"] and ended["worth"][v["winner"]] == max(ended["worth"])
    assert all(
        e.actor == "server" or (e.command_id or "").startswith(("bot:", "timeout:")) for e in envelopes if e.command_id
    )
    audit = (await api.get(f"/games/{game_id}/audit")).text.splitlines()
    assert len(audit) == len(envelopes) and f"seat {v['winner']} wins" in audit[-2]


async def test_without_max_rounds_a_strategic_bot_plays_on_until_one_player_is_left(api):
    """Four strategic bots may trade nothing and build nothing for thousands of rounds (none will sell another the
    last site of a group); against a random bot a strategic one ends a two-player game within a few hundred events."""
    v = await _bot_game(api, ("strategic", "random"))
    assert v["end_reason"] == "last_player" and v["max_rounds"] is None
    loser = 1 - v["winner"]
    assert v["seats"][loser]["bankrupt"] and not v["seats"][v["winner"]]["bankrupt"]
    header, envelopes = load((await api.get(f"/games/{v['game_id']}/export")).content)
    assert verify(header, envelopes).ok
    assert msgspec.json.decode(envelopes[-2].public)["worth"][loser] == 0


# --- bad inputs -------------------------------------------------------------------------------------------


async def test_every_bad_monopoly_input_is_a_422_with_its_rule_and_appends_nothing(api):
    t = await Table.open(api)
    await t.play_until(lambda s: s.offer is not None and s.offer.kind == "buy")
    buyer, square = t.local.s.offer.seat, t.local.s.offer.square
    other = (buyer + 1) % SEATS
    await t.refused(other, ev.Roll(), "not_your_turn")

    # buying what you cannot afford: the buyer first gives away all but $1 short of the price
    price = SQUARES[square].price
    spare = t.local.s.seats[buyer].cash - price + 1
    offer = await t.send(buyer, ev.OfferTrade(to=other, give=ev.Holdings(cash=spare)))
    await t.send(other, ev.AcceptTrade(trade=offer["events"][0]["public"]["trade"]))
    assert t.local.s.seats[buyer].cash == price - 1
    await t.refused(buyer, ev.Buy(), "cannot_afford")

    # a bid below (or at) the current one
    await t.send(buyer, ev.Decline())
    await t.send(other, ev.Bid(amount=100))
    bidder = (other + 1) % SEATS
    await t.refused(bidder, ev.Bid(amount=99), "bid_too_low")
    await t.refused(bidder, ev.Bid(amount=100), "bid_too_low")
    await t.play_until(lambda s: s.auction is None)
    assert t.local.s.sites[square].owner == other

    # a trade offering what you do not own, building without the whole group, building unevenly
    await t.play_until(street_group_owned)
    group = _group_to_gather(t.local.s)
    first, *rest = GROUPS[group]
    owner = t.local.s.sites[first].owner
    someone_elses = next(q for q in rest if t.local.s.sites[q].owner != owner)
    await t.refused(
        owner, ev.OfferTrade(to=(owner + 1) % SEATS, give=ev.Holdings(squares=(someone_elses,))), "not_owner"
    )
    await t.refused(owner, ev.Build(sites=(first,)), "group_incomplete")
    assert await t.gather(group) == owner
    await t.refused(owner, ev.Build(sites=(first, first)), "uneven_building")
    answer = await t.send(owner, ev.Build(sites=tuple(GROUPS[group])))
    assert [site["level"] for site in answer["view"]["board"] if site["square"] in GROUPS[group]] == [1] * len(
        GROUPS[group]
    )

    # another kind's command, and bodies that are no command at all
    await t.refused(owner, {"type": "feed_meter", "card": "M20-1"}, "wrong_kind")
    await t.refused(owner, {"type": "bid", "amount": "a lot"}, "invalid_command", status=400)
    await t.refused(owner, {"type": "build", "sites": [40]}, "invalid_command", status=400)
    before = await log_of(api, t.game_id)
    r = await api.post(f"/games/{t.game_id}/commands", content=b"{not json", headers=bearer(t.tokens[owner]))
    assert_error(r, 400, "malformed_json")
    assert await log_of(api, t.game_id) == before


# --- out of turn ------------------------------------------------------------------------------------------


async def test_bids_builds_mortgages_and_trades_out_of_turn_leave_the_turn_where_it_was(api):
    t = await Table.open(api)
    await t.play_until(lambda s: s.offer is not None and s.offer.kind == "buy")
    turn = t.local.s.turn_seat
    await t.send(turn, ev.Decline())
    bidder = (turn + 2) % SEATS
    answer = await t.send(bidder, ev.Bid(amount=10))  # an auction is open to every player, whoever's turn it is
    assert answer["view"]["turn_seat"] == turn and answer["view"]["auction"]["high_seat"] == bidder
    await t.play_until(lambda s: s.auction is None)

    await t.play_until(street_group_owned)
    turn = t.local.s.turn_seat
    where = _turn_of(await t.view(turn))
    group = _group_to_gather(t.local.s)
    owner = t.local.s.sites[GROUPS[group][0]].owner
    assert owner != turn, "the test wants the builder out of turn: choose a SEED whose first shared group is another's"
    assert await t.gather(group) == owner  # trades offered and answered out of turn
    assert _turn_of(await t.view(turn)) == where
    answer = await t.send(owner, ev.Build(sites=(GROUPS[group][0],)))
    assert _turn_of(answer["view"]) == where
    mortgager = next(i for i in range(SEATS) if i not in (turn, owner) and _idle_site(t.local.s, i) is not None)
    answer = await t.send(mortgager, ev.Mortgage(square=_idle_site(t.local.s, mortgager)))
    assert _turn_of(answer["view"]) == where
    open_offer = await t.send(mortgager, ev.OfferTrade(to=owner, give=ev.Holdings(cash=5), get=ev.Holdings(cash=1)))

    v = await t.view(turn)
    assert _turn_of(v) == where and v["pending"]["kind"] == "trade"
    assert {"type": "roll"} in v["legal"], "an open trade holds up no one's turn"
    answer = await t.send(turn, ev.Roll())
    assert answer["events"][0]["type"] == "dice_rolled" and answer["events"][0]["public"]["seat"] == turn
    await t.send(owner, ev.RejectTrade(trade=open_offer["events"][0]["public"]["trade"]))


def _turn_of(v: dict) -> tuple:
    """Where the turn stands: whose it is, what they do next, their square and doubles so far."""
    mover = v["seats"][v["turn_seat"]]
    return v["turn_seat"], v["step"], v["doubles"], mover["position"], mover["in_jail"]


def _idle_site(s, seat: int) -> int | None:
    """A property of ``seat`` it may mortgage now."""
    return next((c.square for c in rules_for("monopoly").legal_commands(s, seat) if type(c) is ev.Mortgage), None)


# --- deadlines --------------------------------------------------------------------------------------------


async def _events_until(api, game_id: str, done, seconds: float = 10.0) -> list[dict]:
    end = time.monotonic() + seconds
    while True:
        _, _, events = await log_of(api, game_id)
        if done(events):
            return events
        assert time.monotonic() < end, "the server did not act in time"
        await asyncio.sleep(0.05)


async def test_an_auction_and_a_trade_offer_nobody_answers_are_closed_by_the_server_at_their_deadline(api):
    t = await Table.open(api, response_seconds=2)
    await t.play_until(lambda s: s.offer is not None and s.offer.kind == "buy")
    turn, square = t.local.s.turn_seat, t.local.s.offer.square
    await t.send(turn, ev.Decline())
    bid = await t.send((turn + 1) % SEATS, ev.Bid(amount=25))
    pending = bid["view"]["pending"]
    assert pending["kind"] == "auction" and len(pending["seats"]) == SEATS - 1  # every other bidder is awaited

    events = await _events_until(api, t.game_id, lambda es: any(e["type"] == "auction_closed" for e in es))
    closed = next(e for e in events if e["type"] == "auction_closed")
    assert closed["seq"] == bid["version"] + 1 and closed["command"] == {"type": "timeout"}
    assert closed["command_id"] == f"timeout:{t.game_id}:{bid['version']}" and closed.get("actor", "server") == "server"
    assert closed["at"] >= pending["deadline_at"]
    assert closed["public"] == {"type": "auction_closed", "lot": square, "winner": (turn + 1) % SEATS, "amount": 25}
    v = await t.view()
    assert v["board"][square]["owner"] == (turn + 1) % SEATS and v["auction"] is None

    # the trade offer: made, left unanswered, expired by the server; the game goes on
    version = v["version"]
    turn = v["turn_seat"]
    offerer, to = (turn + 1) % SEATS, (turn + 2) % SEATS
    r = await t.post(offerer, {"type": "offer_trade", "to": to, "give": {"cash": 10}, "expected_version": version})
    assert r.status_code == 200, r.text
    offer = r.json()
    trade = offer["events"][0]["public"]["trade"]
    assert offer["view"]["pending"] == {
        "kind": "trade",
        "seat": to,
        "seats": [to],
        "deadline_at": offer["events"][0]["public"]["deadline_at"],
    }
    events = await _events_until(api, t.game_id, lambda es: any(e["type"] == "trade_closed" for e in es))
    expired = next(e for e in events if e["type"] == "trade_closed")
    assert expired["public"] == {"type": "trade_closed", "trade": trade, "why": "expired"}
    assert expired["command_id"] == f"timeout:{t.game_id}:{offer['version']}"
    assert expired["at"] >= offer["view"]["pending"]["deadline_at"]
    assert (await t.view())["trades"] == []
    r = await api.get(f"/games/{t.game_id}/export", headers=ADMIN_HEADERS)
    header, envelopes = load(r.content)
    verdict = verify(header, envelopes)
    assert verdict.ok and verdict.redecided, verdict.summary()
