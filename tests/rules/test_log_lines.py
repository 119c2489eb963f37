"""The move log's words (engine.log_lines, each kind's ``Log``): names, what a deadline decided and for whom, the
dice that sent someone to jail. The HTTP side (GET /games/{id}/log) is tests/api/test_move_log.py."""

from __future__ import annotations

import hashlib
import random
import re

from service.bots import bot, next_move
from service.events import free_parking as ev
from service.events import monopoly as mev
from service.events import solitaire as sev
from service.events.base import Player
from service.events.common import Create, SeatTaken, TakeSeat, Timeout
from service.rules.engine import Game, audit_lines, log_lines, rules_for
from service.rules.free_parking.audit import summary
from tests.api.helpers import TIME_EXPIRES_SEED
from tests.rules.monopoly_table import table


def seated(kind: str, seed: bytes, names: list[tuple[str, str | None]], **config) -> tuple[Game, list]:
    game = Game.new(kind, "g_log", rules_for(kind).CONFIG(seats=len(names), **config), seed)
    envelopes = game.play(Create(), None, 1)
    for k, (name, as_bot) in enumerate(names):
        envelopes += game.play(TakeSeat(player=Player(name=name, player_id=f"g_{k}", bot=as_bot)), None, 1)
    return game, envelopes


def test_a_deadline_says_what_it_accepted_on_whose_behalf():
    game, envelopes = seated("free-parking", bytes.fromhex(TIME_EXPIRES_SEED()), [("Ann", None), ("Greedy Gus", "greedy")])
    for seat in (1, 0):
        hand = game.state.seats[seat].hand
        envelopes += game.play(ev.FeedMeter(card=next(c for c in hand if c.startswith("M"))), seat, 1)
        envelopes += game.play(ev.EndTurn(), seat, 1)
    te = next(c for c in game.state.seats[1].hand if c.startswith("TE-"))
    envelopes += game.play(ev.TimeExpires(card=te, target=0), 1, 1)
    envelopes += game.play(Timeout(), None, game.state.pending.deadline_at)
    lines = log_lines(game.rules, envelopes, player_id="g_0")
    words = [w for _, _, w, _ in lines]
    assert "Greedy Gus plays Time Expires on Ann" in words
    assert "waiting for Ann to talk their way out of Time Expires from Greedy Gus, or accept" in words
    assert "time ran out: Ann accepted Time Expires from Greedy Gus" in words
    zeroed = next(line for line in lines if line[2].startswith("Ann's meter goes to 0"))
    assert zeroed[3] == "Your meter was set to 0 (Violation): Greedy Gus's Time Expires"
    assert all(n is None for _, _, _, n in log_lines(game.rules, envelopes))  # nobody's notices without a player
    assert any("seat 0 accepts (deadline passed; the server accepted)" in line for line in audit_lines(game.rules, envelopes))


def test_monopoly_dice_say_who_rolled_and_when_the_roll_sent_them_to_jail():
    for i in range(50):
        game, envelopes = seated("monopoly", hashlib.sha256(b"m%d" % i).digest(), [("Ann", None), ("Strategic Stan", "strategic")],
                                 max_rounds=30)
        players, rnd = [bot("monopoly", "strategic") for _ in range(2)], random.Random(1)
        while game.rules.status_of(game.state) != "finished":
            seat, command = next_move(game.rules, game.state, players, rnd)
            envelopes += game.play(command, seat, 2)
        lines = log_lines(game.rules, envelopes, player_id="g_0")
        jailed = [line for line in lines if "sent to jail" in line[2]]
        if jailed:
            break
    else:
        raise AssertionError("no game sent anyone to jail")
    assert all(w.startswith(("Ann rolls", "Strategic Stan rolls")) for _, _, w, _ in jailed), jailed
    rolls = [w for _, _, w, _ in lines if " rolls " in w]
    assert rolls and all(w.startswith(("Ann ", "Strategic Stan ")) for w in rolls)
    assert not any("seat 0" in w or "seat 1" in w for _, _, w, _ in lines if "takes seat" not in w)
    for seq, _, words, notice in lines:
        if words.startswith("Ann goes to jail"):
            assert notice and notice.startswith("You go to jail"), (seq, words, notice)


# --- Monopoly's deadlines: what each decided, and for whom --------------------------------------------------------


