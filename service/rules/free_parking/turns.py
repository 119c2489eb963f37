"""The card game's turn primitives, shared by every decision: the deal, a turn's start and end, a draw, a win and a
tournament round's end — and the ``Batch`` every decision is built in (``decide``, ``resolving``)."""

from __future__ import annotations

from service.events import free_parking as ev
from ..setup import reveal_seed

from .. import batch, rng
from . import cards, clock
from .evolve import evolve
from .state import State


class Batch(batch.Batch[State]):
    """The events of one decision, and the table they leave."""

    evolve = staticmethod(evolve)

    @property
    def over(self) -> bool:
        return self.state.phase == "finished"


def deal(b: Batch, round_: int, dealer: int) -> None:
    """Shuffle both decks, five cards each from the dealer's left, one at a time; the next seat plays first."""
    s = b.state
    sets = cards.sets_for(s.n)
    deck = rng.shuffle(s.rng_seed, f"deal:{round_}:playing", [c.id for c in cards.playing_deck(sets)])
    second = rng.shuffle(s.rng_seed, f"deal:{round_}:second_chance", [c.id for c in cards.second_chance_deck(sets)])
    hands: list[list[str]] = [[] for _ in range(s.n)]
    order = [(dealer + k) % s.n for k in range(1, s.n + 1) if not s.seats[(dealer + k) % s.n].forfeited]
    for _ in range(cards.DEAL_SIZE):
        for seat in order:
            hands[seat].append(deck.pop(0))
    secret = ev.DealSecret(hands=tuple(tuple(h) for h in hands), deck=tuple(deck), second_chance=tuple(second))
    b.emit(ev.RoundDealt(round=round_, dealer=dealer, hand_size=cards.DEAL_SIZE, secret=secret))
    begin_turn(b, clock.next_seat(s, dealer))


def begin_turn(b: Batch, seat: int) -> None:
    """A turn starts with the server drawing the player's hand up to six."""
    b.emit(ev.TurnBegan(seat=seat, turn=b.state.turn + 1, deadline_at=b.turn_deadline))
    draw(b, seat, cards.HAND_SIZE - len(b.state.seats[seat].hand), "turn")


def draw(b: Batch, seat: int, count: int, reason: str) -> None:
    """Draw from the playing deck; when it runs short, the discard pile is shuffled in under it."""
    s = b.state
    if len(s.deck) < count and s.discard:
        n = s.reshuffles + 1
        order = rng.shuffle(s.rng_seed, f"reshuffle:playing:{n}", s.discard)
        b.emit(ev.DeckReshuffled(deck="playing", count=len(order), reshuffle=n, secret=ev.OrderSecret(order=tuple(order))))
    take = b.state.deck[: max(count, 0)]
    if take or reason == "second_chance":
        b.emit(ev.CardsDrawn(seat=seat, count=len(take), reason=reason, secret=ev.CardsSecret(cards=take)))


def end_turn(b: Batch, after: int | None = None) -> None:
    """The turn passes to the next seat — or to ``after``, where a trade moved the player who was next."""
    seat = b.state.turn_seat
    b.emit(ev.TurnEnded(seat=seat))
    begin_turn(b, clock.next_seat(b.state, seat) if after is None else after)


def check_win(b: Batch, seat: int) -> None:
    """The moment a seat's Point cards total 200 or more, its player wins — on their turn or not. In tournament
    mode, 150 ends the round instead."""
    st = b.state.seats[seat]
    if st.forfeited:  # a resigned drawer may still be handed a Point card by its action: out, it wins nothing
        return
    if b.state.config.mode == "tournament":
        if st.score >= cards.ROUND_POINTS:
            end_round(b, seat)
    elif st.score >= cards.WINNING_POINTS:
        won(b, seat, st.score)


def won(b: Batch, seat: int, points: int) -> None:
    player = b.state.seats[seat].player
    assert player is not None
    b.emit(ev.GameWon(seat=seat, player=player, points=points))
    reveal_seed(b)


def end_round(b: Batch, seat: int) -> None:
    """Tournament: the seat that reached 150 scores its round total + 25, every other its round total. Once a
    cumulative total reaches 300 the highest wins; a tie at the top plays another round. Else the next seat deals."""
    s = b.state
    scores = tuple(st.score + (cards.ROUND_BONUS if i == seat else 0) for i, st in enumerate(s.seats))
    totals = tuple(st.total + score for st, score in zip(s.seats, scores, strict=True))
    b.emit(ev.RoundEnded(round=s.round, seat=seat, scores=scores, totals=totals))
    top = max(totals[i] for i in s.playing)  # a forfeited seat keeps its total, but wins nothing
    leaders = [i for i in s.playing if totals[i] == top]
    if top >= cards.TOURNAMENT_POINTS and len(leaders) == 1:
        won(b, leaders[0], top)
    else:
        deal(b, round_=s.round + 1, dealer=(s.dealer + 1) % s.n)
