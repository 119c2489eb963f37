"""One line of plain words per event, for audit logs: what happened, never what was hidden.

The summary reads only an event's public part, so the same words serve every reader; a reader
allowed to see the secret gets it appended by the caller (``secret_note``).
"""

from __future__ import annotations

from functools import singledispatch

import msgspec

from service.events import free_parking as ev
from service.events.common import GameClosed, SeatTaken, SeedRevealed, TurnClockRestarted, TurnClockStopped

from .. import close
from ..clock import clock_words, restarted_words, stopped_words
from ..setup import client_seed_note
from ..words import Seats, Who, seat_words
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
def summary(e: msgspec.Struct, who: Who = seat_words) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


@summary.register
def _(e: ev.GameCreated, who: Who = seat_words) -> str:
    c = e.config
    terms = [f"{c.seats} seats", c.mode, f"{c.response_seconds}s to answer", clock_words(c)]
    return f"game created: {', '.join(filter(None, terms))}, seed commitment {e.seed_commitment[:16]}…"


@summary.register
def _(e: SeatTaken, who: Who = seat_words) -> str:
    taker = f"bot {e.player.bot}" if e.player.bot else e.player.name
    return f"{who(e.seat)} taken by {taker}{client_seed_note(e)}"


@summary.register
def _(e: ev.RoundDealt, who: Who = seat_words) -> str:
    return f"round {e.round}: {who(e.dealer)} deals {e.hand_size} cards each"


@summary.register
def _(e: ev.TurnBegan, who: Who = seat_words) -> str:
    return f"turn {e.turn}: {who(e.seat)}"


@summary.register
def _(e: ev.CardsDrawn, who: Who = seat_words) -> str:
    why = {"turn": "to fill the hand", "swap": "for the swap", "second_chance": "by Second Chance"}[e.reason]
    return f"{who(e.seat)} draws {e.count} {why}"


@summary.register
def _(e: ev.DeckReshuffled, who: Who = seat_words) -> str:
    deck = "discard pile" if e.deck == "playing" else "Second Chance discards"
    return f"{deck} reshuffled into a new deck of {e.count} (reshuffle {e.reshuffle})"


@summary.register
def _(e: ev.MeterFed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} feeds the meter {e.minutes} minutes ({e.card}): meter {e.meter}"


@summary.register
def _(e: ev.ErrandRun, who: Who = seat_words) -> str:
    how = f"with Free Parking {e.free_parking}, no time deducted" if e.free_parking else f"meter {e.meter}"
    return f"{who(e.seat)} runs a {e.value}-point errand ({e.card}), {how}: {e.points} points"


@summary.register
def _(e: ev.ThreeSwapped, who: Who = seat_words) -> str:
    return f"{who(e.seat)} swaps three: discards {', '.join(e.cards)}"


@summary.register
def _(e: ev.CardDiscarded, who: Who = seat_words) -> str:
    return f"{who(e.seat)} discards {e.card}"


@summary.register
def _(e: ev.TimeExpiresPlayed, who: Who = seat_words) -> str:
    return f"{who(e.seat)} plays Time Expires ({e.card}) against {who(e.target)}"


@summary.register
def _(e: ev.OfficerJonesPlayed, who: Who = seat_words) -> str:
    when = " out of turn" if e.out_of_turn else ""
    return f"{who(e.seat)} plays Officer Jones ({e.card}){when} against {who(e.target)}"


@summary.register
def _(e: ev.SecondChanceDrawn, who: Who = seat_words) -> str:
    return f"{who(e.seat)} draws Second Chance {e.card}: {_EFFECTS[e.effect]}"


@summary.register
def _(e: ev.ResponseAwaited, who: Who = seat_words) -> str:
    return f"waiting for {who(e.seat)} to accept or talk out of {e.card}"


@summary.register
def _(e: ev.ChoiceAwaited, who: Who = seat_words) -> str:
    return f"waiting for {who(e.seat)} to choose a {e.choice} from {list(e.options)}"


@summary.register
def _(e: ev.TalkedOut, who: Who = seat_words) -> str:
    return f"{who(e.seat)} talks their way out of it ({e.card}): {e.cancelled} cancelled"


@summary.register
def _(e: ev.Accepted, who: Who = seat_words) -> str:
    return f"{who(e.seat)} accepts" + (" (deadline passed; the server accepted)" if e.by_server else "")