class Told:
    """A Monopoly ``Table`` whose every batch is also read by a move ``Log``, as log_lines reads it: the first event
    of a batch a ``Timeout`` made is the one told ``timed_out``. Seat i is ``names[i]``."""

    def __init__(self, t, names: list[str], me: int | None = None) -> None:
        from service.rules.monopoly.audit import Log

        self.t, self.log, self.lines, self.me, self.notices = t, Log(), [], me, []
        for seat, name in enumerate(names):
            self.log.line(SeatTaken(seat=seat, player=Player(name=name, player_id=f"g_{seat}")), [])

    def play(self, command, seat: int | None) -> Told:
        self.t.play(command, seat)
        return self._tell(timed_out=False)

    def timeout(self) -> Told:
        self.t.timeout()
        return self._tell(timed_out=True)

    def _tell(self, timed_out: bool) -> Told:
        events = self.t.events
        self.lines, self.notices = [], []
        for i, e in enumerate(events):  # as log_lines: the notice is read before the line moves the log on
            self.notices.append(self.log.notice(e, self.me) if self.me is not None else None)
            self.lines.append(self.log.line(e, events[i + 1 :], timed_out=timed_out and i == 0))
        return self

    def told(self) -> list[str]:
        return [n for n in self.notices if n]


def test_monopoly_a_purchase_deadline_says_who_did_not_buy_before_the_auction_opens():
    t = Told(table(3).dice(1, 2), ["Ann", "Bob", "Cy"])
    t.play(mev.Roll(), 0)
    assert "Ann may buy Baltic Avenue for $60" in t.lines
    t.timeout()
    assert t.lines[0] == "time ran out: Ann did not buy Baltic Avenue; auction of Baltic Avenue opens to Ann, Bob and Cy"


def test_monopoly_an_income_tax_deadline_says_the_server_chose_the_flat_tax_for_the_player():
    t = Told(table().dice(1, 3), ["Ann", "Bob"]).play(mev.Roll(), 0).timeout()
    assert t.lines[0] == "time ran out: for Ann, the server chose the flat Income Tax: $200"
    assert not any(line.startswith("time ran out") for line in t.lines[1:])


def test_monopoly_an_auction_deadline_says_the_bidding_ended_at_the_high_bid():
    t = Told(table(3).dice(1, 2), ["Ann", "Bob", "Cy"]).play(mev.Roll(), 0).play(mev.Decline(), 0)
    t.play(mev.Bid(amount=25), 2).timeout()
    assert t.lines[0] == "time ran out: the bidding ends: auction of Baltic Avenue won by Cy for $25"


def test_monopoly_a_shortage_deadline_says_who_claimed_nothing():
    t = Told(table(3, own={0: (6, 8, 9), 1: (16, 18, 19)}, houses=2), ["Ann", "Bob", "Cy"])
    t.play(mev.Build(sites=(6, 8, 9)), 0).timeout()
    assert t.lines[0].startswith("time ran out: the claims are closed (Bob claimed nothing): "), t.lines


def test_monopoly_a_debt_deadline_says_who_did_not_raise_what_and_was_declared_bankrupt():
    t = Told(table(3, own={1: (37, 39)}, levels={37: 5, 39: 5}, at={0: 35}, cash={0: 100}).dice(1, 1), ["Ann", "Bob", "Cy"])
    t.play(mev.Roll(), 0)
    assert any(line.startswith("Ann owes Bob $1500") for line in t.lines), t.lines
    t.timeout()
    assert t.lines[0].startswith("time ran out: Ann did not raise the $1500 owed to Bob, so the server declared them bankrupt: ")
    assert "Ann goes bankrupt to Bob" in t.lines


def test_monopoly_a_trade_deadline_says_who_did_not_answer():
    t = Told(table(own={0: (1,)}), ["Ann", "Bob"])
    t.play(mev.OfferTrade(to=1, give=mev.Holdings(squares=(1,)), get=mev.Holdings(cash=100)), 0).timeout()
    assert t.lines == ["time ran out: Bob did not answer: Ann's trade offer to Bob expired"]


