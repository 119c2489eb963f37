"""A turn: the dice, the move, the square landed on, the cards, jail, and passing the turn on.

Dice come from the seeded RNG, roll ``n`` of the game from stream ``dice:<n>``, so a replay throws the same.
"""

from __future__ import annotations

from service.events import monopoly as ev
from ..setup import reveal_seed

from ..errors import RuleViolation
from ..rng import Stream
from .auctions import open_auction, property_bidders
from .batch import Batch
from .board import GO_SALARY, JAIL_FINE, JAIL_TRIES, SQUARES, nearest
from .cards import CARDS, deck_of
from .money import buildings_of, charge
from .rent import Via, rent
from .state import State
from .worth import final_worth, tax_worth

THREE_DOUBLES = 3


def throw(b: Batch, seat: int, purpose: str) -> tuple[int, int]:
    n = b.state.rolls + 1
    stream = Stream(b.state.rng_seed, f"dice:{n}")
    dice = (stream.below(6) + 1, stream.below(6) + 1)
    b.emit(ev.DiceRolled(seat=seat, n=n, dice=dice, purpose=purpose))  # type: ignore[arg-type]
    return dice


# --- before the roll ----------------------------------------------------------------------------------


def check_roll(s: State, seat: int) -> None:
    if seat != s.turn_seat:
        raise RuleViolation("not_your_turn", f"It is seat {s.turn_seat}'s turn", turn_seat=s.turn_seat)
    if s.step != "roll":
        raise RuleViolation("not_now", "Your move is still being settled")
    if s.blocked:
        raise RuleViolation(
            "waiting",
            "The game waits on an answer first",
            pending=s.pending.kind if s.pending else None,
        )


def roll(b: Batch, seat: int) -> None:
    check_roll(b.state, seat)
    if b.state.seats[seat].in_jail:
        _jail_roll(b, seat)
        return
    dice = throw(b, seat, "move")
    if b.state.doubles >= THREE_DOUBLES:
        send_to_jail(b, seat, "doubles")
        return
    move_by(b, seat, sum(dice))


def check_jail_exit(s: State, seat: int) -> None:
    check_roll(s, seat)
    if not s.seats[seat].in_jail:
        raise RuleViolation("not_in_jail", "You are not in jail")


def pay_fine(b: Batch, seat: int) -> None:
    check_jail_exit(b.state, seat)
    if b.state.seats[seat].cash < JAIL_FINE:
        raise RuleViolation("cannot_afford", f"The fine is ${JAIL_FINE}")
    b.emit(ev.Paid(payer=seat, payee=None, amount=JAIL_FINE, reason="fine"))
    b.emit(ev.LeftJail(seat=seat, how="fine"))


def use_jail_card(b: Batch, seat: int) -> None:
    check_jail_exit(b.state, seat)
    cards = b.state.seats[seat].jail_cards
    if not cards:
        raise RuleViolation("no_jail_card", "You hold no Get Out of Jail Free card")
    b.emit(ev.LeftJail(seat=seat, how="card", card=cards[0]))
    b.emit(ev.JailCardReturned(seat=seat, card=cards[0], deck=deck_of(cards[0])))  # type: ignore[arg-type]


def _jail_roll(b: Batch, seat: int) -> None:
    """Doubles: out, moving by them (and no roll again). Else a failed try; after the third, pay $50 and move."""
    dice = throw(b, seat, "jail")
    if dice[0] == dice[1]:
        b.emit(ev.LeftJail(seat=seat, how="doubles"))
        move_by(b, seat, sum(dice))
        return
    attempt = b.state.seats[seat].jail_tries + 1
    b.emit(ev.JailRollFailed(seat=seat, attempt=attempt))
    if attempt >= JAIL_TRIES:
        charge(b, seat, None, JAIL_FINE, "fine")
        b.emit(ev.LeftJail(seat=seat, how="forced_fine"))
        move_by(b, seat, sum(dice))


def send_to_jail(b: Batch, seat: int, why: str) -> None:
    """Straight to jail, no salary; the turn ends (``again`` is cleared)."""
    b.emit(ev.SentToJail(seat=seat, why=why))  # type: ignore[arg-type]


# --- moving and landing -----------------------------------------------------------------------------


def move_by(b: Batch, seat: int, steps: int) -> None:
    start = b.state.seats[seat].position
    to = (start + steps) % 40
    b.emit(
        ev.Moved(
            seat=seat,
            from_=start,
            to=to,
            salary=GO_SALARY if start + steps >= 40 else 0,
        )
    )
    land(b, seat)


def advance_to(b: Batch, seat: int, to: int, via: Via = "dice") -> None:
    """Forward to ``to``, with the salary if that passes (or lands on) GO."""
    start = b.state.seats[seat].position
    b.emit(ev.Moved(seat=seat, from_=start, to=to, salary=GO_SALARY if to <= start else 0))
    land(b, seat, via)


def land(b: Batch, seat: int, via: Via = "dice") -> None:
    s = b.state
    q = s.seats[seat].position
    kind = SQUARES[q].type
    if kind == "go_to_jail":
        send_to_jail(b, seat, "square")
    elif kind == "income_tax":
        b.emit(ev.TaxChoiceAwaited(seat=seat, deadline_at=b.deadline))
    elif kind == "luxury_tax":
        charge(b, seat, None, SQUARES[q].tax, "tax", q)
    elif kind in ("chance", "community_chest"):
        draw(b, seat, "chance" if kind == "chance" else "chest")
    elif SQUARES[q].is_property:
        _land_on_property(b, seat, q, via)