@summary.register
def _(e: ev.Chosen, who: Who = seat_words) -> str:
    how = {"seat": "", "timeout": " (deadline passed; server's default)", "only_option": " (the only option)",
           "resigned": " (resigned; server's default)"}[e.how]
    return f"{who(e.seat)} chooses {e.choice} {e.value}{how}"


@summary.register
def _(e: ev.MeterSet, who: Who = seat_words) -> str:
    return f"{who(e.seat)}'s meter goes to {e.meter} ({e.cause})"


@summary.register
def _(e: ev.PointCardsFanned, who: Who = seat_words) -> str:
    return f"{who(e.seat)}'s {_point_cards(e.count)} fanned face down"


@summary.register
def _(e: ev.PointCardMoved, who: Who = seat_words) -> str:
    where = "to the discard pile" if e.to is None else f"to {who(e.to)}"
    return f"{who(e.seat)}'s Point card {e.card} goes {where} ({e.cause})"


@summary.register
def _(e: ev.PlacesTraded, who: Who = seat_words) -> str:
    return f"the players at seats {e.seat} and {e.other} trade places"


@summary.register
def _(e: ev.ActionResolved, who: Who = seat_words) -> str:
    return f"{e.card} {'cancelled and ' if e.cancelled else ''}discarded"


@summary.register
def _(e: ev.TurnEnded, who: Who = seat_words) -> str:
    return f"{who(e.seat)} ends the turn"


@summary.register
def _(e: ev.TurnTimedOut, who: Who = seat_words) -> str:
    played = f"discarded {e.card}, " if e.card else ""
    return f"time ran out: {who(e.seat)}'s turn played by the server ({played}missed turn {e.missed} in a row)"


@summary.register
def _(e: TurnClockStopped, who: Who = seat_words) -> str:
    return stopped_words(e, who(e.seat))


@summary.register
def _(e: TurnClockRestarted, who: Who = seat_words) -> str:
    return restarted_words(e, who(e.seat))


@summary.register
def _(e: ev.SeatForfeited, who: Who = seat_words) -> str:
    return f"{who(e.seat)} ({e.player.name}) forfeits after {e.missed} missed turns"


@summary.register
def _(e: ev.SeatResigned, who: Who = seat_words) -> str:
    return f"{who(e.seat)} ({e.player.name}) resigns"


@summary.register
def _(e: ev.RoundEnded, who: Who = seat_words) -> str:
    scores = ", ".join(f"{who(i)} +{score} = {total}" for i, (score, total) in enumerate(zip(e.scores, e.totals, strict=True)))
    return f"round {e.round} ends: {who(e.seat)} reached 150 (+25 bonus); {scores}"


@summary.register
def _(e: ev.GameWon, who: Who = seat_words) -> str:
    return f"{who(e.seat)} ({e.player.name}) wins with {e.points} points"


@summary.register
def _(e: GameClosed, who: Who = seat_words) -> str:
    return close.summary(e)


@summary.register
def _(e: SeedRevealed, who: Who = seat_words) -> str:
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


# --- the move log: players by name, each answer said with what it answered ---------------------------------------

_NAMES = {"M": "Feed the Meter", "P": "Point", "OJ": "Officer Jones", "TW": "Talk Your Way Out of It", "FP": "Free Parking",
          "TE": "Time Expires"}
_SHORT = {
    "take_point": "take a Point card, unseen", "give_point": "give a Point card", "lose_point": "lose a Point card",
    "trade_places": "trade places", "add_20": "+20 minutes", "add_40": "+40 minutes", "set_60": "meter to 60",
    "minus_20": "−20 minutes", "violation": "meter to Violation", "all_minus_20": "every opponent −20 minutes",
    "draw_2": "draw 2 playing cards",
}


def card_words(card_id: str) -> str:
    """A card as a player reads it: ``P30-2`` → ``Point 30``, ``SC-set_60-1`` → ``Second Chance “meter to 60”``."""
    if card_id.startswith("SC-"):
        effect = card_id[3:].rpartition("-")[0]
        return f"Second Chance “{_SHORT.get(effect, effect)}”"
    code = card_id.rpartition("-")[0]
    letters = code.rstrip("0123456789")
    kind = _NAMES.get(letters)
    if kind is None:
        return card_id
    return f"{kind} {code[len(letters):]}" if code[len(letters):] else kind