def test_monopoly_a_deadline_over_http_envelopes_is_told_from_the_timeout_command():
    """log_lines reads the Timeout from the envelope's command: the same words as the Log is told directly."""
    for i in range(200):
        game, envelopes = seated("monopoly", hashlib.sha256(b"buy%d" % i).digest(), [("Ann", None), ("Bob", None)])
        envelopes += game.play(mev.Roll(), 0, 1)
        if game.state.pending is not None and game.state.pending.kind == "buy":
            break
    else:
        raise AssertionError("no seed offered a purchase on the first roll")
    envelopes += game.play(Timeout(), None, game.state.pending.deadline_at)
    words = [w for _, _, w, _ in log_lines(game.rules, envelopes)]
    ran_out = [w for w in words if w.startswith("time ran out: ")]
    assert len(ran_out) == 1 and ran_out[0].startswith("time ran out: Ann did not buy "), words
    assert " opens to Ann and Bob" in ran_out[0]


# --- solitaire: the page's words ------------------------------------------------------------------------------------


def test_solitaire_log_says_moves_in_the_pages_words_redeals_stuck_undo_and_resign():
    """Cards as the page shows them (2♣, 10♥), rows from 1 as the page's "Row 1–4", never the audit's raw ids and
    rows from 0; a move that leaves nothing to do says the game is stuck; an undo names the move it takes back."""
    game, envelopes = seated("solitaire", hashlib.sha256(b"s0").digest(), [("Ann", None)])
    rnd = random.Random(0)
    for step in range(400):
        if game.state.stuck:
            break
        legal = game.rules.legal_commands(game.state, 0)
        moves = [c for c in legal if isinstance(c, sev.Move)]
        redeal = next((c for c in legal if isinstance(c, sev.Redeal)), None)
        envelopes += game.play(redeal if redeal and (not moves or step in (40, 80)) else rnd.choice(moves), 0, 1)
    assert game.state.stuck
    envelopes += game.play(sev.Undo(), 0, 1)
    envelopes += game.play(sev.Resign(), 0, 1)
    words = [w for _, _, w, _ in log_lines(game.rules, envelopes, player_id="g_0")]
    assert "Ann sits down to play" in words
    moved = [w for w in words if w.startswith("Ann moves ")]
    card, place = r"(10|[2-9JQK])[♣♦♥♠]", r"row [1-4], slot (1[0-3]|[1-9])"
    assert moved and all(re.fullmatch(rf"Ann moves {card} from {place} to {place}(: stuck.*)?", w) for w in moved), moved
    assert any(" row 4," in w for w in moved) and not any("row 0" in w for w in words)
    assert "Ann redeals (1 of 2): the cards not in a run are shuffled and dealt again" in words
    assert "Ann redeals (2 of 2): the cards not in a run are shuffled and dealt again" in words
    stuck = [w for w in words if "stuck" in w]
    assert stuck == [moved[-1]] and stuck[0].endswith(": stuck — no card fits any gap and no redeal is left; undo or resign")
    last = re.fullmatch(rf"Ann moves (?P<card>{card}) from {place} to (?P<to>{place}): stuck.*", moved[-1])
    assert words[-3] == f"Ann undoes the move of {last['card']} to {last['to']}", words[-4:]
    assert re.fullmatch(r"Ann resigns with \d+ of 48 cards in their runs", words[-2]), words[-2:]
    assert not any(re.search(r"\b[2-9TJQKA][CDHS]\b", w) for w in words)  # no raw card id


def test_solitaire_log_words_for_a_win_a_redeal_undone_and_a_ten():
    from service.rules.solitaire.audit import Log, card_words

    log = Log()
    log.line(SeatTaken(seat=0, player=Player(name="Solver Sol", player_id="b", bot="solver")), [])
    assert card_words("TH") == "10♥" and card_words("2C") == "2♣" and card_words("KS") == "K♠"
    assert log.line(sev.Undone(undoes=99, step="redealt", layout=()), []) == "Solver Sol undoes the redeal"
    assert log.line(sev.GameWon(redeals_used=1), []) == "Solver Sol wins: every row runs 2 to king (1 redeal used)"


# --- notices: what an event did to the reader ----------------------------------------------------------------------


def card_game_log(*names: str):
    from service.rules.free_parking.audit import Log

    log = Log()
    for seat, name in enumerate(names):
        log.line(SeatTaken(seat=seat, player=Player(name=name, player_id=f"g_{seat}")), [])
    return log


def told(log, events, me: int) -> list[str | None]:
    out = []
    for e in events:
        out.append(log.notice(e, me))
        log.line(e, [])
    return out


