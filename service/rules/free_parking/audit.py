"""One line of plain words per event, for audit logs: what happened, never what was hidden.

The summary reads only an event's public part, so the same words serve every reader; a reader
allowed to see the secret gets it appended by the caller (``secret_note``).
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import free_parking as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed

from .. import close
from ..setup import client_seed_note
from .cards import effect_of

_EFFECTS = {
    "take_point": "take a Point card from another player, unseen",
    "give_point": "give one of your Point cards to an opponent",
    "lose_point": "lose one of your Point cards",
    "trade_places": "trade places with another player",
    "add_20": "add 20 minutes",
    "add_40": "add 40 minutes",
    "set_60": "set your meter to 60",
    "minus_20": "take 20 minutes off your meter",
    "violation": "your meter goes to Violation",
    "all_minus_20": "every opponent takes 20 minutes off",
    "draw_2": "draw 2 playing cards",
}


@singledispatch
def summary(e: msgspec.Struct) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


@summary.register
def _(e: ev.GameCreated) -> str:
    c = e.config
    return f"game created: {c.seats} seats, {c.mode}, {c.response_seconds}s to answer, seed commitment {e.seed_commitment[:16]}…"


@summary.register
def _(e: SeatTaken) -> str:
    who = f"bot {e.player.bot}" if e.player.bot else e.player.name
    return f"seat {e.seat} taken by {who}{client_seed_note(e)}"


@summary.register
def _(e: ev.RoundDealt) -> str:
    return f"round {e.round}: seat {e.dealer} deals {e.hand_size} cards each"


@summary.register
def _(e: ev.TurnBegan) -> str:
    return f"turn {e.turn}: seat {e.seat}"


@summary.register
def _(e: ev.CardsDrawn) -> str:
    why = {"turn": "to fill the hand", "swap": "for the swap", "second_chance": "by Second Chance"}[e.reason]
    return f"seat {e.seat} draws {e.count} {why}"


@summary.register
def _(e: ev.DeckReshuffled) -> str:
    deck = "discard pile" if e.deck == "playing" else "Second Chance discards"
    return f"{deck} reshuffled into a new deck of {e.count} (reshuffle {e.reshuffle})"


@summary.register
def _(e: ev.MeterFed) -> str:
    return f"seat {e.seat} feeds the meter {e.minutes} minutes ({e.card}): meter {e.meter}"


@summary.register
def _(e: ev.ErrandRun) -> str:
    how = f"with Free Parking {e.free_parking}, no time deducted" if e.free_parking else f"meter {e.meter}"
    return f"seat {e.seat} runs a {e.value}-point errand ({e.card}), {how}: {e.points} points"


@summary.register
def _(e: ev.ThreeSwapped) -> str:
    return f"seat {e.seat} swaps three: discards {', '.join(e.cards)}"


@summary.register
def _(e: ev.CardDiscarded) -> str:
    return f"seat {e.seat} discards {e.card}"


@summary.register
def _(e: ev.TimeExpiresPlayed) -> str:
    return f"seat {e.seat} plays Time Expires ({e.card}) against seat {e.target}"


@summary.register
def _(e: ev.OfficerJonesPlayed) -> str:
    when = " out of turn" if e.out_of_turn else ""
    return f"seat {e.seat} plays Officer Jones ({e.card}){when} against seat {e.target}"


@summary.register
def _(e: ev.SecondChanceDrawn) -> str:
    return f"seat {e.seat} draws Second Chance {e.card}: {_EFFECTS[e.effect]}"


@summary.register
def _(e: ev.ResponseAwaited) -> str:
    return f"waiting for seat {e.seat} to accept or talk out of {e.card}"


@summary.register
def _(e: ev.ChoiceAwaited) -> str:
    return f"waiting for seat {e.seat} to choose a {e.choice} from {list(e.options)}"


@summary.register
def _(e: ev.TalkedOut) -> str:
    return f"seat {e.seat} talks their way out of it ({e.card}): {e.cancelled} cancelled"


@summary.register
def _(e: ev.Accepted) -> str:
    return f"seat {e.seat} accepts" + (" (deadline passed; the server accepted)" if e.by_server else "")


@summary.register
def _(e: ev.Chosen) -> str:
    how = {"seat": "", "timeout": " (deadline passed; server's default)", "only_option": " (the only option)"}[e.how]
    return f"seat {e.seat} chooses {e.choice} {e.value}{how}"


@summary.register
def _(e: ev.MeterSet) -> str:
    return f"seat {e.seat}'s meter goes to {e.meter} ({e.cause})"


@summary.register
def _(e: ev.PointCardsFanned) -> str:
    return f"seat {e.seat}'s {e.count} Point cards fanned face down"


@summary.register
def _(e: ev.PointCardMoved) -> str:
    where = "to the discard pile" if e.to is None else f"to seat {e.to}"
    return f"seat {e.seat}'s Point card {e.card} goes {where} ({e.cause})"


@summary.register
def _(e: ev.PlacesTraded) -> str:
    return f"the players at seats {e.seat} and {e.other} trade places"


@summary.register
def _(e: ev.ActionResolved) -> str:
    return f"{e.card} {'cancelled and ' if e.cancelled else ''}discarded"


@summary.register
def _(e: ev.TurnEnded) -> str:
    return f"seat {e.seat} ends the turn"


@summary.register
def _(e: ev.RoundEnded) -> str:
    scores = ", ".join(f"seat {i} +{score} = {total}" for i, (score, total) in enumerate(zip(e.scores, e.totals, strict=True)))
    return f"round {e.round} ends: seat {e.seat} reached 150 (+25 bonus); {scores}"


@summary.register
def _(e: ev.GameWon) -> str:
    return f"seat {e.seat} ({e.player.name}) wins with {e.points} points"


@summary.register
def _(e: GameClosed) -> str:
    return close.summary(e)


@summary.register
def _(e: SeedRevealed) -> str:
    return f"seed revealed: {e.seed}"


def secret_note(e: msgspec.Struct) -> str:
    """The hidden part in words, for a reader allowed to see it."""
    secret = getattr(e, "secret", None)
    if secret is None:
        return ""
    if isinstance(secret, ev.DealSecret):
        return "hands " + "; ".join(f"{i}: {' '.join(h)}" for i, h in enumerate(secret.hands))
    if isinstance(secret, ev.CardsSecret):
        return "cards " + " ".join(secret.cards)
    if isinstance(e, ev.DeckReshuffled) and e.deck == "second_chance":
        return "order " + " ".join(f"{c}({effect_of(c)})" for c in secret.order)
    return "order " + " ".join(getattr(secret, "order", ()))


def secret_seen_by(e: msgspec.Struct, seat: int) -> bool:
    """Whether ``seat`` was shown the whole of ``e``'s hidden part: only cards drawn into its own hand. A deal's
    secret holds every hand and both decks, a reshuffle a deck's order: no seat saw all of those, and a secret is
    kept whole or not at all (its digest covers all of it)."""
    return isinstance(e, ev.CardsDrawn) and e.seat == seat