class Log:
    """The words of ``GET /games/{id}/log``: each player by name as they sat at that event, what each answer and each
    deadline decided, and on whose behalf. Reads the events' public parts only, so it never tells a hidden card."""

    def __init__(self) -> None:
        self.seats = Seats()
        self.awaited: dict[int, tuple[str, int]] = {}  # seat → (card, by) of the answer awaited from it
        self.by: dict[str, int] = {}  # an action card in play → who played or drew it
        self.choosing: dict[int, str] = {}  # seat → the choice awaited from it
        self.turn = ""  # the name of whoever began the turn

    def line(self, e: msgspec.Struct, following: list[msgspec.Struct], timed_out: bool = False) -> str:
        """``timed_out`` is not needed here: the events a deadline makes say so themselves (``by_server``, ``how``)."""
        text = self._line(e)
        if isinstance(e, ev.PlacesTraded):
            self.seats.trade(e.seat, e.other)
        self.seats.see(e)
        return text

    def _name(self, seat: int) -> str:
        return self.seats.name(seat)

    def _line(self, e: msgspec.Struct) -> str:  # noqa: C901, PLR0911, PLR0912 — one case per event kind
        n = self._name
        if isinstance(e, SeatTaken):
            bot = f" ({e.player.bot} bot)" if e.player.bot else ""
            return f"{e.player.name}{bot} takes seat {e.seat}"
        if isinstance(e, ev.RoundDealt):
            return f"round {e.round}: {n(e.dealer)} deals {e.hand_size} cards each"
        if isinstance(e, ev.TurnBegan):
            self.turn = n(e.seat)
            return f"turn {e.turn}: {n(e.seat)}'s turn"
        if isinstance(e, ev.CardsDrawn):
            why = {"turn": "to fill the hand", "swap": "for the swap", "second_chance": "by Second Chance"}[e.reason]
            return f"{n(e.seat)} draws {e.count} card{'s' if e.count != 1 else ''} {why}"
        if isinstance(e, ev.MeterFed):
            return f"{n(e.seat)} feeds the meter {e.minutes} minutes: meter {e.meter}"
        if isinstance(e, ev.ErrandRun):
            how = "with Free Parking, no time taken off" if e.free_parking else f"meter now {e.meter}"
            return f"{n(e.seat)} runs a {e.value}-point errand ({how}): {e.points} points"
        if isinstance(e, ev.ThreeSwapped):
            return f"{n(e.seat)} swaps three: discards {', '.join(map(card_words, e.cards))}"
        if isinstance(e, ev.CardDiscarded):
            return f"{n(e.seat)} discards {card_words(e.card)}"
        if isinstance(e, ev.TimeExpiresPlayed):
            self.by[e.card] = e.seat
            return f"{n(e.seat)} plays Time Expires on {n(e.target)}"
        if isinstance(e, ev.OfficerJonesPlayed):
            self.by[e.card] = e.seat
            return f"{n(e.seat)} plays Officer Jones on {n(e.target)}{' out of turn' if e.out_of_turn else ''}"
        if isinstance(e, ev.SecondChanceDrawn):
            self.by[e.card] = e.seat
            return f"{n(e.seat)} draws a Second Chance card: “{_EFFECTS[e.effect]}”"
        if isinstance(e, ev.ResponseAwaited):
            self.awaited[e.seat] = (e.card, e.by)
            return f"waiting for {n(e.seat)} to talk their way out of {self._action(e.card, e.by, e.seat)}, or accept"
        if isinstance(e, ev.ChoiceAwaited):
            self.choosing[e.seat] = e.choice
            return f"waiting for {n(e.seat)} to choose {self._options(e.choice, e.options)}"
        if isinstance(e, ev.TalkedOut):
            card, by = self.awaited.pop(e.seat, (e.cancelled, -1))
            return f"{n(e.seat)} talks their way out of {self._action(card, by, e.seat)}"
        if isinstance(e, ev.Accepted):
            card, by = self.awaited.pop(e.seat, ("", -1))
            what = f" {self._action(card, by, e.seat)}" if card else ""
            return f"time ran out: {n(e.seat)} accepted{what}" if e.by_server else f"{n(e.seat)} accepts{what}"
        if isinstance(e, ev.Chosen):
            value = self._value(e.choice, e.value)
            self.choosing.pop(e.seat, None)
            if e.how == "timeout":
                return f"time ran out: for {n(e.seat)}, the server chose {value}"
            if e.how == "only_option":
                return f"{n(e.seat)}'s only choice: {value}"
            if e.how == "resigned":
                return f"{n(e.seat)} resigned: the server chose {value} for them"
            return f"{n(e.seat)} chooses {value}"
        if isinstance(e, ev.MeterSet):
            return f"{n(e.seat)}'s meter goes to {e.meter if e.meter else '0 (Violation)'} ({card_words(e.cause)})"
        if isinstance(e, ev.PointCardsFanned):
            return f"{n(e.seat)}'s {_point_cards(e.count)} {'is' if e.count == 1 else 'are'} fanned face down"
        if isinstance(e, ev.PointCardMoved):
            where = "to the discard pile" if e.to is None else f"to {n(e.to)}"
            return f"{n(e.seat)}'s {card_words(e.card)} goes {where} ({card_words(e.cause)})"
        if isinstance(e, ev.PlacesTraded):
            return f"{n(e.seat)} and {n(e.other)} trade places: {n(e.seat)} now sits at seat {e.other}, {n(e.other)} at seat {e.seat}"
        if isinstance(e, ev.ActionResolved):
            self.by.pop(e.card, None)
            return f"{card_words(e.card)} {'cancelled' if e.cancelled else 'done'}"
        if isinstance(e, ev.TurnEnded):  # whoever began it: a trade of places may have seated another there since
            return f"{self.turn or n(e.seat)} ends the turn"
        if isinstance(e, ev.TurnTimedOut):
            missed = f"{e.missed} missed turn{'s' if e.missed != 1 else ''} in a row"
            if e.card is None:
                return f"time ran out on {n(e.seat)}'s turn ({missed})"
            return f"time ran out: {n(e.seat)}'s turn was played for them: discarded {card_words(e.card)} ({missed})"
        if isinstance(e, ev.SeatForfeited):
            return f"{n(e.seat)} forfeits after {e.missed} missed turns"
        if isinstance(e, ev.SeatResigned):
            return f"{n(e.seat)} resigns"
        if isinstance(e, ev.GameWon):
            return f"{n(e.seat)} wins with {e.points} points"
        return summary(e, n)

    def _action(self, card: str, by: int, seat: int | None = None) -> str:
        """An action card and who played it: ``Time Expires from Ann``, ``their own Second Chance “…”``."""
        words = card_words(card) if card else "it"
        if by == seat:
            return f"their own {words}"
        return f"{words} from {self._name(by)}" if by >= 0 else words

    def _value(self, choice: str, value: int | str) -> str:
        if choice == "target":
            return self._name(int(value))
        if choice == "position":
            return f"position {value}"
        return card_words(str(value))

    def _options(self, choice: str, options: tuple[int | str, ...]) -> str:
        if choice == "position":
            return f"a face-down position (0–{len(options) - 1})"
        return f"a {choice}: " + ", ".join(self._value(choice, o) for o in options)

    def notice(self, e: msgspec.Struct, me: int) -> str | None:
        """What ``e`` did to the player at seat ``me`` (as they sat before it), in words to them; ``None``: nothing."""
        n = self._name
        if isinstance(e, ev.MeterSet) and e.seat == me and e.meter == 0:
            by = self.by.get(e.cause)
            whose = f"{n(by)}'s " if by is not None and by != me else ""
            return f"Your meter was set to 0 (Violation): {whose}{card_words(e.cause)}"
        if isinstance(e, ev.PointCardMoved) and e.seat == me and e.to != me:
            by = self.by.get(e.cause)
            if by == me and e.to is None:  # a card the player drew made them lose one: their own doing, in the log
                return None
            card = card_words(e.card)
            cause = f"your own {card_words(e.cause)}" if by == me else self._action(e.cause, -1 if by is None else by)
            if e.to is None:
                return f"Your {card} went to the discard pile ({cause})"
            if e.to == by:
                return f"{n(e.to)} took your {card} ({cause})"
            return f"You gave {n(e.to)} your {card} ({cause})"
        if isinstance(e, ev.PlacesTraded) and me in (e.seat, e.other):
            other = e.other if me == e.seat else e.seat
            return f"You traded places with {n(other)}: you now sit at seat {other}"
        return None


def _point_cards(count: int) -> str:
    """"1 Point card", "3 Point cards": a count in the move log's words reads as a person would say it."""
    return f"{count} Point card{'s' if count != 1 else ''}"