def test_a_point_card_taken_by_second_chance_is_told_to_whom_it_was_taken_from_only():
    events = [ev.SecondChanceDrawn(seat=1, card="SC-take_point-1", effect="take_point"),
              ev.PointCardMoved(seat=0, card="P20-1", to=1, cause="SC-take_point-1")]
    assert told(card_game_log("Ann", "Greedy Gus"), events, 0)[-1] == (
        "Greedy Gus took your Point 20 (Second Chance “take a Point card, unseen” from Greedy Gus)")
    assert told(card_game_log("Ann", "Greedy Gus"), events, 1) == [None, None]  # the taker did it: their log says so


def test_a_point_card_lost_to_officer_jones_or_given_away_is_told_and_ones_own_loss_is_not():
    jones = [ev.OfficerJonesPlayed(seat=1, card="OJ-2", target=0, out_of_turn=True),
             ev.PointCardMoved(seat=0, card="P40-1", cause="OJ-2")]
    assert told(card_game_log("Ann", "Bob"), jones, 0)[-1] == "Your Point 40 went to the discard pile (Officer Jones from Bob)"
    given = [ev.SecondChanceDrawn(seat=0, card="SC-give_point-1", effect="give_point"),
             ev.PointCardMoved(seat=0, card="P20-3", to=1, cause="SC-give_point-1")]
    assert told(card_game_log("Ann", "Bob"), given, 0)[-1] == "You gave Bob your Point 20 (your own Second Chance “give a Point card”)"
    lost = [ev.SecondChanceDrawn(seat=0, card="SC-lose_point-1", effect="lose_point"),
            ev.PointCardMoved(seat=0, card="P20-3", cause="SC-lose_point-1")]
    assert told(card_game_log("Ann", "Bob"), lost, 0) == [None, None]


def test_monopoly_notices_a_trade_offered_to_you_and_your_offer_accepted_or_rejected():
    give, get = mev.Holdings(squares=(1,)), mev.Holdings(cash=100)
    bob = Told(table(own={0: (1,)}), ["Ann", "Bob"], me=1)
    bob.play(mev.OfferTrade(to=1, give=give, get=get), 0)
    assert bob.told() == ["Ann offers you a trade: Mediterranean Avenue for $100"]
    ann = Told(table(own={0: (1,)}), ["Ann", "Bob"], me=0)
    assert ann.play(mev.OfferTrade(to=1, give=give, get=get), 0).told() == []  # her own offer: no notice to her
    trade = ann.t.of(mev.TradeOffered)[0].trade
    assert ann.play(mev.RejectTrade(trade=trade), 1).told() == ["Bob rejected your trade offer"]
    ann.play(mev.OfferTrade(to=1, give=give, get=get), 0)
    trade = ann.t.of(mev.TradeOffered)[0].trade
    assert ann.play(mev.AcceptTrade(trade=trade), 1).told() == ["Bob accepted your trade offer"]
    cy = Told(table(3, own={0: (1,)}), ["Ann", "Bob", "Cy"], me=2)  # another player's trade: nothing to Cy
    cy.play(mev.OfferTrade(to=1, give=give, get=get), 0)
    assert cy.told() == [] and cy.play(mev.RejectTrade(trade=cy.t.of(mev.TradeOffered)[0].trade), 1).told() == []


def test_monopoly_notices_being_sent_to_jail_and_going_bankrupt():
    jailed = Told(table(at={0: 25}).dice(2, 3), ["Ann", "Bob"], me=0).play(mev.Roll(), 0)
    assert jailed.told() == ["You go to jail (landed on Go To Jail)"]
    assert Told(table(at={0: 25}).dice(2, 3), ["Ann", "Bob"], me=1).play(mev.Roll(), 0).told() == []
    broke = Told(table(3, own={1: (37, 39)}, levels={37: 5, 39: 5}, at={0: 35}, cash={0: 100}).dice(1, 1),
                 ["Ann", "Bob", "Cy"], me=0)
    assert broke.play(mev.Roll(), 0).timeout().told() == ["You are bankrupt"]


def test_a_fan_of_one_point_card_is_told_in_the_singular():
    """A count reads as a person says it: "1 Point card is fanned", never "1 Point cards are"."""
    assert summary(ev.PointCardsFanned(seat=0, count=1)) == "seat 0's 1 Point card fanned face down"
    assert summary(ev.PointCardsFanned(seat=0, count=3)) == "seat 0's 3 Point cards fanned face down"