def _land_on_property(b: Batch, seat: int, q: int, via: Via) -> None:
    site = b.state.sites[q]
    if site.owner is None:
        b.emit(ev.PurchaseOffered(seat=seat, square=q, price=SQUARES[q].price, deadline_at=b.deadline))
    elif site.owner != seat and not site.mortgaged:
        dice = b.state.last_dice
        if via == "card" and SQUARES[q].type == "utility":
            dice = throw(b, seat, "utility")
        charge(b, seat, site.owner, rent(b.state, q, sum(dice), via), "rent", q)


# --- the decks ---------------------------------------------------------------------------------------


def draw(b: Batch, seat: int, deck: str) -> None:
    """The top card, followed; it goes to the bottom (``evolve``), or stays in hand if it gets you out of jail."""
    cards = b.state.chance if deck == "chance" else b.state.chest
    card = CARDS[cards[0]]
    b.emit(ev.CardDrawn(seat=seat, deck=deck, card=card.id))  # type: ignore[arg-type]
    what, *args = card.effect
    if what == "advance":
        advance_to(b, seat, int(args[0]))
    elif what == "nearest":
        advance_to(b, seat, nearest(b.state.seats[seat].position, args[0]), "card")  # type: ignore[arg-type]
    elif what == "back":
        start = b.state.seats[seat].position
        b.emit(ev.Moved(seat=seat, from_=start, to=(start - int(args[0])) % 40))
        land(b, seat)
    elif what == "jail":
        send_to_jail(b, seat, "card")
    elif what == "collect":
        b.emit(ev.Paid(payer=None, payee=seat, amount=int(args[0]), reason="card"))
    elif what == "pay":
        charge(b, seat, None, int(args[0]), "card")
    elif what == "repairs":
        houses, hotels = buildings_of(b.state, seat)
        charge(b, seat, None, houses * int(args[0]) + hotels * int(args[1]), "card")
    elif what == "pay_each":
        for other in b.state.opponents(seat):
            charge(b, seat, other, int(args[0]), "card")
    elif what == "collect_each":
        for other in b.state.opponents(seat):
            charge(b, other, seat, int(args[0]), "card")


# --- the mover's decisions --------------------------------------------------------------------------


def _offer_to(s: State, seat: int, kind: str) -> None:
    o = s.offer
    if o is None or o.kind != kind:
        raise RuleViolation(
            "nothing_offered",
            "There is no purchase to decide" if kind == "buy" else "No tax is due",
        )
    if o.seat != seat:
        raise RuleViolation("not_your_turn", f"Seat {o.seat} decides this")


def check_buy(s: State, seat: int) -> int:
    _offer_to(s, seat, "buy")
    q = s.offer.square  # type: ignore[union-attr]
    price = SQUARES[q].price
    if s.seats[seat].cash < price:
        raise RuleViolation(
            "cannot_afford",
            f"{SQUARES[q].name} costs ${price}; you have ${s.seats[seat].cash}",
            price=price,
        )
    return q


def buy(b: Batch, seat: int) -> None:
    q = check_buy(b.state, seat)
    b.emit(ev.PropertyBought(seat=seat, square=q, price=SQUARES[q].price))


def decline(b: Batch, seat: int | None) -> None:
    """Not bought: the bank auctions it to everyone still in, the decliner too."""
    o = b.state.offer
    if seat is not None:
        _offer_to(b.state, seat, "buy")
    assert o is not None
    open_auction(b, o.square, property_bidders(b.state))


def choose_tax(b: Batch, seat: int | None, choice: str) -> None:
    """The choice first; only then is worth computed (for 10%), rounded down to a whole dollar."""
    o = b.state.offer
    if seat is not None:
        _offer_to(b.state, seat, "tax")
    assert o is not None
    worth = tax_worth(b.state, o.seat) if choice == "percent" else None
    amount = worth * 10 // 100 if worth is not None else SQUARES[4].tax
    b.emit(ev.IncomeTaxChosen(seat=o.seat, choice=choice, worth=worth, amount=amount))  # type: ignore[arg-type]
    charge(b, o.seat, None, amount, "tax", 4)


# --- after the move -----------------------------------------------------------------------------------


def finish_move(b: Batch) -> None:
    """Doubles roll again (unless jailed or out of the game); otherwise the turn passes."""
    s = b.state
    seat = s.turn_seat
    if s.again and not s.seats[seat].bankrupt and not s.seats[seat].in_jail:
        b.emit(ev.RollAgain(seat=seat, deadline_at=b.turn_deadline))
    else:
        end_turn(b)


def end_turn(b: Batch) -> None:
    """The turn passes to the next player still in; a round ends when play comes back round the table, and a
    timed game ends after its last round."""
    s = b.state
    b.emit(ev.TurnEnded(seat=s.turn_seat))
    live = s.live
    if len(live) <= 1:
        return
    after = [q for q in live if q > s.turn_seat]
    nxt = after[0] if after else live[0]
    round_ = s.round + (0 if after else 1)
    if s.config.max_rounds is not None and round_ > s.config.max_rounds:
        end_game(b, "max_rounds")
        return
    b.emit(ev.TurnBegan(seat=nxt, round=round_, deadline_at=b.turn_deadline))


def end_game(b: Batch, reason: str) -> None:
    s = b.state
    worth = tuple(0 if p.bankrupt else final_worth(s, i) for i, p in enumerate(s.seats))
    winner = max(s.live, key=lambda i: (worth[i], s.seats[i].cash, -i))
    b.emit(ev.GameEnded(winner=winner, reason=reason, worth=worth))  # type: ignore[arg-type]
    reveal_seed(b)
